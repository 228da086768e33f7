package paykit_test

import (
	"context"
	"testing"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/answertest"
	"github.com/paykit/paykit/internal/validated"
	"github.com/paykit/paykit/keyring"
	"github.com/paykit/paykit/paykittest"
)

// A Service called directly (not through httpadapter, which refuses them
// first) also refuses strings that are not text, a NUL character or
// invalid UTF-8, before they reach the Store: on PostgreSQL, which cannot
// store NUL, they would otherwise be internal errors.
func TestServiceRefusesBadText(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	store := paykittest.OpenStore(t, paykittest.Postgres)
	svc, err := paykit.New(paykit.Config{
		Store: store, Routing: thPayoutRouting(), Providers: map[string]paykit.Provider{"fake": newFakeBank()},
		PublicURL: "https://pay.example", SigningKey: []byte("text-tests-signing-key-32-bytes!"), AccountKeys: keyring.Random(),
	})
	is.NoErr(err)
	m, err := svc.CreateMerchant(ctx, "ops", "Kedai")
	is.NoErr(err)
	key, err := svc.CreateAPIKey(ctx, "ops", m.ID, paykit.Test)
	is.NoErr(err)
	p := paykit.Principal{Scope: paykit.Scope{MerchantID: m.ID, Environment: paykit.Test}, KeyID: key.ID}

	for _, b := range []struct{ name, s string }{{"NUL", "a\x00b"}, {"invalid UTF-8", "a\xffb"}} {
		bad := b.s
		cases := []struct {
			name, code, param string
			call              func() error
		}{
			{"merchant name", paykit.CodeInvalidRequest, "name", func() error {
				_, err := svc.CreateMerchant(ctx, "ops", "Kedai "+bad)
				return err
			}},
			{"public key", paykit.CodeUnauthorized, "", func() error {
				_, err := svc.Authenticate(ctx, key.PublicKey+bad, key.SecretKey)
				return err
			}},
			{"secret key", paykit.CodeUnauthorized, "", func() error {
				_, err := svc.Authenticate(ctx, key.PublicKey, key.SecretKey+bad)
				return err
			}},
			{"customer value", paykit.CodeInvalidRequest, "customer.name", func() error {
				req := fpx(1500, "ref-value")
				req.Customer["name"] = bad
				_, err := answertest.From(svc.CreatePaymentIntent(ctx, p, "k-value", req))
				return err
			}},
			{"customer key", paykit.CodeInvalidRequest, "customer", func() error {
				req := fpx(1500, "ref-key")
				req.Customer[bad] = "x"
				_, err := answertest.From(svc.CreatePaymentIntent(ctx, p, "k-key", req))
				return err
			}},
			{"merchant_reference", paykit.CodeInvalidRequest, "merchant_reference", func() error {
				_, err := answertest.From(svc.CreatePaymentIntent(ctx, p, "k-ref", fpx(1500, bad)))
				return err
			}},
			{"recipient", paykit.CodeInvalidRequest, "recipient.holder_name", func() error {
				req := thPayout(1500, "po-1", "000123456789")
				req.Recipient.HolderName = bad
				_, err := answertest.From(svc.CreatePayoutIntent(ctx, p, "k-po", req))
				return err
			}},
			{"list filter", paykit.CodeInvalidRequest, "merchant_reference", func() error {
				_, err := svc.ListPaymentIntents(ctx, p, paykit.ListParams[paykit.PaymentStatus]{MerchantReference: bad})
				return err
			}},
		}
		for _, c := range cases {
			t.Run(b.name+"/"+c.name, func(t *testing.T) {
				is := is.New(t)
				e := paykit.AsError(c.call())
				is.True(e != nil)
				is.Equal(e.Code, c.code)
				is.Equal(e.Param, c.param)
			})
		}
	}
}

// Validate names a bad string by its JSON path, wherever it is.
func TestValidateRefusesBadText(t *testing.T) {
	t.Parallel()
	type item struct {
		Name string `json:"name"`
	}
	type request struct {
		Items []item          `json:"items"`
		Meta  map[string]any  `json:"metadata"`
		Ptr   *string         `json:"note"`
		Raw   []byte          `json:"raw"`
		Tags  map[string]bool `json:"tags"`
	}
	bad := "a\x00b"
	for _, c := range []struct {
		name  string
		req   request
		param string
	}{
		{"good", request{Items: []item{{"x"}}, Meta: map[string]any{"k": "v"}, Ptr: new("n"), Raw: []byte{0, 0xff}}, ""},
		{"slice element", request{Items: []item{{"x"}, {bad}}}, "items.1.name"},
		{"map value", request{Meta: map[string]any{"k": []any{"v", bad}}}, "metadata.k.1"},
		{"map key", request{Tags: map[string]bool{bad: true}}, "tags"},
		{"pointer", request{Ptr: new("\xff")}, "note"},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			err := validated.Check(&c.req)
			if c.param == "" {
				is.NoErr(err)
				return
			}
			is.Equal(paykit.ErrorCode(err), paykit.CodeInvalidRequest)
			is.Equal(paykit.AsError(err).Param, c.param)
		})
	}
}

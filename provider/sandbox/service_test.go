package sandbox_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/answertest"
	"github.com/paykit/paykit/provider/sandbox"
	"github.com/paykit/paykit/store/memory"
)

// newService wires the real paykit.Service to the adapter, sharing the
// PSP's manual clock, and returns a test-environment principal.
func newService(t *testing.T, e *env) (*paykit.Service, paykit.Principal) {
	t.Helper()
	ctx := context.Background()
	svc, err := paykit.New(paykit.Config{
		Store: memory.New(), Now: e.clock.Now, Routing: sandbox.DefaultRouting(),
		Providers: map[string]paykit.Provider{sandbox.Name: e.prov},
		PublicURL: "https://pay.example", SigningKey: []byte("sandbox-test-signing-key"),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	m, err := svc.CreateMerchant(ctx, "ops:test", "Kedai Kopi")
	if err != nil {
		t.Fatal(err)
	}
	key, err := svc.CreateAPIKey(ctx, "ops:test", m.ID, paykit.Test)
	if err != nil {
		t.Fatal(err)
	}
	p, err := svc.Authenticate(ctx, key.PublicKey, key.SecretKey)
	if err != nil {
		t.Fatal(err)
	}
	return svc, p
}

func drain(t *testing.T, svc *paykit.Service) {
	t.Helper()
	for range 20 {
		n, err := svc.ProcessDue(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
	}
}

func createIntent(t *testing.T, svc *paykit.Service, p paykit.Principal, key string, req paykit.CreatePaymentIntentRequest) (int, map[string]any) {
	t.Helper()
	resp, err := answertest.From(svc.CreatePaymentIntent(context.Background(), p, key, req))
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	if err := json.Unmarshal(resp.Body, &body); err != nil {
		t.Fatal(err)
	}
	return resp.Status, body
}

func TestServiceRecoversTimedOutPayment(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	e := newEnv(t)
	svc, p := newService(t, e)
	status, body := createIntent(t, svc, p, "idem-902", paykit.CreatePaymentIntentRequest{
		Amount: 10902, Currency: "MYR", Country: "MY", MerchantReference: "order-902", PaymentMethod: "TNG",
		Customer: map[string]string{"name": "Aisyah"},
	})
	is.Equal(status, 201)
	is.Equal(body["status"], "processing")
	id := body["id"].(string)
	is.Equal(e.psp.CreateCalls(id), 1) // the attempt key is the intent id

	drain(t, svc) // before Delay the PSP still says pending
	pi, err := svc.GetPaymentIntent(ctx, p, id)
	is.NoErr(err)
	is.Equal(pi.Status, paykit.PaymentProcessing)

	e.clock.Advance(testDelay + time.Minute) // past the PSP's settlement and the job's backoff
	drain(t, svc)
	pi, err = svc.GetPaymentIntent(ctx, p, id)
	is.NoErr(err)
	is.Equal(pi.Status, paykit.PaymentSucceeded)
	is.True(pi.Receipt != nil)
	is.Equal(e.psp.CreateCalls(id), 1) // recovered by inquiry, never sent twice
	is.Equal(e.psp.PaymentCount(), 1)
}

func TestServiceWithPayerAndQR(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	e := newEnv(t)
	svc, p := newService(t, e)

	status, body := createIntent(t, svc, p, "idem-fpx", paykit.CreatePaymentIntentRequest{
		Amount: 15000, Currency: "MYR", Country: "MY", MerchantReference: "order-fpx", PaymentMethod: "FPX",
		Customer: map[string]string{"name": "Aisyah", "email": "aisyah@example.com"}, PaymentMethodOptions: map[string]string{"bank": "MAYBANK"},
		ReturnURL: "https://shop.example/done",
	})
	is.Equal(status, 201)
	is.Equal(body["status"], "requires_action")
	na := body["next_action"].(map[string]any)
	is.True(strings.HasPrefix(na["url"].(string), "https://pay.example/pay/continue/")) // never the PSP's URL
	pi, err := svc.SimulatePayer(ctx, p, body["id"].(string), true)
	is.NoErr(err)
	is.Equal(pi.Status, paykit.PaymentSucceeded)

	_, body = createIntent(t, svc, p, "idem-qr", paykit.CreatePaymentIntentRequest{
		Amount: 2500, Currency: "THB", Country: "TH", MerchantReference: "order-qr", PaymentMethod: "PROMPTPAY",
		Customer: map[string]string{"name": "Somchai"},
	})
	is.Equal(body["status"], "requires_action")
	na = body["next_action"].(map[string]any)
	is.Equal(na["type"], "display_qr_code")
	is.True(strings.Contains(na["qr_data"].(string), "540525.00"))
	pi, err = svc.SimulatePayer(ctx, p, body["id"].(string), false)
	is.NoErr(err)
	is.Equal(pi.Status, paykit.PaymentFailed)
	is.Equal(pi.FailureCode, paykit.FailureProviderDeclined)

	_, body = createIntent(t, svc, p, "idem-901", paykit.CreatePaymentIntentRequest{
		Amount: 901, Currency: "MYR", Country: "MY", MerchantReference: "order-901", PaymentMethod: "BOOST",
		Customer: map[string]string{"name": "Aisyah"},
	})
	is.Equal(body["status"], "failed")
	is.Equal(body["failure_code"], "provider_declined")
}

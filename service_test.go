package paykit_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/newid"
	"github.com/paykit/paykit/store/memory"
)

func newService(t *testing.T) (*paykit.Service, *paykit.ManualClock) {
	t.Helper()
	clock := paykit.NewManualClock(time.Date(2026, 1, 2, 3, 4, 5, 678_901_234, time.UTC))
	svc, err := paykit.New(paykit.Config{Store: memory.New(), Now: clock.Now, NewID: newid.Sequential(), SigningKey: []byte("test-signing-key")})
	if err != nil {
		t.Fatal(err)
	}
	return svc, clock
}

func TestNewRequiresStore(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	_, err := paykit.New(paykit.Config{})
	is.True(err != nil)
}

func TestServiceTimeIsUTCMilliseconds(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	svc, _ := newService(t)
	is.Equal(svc.Now(), time.Date(2026, 1, 2, 3, 4, 5, 678_000_000, time.UTC))
}

func TestAPIKeyIssuanceAndAuthentication(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	svc, _ := newService(t)
	m, err := svc.CreateMerchant(ctx, "ops:alice", "Kedai Kopi")
	is.NoErr(err)
	test, err := svc.CreateAPIKey(ctx, "ops:alice", m.ID, paykit.Test)
	is.NoErr(err)
	live, err := svc.CreateAPIKey(ctx, "ops:alice", m.ID, paykit.Live)
	is.NoErr(err)

	is.True(strings.HasPrefix(test.PublicKey, "pk_test_"))
	is.True(strings.HasPrefix(test.SecretKey, "sk_test_"))
	is.True(strings.HasPrefix(live.PublicKey, "pk_live_"))
	is.True(strings.HasPrefix(live.SecretKey, "sk_live_"))
	is.True(len(test.SecretKey)-len("sk_test_") >= 32) // at least 24 random bytes, encoded

	// Only a hash of the secret is stored.
	stored, err := svc.Store().GetAPIKey(ctx, test.ID)
	is.NoErr(err)
	is.True(stored.SecretHash != "" && !strings.Contains(stored.SecretHash, test.SecretKey[8:]))
	is.Equal(stored.SecretLast4, test.SecretKey[len(test.SecretKey)-4:])

	p, err := svc.Authenticate(ctx, test.PublicKey, test.SecretKey)
	is.NoErr(err)
	is.Equal(p, paykit.Principal{Scope: paykit.Scope{MerchantID: m.ID, Environment: paykit.Test}, KeyID: test.ID})
	p, err = svc.Authenticate(ctx, live.PublicKey, live.SecretKey)
	is.NoErr(err)
	is.Equal(p.Environment, paykit.Live)

	other, err := svc.CreateAPIKey(ctx, "ops:alice", m.ID, paykit.Test)
	is.NoErr(err)
	for name, pair := range map[string][2]string{
		"wrong secret":          {test.PublicKey, test.SecretKey + "x"},
		"secret of another key": {test.PublicKey, other.SecretKey},
		"env mismatch":          {test.PublicKey, live.SecretKey},
		"live pk test sk":       {live.PublicKey, test.SecretKey},
		"unknown public key":    {"pk_test_nosuchkey", test.SecretKey},
		"secret as public":      {test.SecretKey, test.SecretKey},
		"empty":                 {"", ""},
		"bare prefixes":         {"pk_test_", "sk_test_"},
	} {
		_, err := svc.Authenticate(ctx, pair[0], pair[1])
		if paykit.ErrorCode(err) != paykit.CodeUnauthorized || paykit.AsError(err).Message != "Invalid or missing API credentials." {
			t.Errorf("%s: got %v, want 401 unauthorized", name, err)
		}
	}

	_, err = svc.RevokeAPIKey(ctx, "ops:bob", test.ID)
	is.NoErr(err)
	_, err = svc.Authenticate(ctx, test.PublicKey, test.SecretKey)
	is.Equal(paykit.ErrorCode(err), paykit.CodeUnauthorized)
	_, err = svc.Authenticate(ctx, other.PublicKey, other.SecretKey)
	is.NoErr(err) // other keys keep working
	revoked, err := svc.RevokeAPIKey(ctx, "ops:bob", test.ID)
	is.NoErr(err) // revoking twice is harmless
	is.True(revoked.RevokedAt != nil)

	_, err = svc.CreateAPIKey(ctx, "ops", "mch_nope", paykit.Test)
	is.Equal(paykit.ErrorCode(err), paykit.CodeNotFound)
	_, err = svc.CreateAPIKey(ctx, "ops", m.ID, "staging")
	is.Equal(paykit.AsError(err).Param, "environment")
	_, err = svc.RevokeAPIKey(ctx, "ops", "key_nope")
	is.Equal(paykit.ErrorCode(err), paykit.CodeNotFound)
}

func TestOperatorActionsAreAudited(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	svc, clock := newService(t)
	m, err := svc.CreateMerchant(ctx, "ops:alice", "Kedai")
	is.NoErr(err)
	clock.Advance(time.Second)
	k, err := svc.CreateAPIKey(ctx, "ops:alice", m.ID, paykit.Live)
	is.NoErr(err)
	clock.Advance(time.Second)
	_, err = svc.RevokeAPIKey(ctx, "ops:bob", k.ID)
	is.NoErr(err)
	_, err = svc.RevokeAPIKey(ctx, "ops:bob", k.ID) // no change, no event
	is.NoErr(err)

	page, err := svc.ListAuditEvents(ctx, paykit.AuditListParams{})
	is.NoErr(err)
	is.Equal(len(page.Data), 3)
	is.True(!page.HasMore)
	rev, key, mch := page.Data[0], page.Data[1], page.Data[2]
	is.Equal([]string{rev.Action, rev.Actor, rev.TargetID}, []string{"api_key.revoke", "ops:bob", k.ID})
	is.Equal([]string{key.Action, key.Actor, key.TargetID, string(key.Environment)}, []string{"api_key.create", "ops:alice", k.ID, "live"})
	is.Equal([]string{mch.Action, mch.Actor, mch.TargetID}, []string{"merchant.create", "ops:alice", m.ID})
	is.Equal(rev.CreatedAt.Sub(mch.CreatedAt), 2*time.Second)

	_, err = svc.CreateMerchant(ctx, "ops", "  ")
	is.Equal(paykit.AsError(err).Param, "name")
}

// TestEnsureMerchant: a host's own merchant id is created once, audited
// once, however many callers race; bad ids and names change nothing.
func TestEnsureMerchant(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	svc, _ := newService(t)
	var wg sync.WaitGroup
	var createdN atomic.Int32
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m, created, err := svc.EnsureMerchant(ctx, "setup", "demo_merchant", "Demo")
			if err != nil || m.ID != "demo_merchant" || m.Name != "Demo" {
				t.Errorf("EnsureMerchant = %+v, %v", m, err)
			}
			if created {
				createdN.Add(1)
			}
		}()
	}
	wg.Wait()
	is.Equal(createdN.Load(), int32(1))
	page, err := svc.ListAuditEvents(ctx, paykit.AuditListParams{})
	is.NoErr(err)
	is.Equal(len(page.Data), 1)
	is.Equal([]string{page.Data[0].Action, page.Data[0].Actor, page.Data[0].TargetID}, []string{"merchant.create", "setup", "demo_merchant"})

	_, _, err = svc.EnsureMerchant(ctx, "setup", "bad id", "Demo")
	is.Equal(paykit.AsError(err).Param, "id")
	_, _, err = svc.EnsureMerchant(ctx, "setup", "other", " ")
	is.Equal(paykit.AsError(err).Param, "name")
	_, err = svc.GetMerchant(ctx, "other")
	is.Equal(paykit.ErrorCode(err), paykit.CodeNotFound)
}

func TestListCursorIsTamperEvident(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	svc, clock := newService(t)
	for range 5 {
		_, err := svc.CreateMerchant(ctx, "ops", "M")
		is.NoErr(err)
		clock.Advance(time.Millisecond)
	}
	first, err := svc.ListAuditEvents(ctx, paykit.AuditListParams{PageParams: paykit.PageParams{Limit: 2}})
	is.NoErr(err)
	is.True(first.HasMore)
	is.True(first.NextCursor != "")
	second, err := svc.ListAuditEvents(ctx, paykit.AuditListParams{PageParams: paykit.PageParams{Limit: 2, Cursor: first.NextCursor}})
	is.NoErr(err)
	is.Equal(second.Data[0].TargetID, "mch_000005") // merchants 9 and 7 were on page one
	third, err := svc.ListAuditEvents(ctx, paykit.AuditListParams{PageParams: paykit.PageParams{Limit: 2, Cursor: second.NextCursor}})
	is.NoErr(err)
	is.Equal(len(third.Data), 1)
	is.True(!third.HasMore)
	is.Equal(third.NextCursor, "")

	cur := first.NextCursor
	flip := "A"
	if strings.HasSuffix(cur, "A") {
		flip = "B"
	}
	tampered := cur[:len(cur)-1] + flip
	for _, bad := range []string{"x", "abc.def", tampered, strings.Replace(cur, ".", "", 1)} {
		_, err := svc.ListAuditEvents(ctx, paykit.AuditListParams{PageParams: paykit.PageParams{Cursor: bad}})
		e := paykit.AsError(err)
		is.Equal(e.Code, paykit.CodeInvalidRequest)
		is.Equal(e.Param, "cursor")
	}
	// A cursor of one list is not valid for another.
	_, err = svc.ListPaymentIntents(ctx, paykit.Principal{}, paykit.ListParams[paykit.PaymentStatus]{PageParams: paykit.PageParams{Cursor: cur}})
	is.Equal(paykit.AsError(err).Param, "cursor")
	for _, limit := range []int{-1, 101} {
		_, err = svc.ListAuditEvents(ctx, paykit.AuditListParams{PageParams: paykit.PageParams{Limit: limit}})
		is.Equal(paykit.AsError(err).Param, "limit")
	}
}

func TestErrorMapping(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	is.Equal(paykit.AsError(errors.New("db exploded")).Code, paykit.CodeInternal)
	is.Equal(paykit.AsError(errors.New("db exploded")).Message, "An internal error occurred.")
	wrapped := errors.Join(&paykit.Error{Code: paykit.CodeInvalidState, Message: "no"})
	is.Equal(paykit.ErrorCode(wrapped), paykit.CodeInvalidState)
	is.Equal(paykit.ErrorCode(nil), "")
}

package paykit_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/store/memory"
)

// keyReads counts the Store's reads of API keys by public key.
type keyReads struct {
	paykit.Store
	n atomic.Int64
}

func (s *keyReads) GetAPIKeyByPublicKey(ctx context.Context, publicKey string) (*paykit.APIKey, error) {
	s.n.Add(1)
	return s.Store.GetAPIKeyByPublicKey(ctx, publicKey)
}

func TestAPIKeyCache(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	store := &keyReads{Store: memory.New()}
	clock := paykit.NewManualClock(time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC))
	svc, err := paykit.New(paykit.Config{Store: store, Now: clock.Now, APIKeyCacheTTL: 5 * time.Second})
	is.NoErr(err)
	m, err := svc.CreateMerchant(ctx, "ops", "Kedai")
	is.NoErr(err)
	mine, err := svc.CreateAPIKey(ctx, "ops", m.ID, paykit.Test)
	is.NoErr(err)
	other, err := svc.CreateAPIKey(ctx, "ops", m.ID, paykit.Test)
	is.NoErr(err)
	auth := func(k *paykit.NewAPIKey, secret string) error {
		_, err := svc.Authenticate(ctx, k.PublicKey, secret)
		return err
	}

	// Read once, then served from the cache within the TTL; a wrong secret
	// is refused from the cache too.
	for range 3 {
		is.NoErr(auth(mine, mine.SecretKey))
	}
	is.Equal(store.n.Load(), int64(1))
	is.True(auth(mine, other.SecretKey) != nil)
	is.Equal(store.n.Load(), int64(1))
	clock.Advance(5 * time.Second)
	is.NoErr(auth(mine, mine.SecretKey))
	is.Equal(store.n.Load(), int64(2)) // expired: read again

	// Revoked through this Service: refused at once.
	_, err = svc.RevokeAPIKey(ctx, "ops", mine.ID)
	is.NoErr(err)
	is.True(auth(mine, mine.SecretKey) != nil)

	// Revoked through another instance (straight in the Store): refused
	// here once the cached copy expires.
	is.NoErr(auth(other, other.SecretKey))
	k, err := store.GetAPIKey(ctx, other.ID)
	is.NoErr(err)
	now := clock.Now()
	k.RevokedAt = &now
	is.NoErr(store.UpdateAPIKey(ctx, k))
	is.NoErr(auth(other, other.SecretKey)) // still cached
	clock.Advance(5 * time.Second)
	is.True(auth(other, other.SecretKey) != nil)

	// Unknown keys are never kept: each one is read.
	before := store.n.Load()
	is.True(auth(&paykit.NewAPIKey{APIKey: paykit.APIKey{PublicKey: "pk_test_nope"}}, "sk_test_nope") != nil)
	is.True(auth(&paykit.NewAPIKey{APIKey: paykit.APIKey{PublicKey: "pk_test_nope"}}, "sk_test_nope") != nil)
	is.Equal(store.n.Load(), before+2)
}

func TestAPIKeyCacheOff(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	store := &keyReads{Store: memory.New()}
	svc, err := paykit.New(paykit.Config{Store: store, APIKeyCacheTTL: -1})
	is.NoErr(err)
	m, err := svc.CreateMerchant(ctx, "ops", "Kedai")
	is.NoErr(err)
	k, err := svc.CreateAPIKey(ctx, "ops", m.ID, paykit.Test)
	is.NoErr(err)
	for range 3 {
		_, err := svc.Authenticate(ctx, k.PublicKey, k.SecretKey)
		is.NoErr(err)
	}
	is.Equal(store.n.Load(), int64(3))
}

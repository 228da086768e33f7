package paykit_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/store/memory"
)

// exampleStart is the time of the examples that stand on a ManualClock.
var exampleStart = time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)

// bareService is the smallest Service: the memory Store, no Provider. The
// examples of merchants, keys and host jobs need nothing more.
func bareService(cfg paykit.Config) *paykit.Service {
	cfg.Store = memory.New()
	svc, err := paykit.New(cfg)
	if err != nil {
		panic(err)
	}
	return svc
}

// An operator creates a merchant by name; the Service makes its id.
func ExampleService_CreateMerchant() {
	svc := bareService(paykit.Config{})
	ctx := context.Background()

	m, err := svc.CreateMerchant(ctx, "ops:alice", "Kedai Kopi")
	if err != nil {
		panic(err)
	}
	fmt.Println(m.Name, strings.HasPrefix(m.ID, "mch_"))

	_, err = svc.CreateMerchant(ctx, "ops:alice", "")
	fmt.Println(paykit.ErrorCode(err))
	// Output:
	// Kedai Kopi true
	// invalid_request
}

// A host that keeps its own merchant ids ensures the merchant at every
// start: the first call creates it, later ones find it unchanged.
func ExampleService_EnsureMerchant() {
	svc := bareService(paykit.Config{})
	ctx := context.Background()

	m, created, err := svc.EnsureMerchant(ctx, "ops", "shop-42", "Kedai Kopi")
	if err != nil {
		panic(err)
	}
	fmt.Println(m.ID, m.Name, created)

	m, created, _ = svc.EnsureMerchant(ctx, "ops", "shop-42", "Kedai Kopi")
	fmt.Println(m.ID, created)

	_, _, err = svc.EnsureMerchant(ctx, "ops", "shop 42", "Kedai Kopi")
	fmt.Println(paykit.ErrorCode(err))
	// Output:
	// shop-42 Kedai Kopi true
	// shop-42 false
	// invalid_request
}

func ExampleService_GetMerchant() {
	svc := bareService(paykit.Config{})
	ctx := context.Background()
	created, _ := svc.CreateMerchant(ctx, "ops", "Kedai Kopi")

	m, err := svc.GetMerchant(ctx, created.ID)
	fmt.Println(m.Name, m.CreatedAt.Equal(created.CreatedAt), err)

	_, err = svc.GetMerchant(ctx, "mch_unknown")
	fmt.Println(paykit.ErrorCode(err))
	// Output:
	// Kedai Kopi true <nil>
	// not_found
}

// Merchants are listed newest first, a page at a time; NextCursor asks
// for the next page.
func ExampleService_ListMerchants() {
	svc := bareService(paykit.Config{})
	ctx := context.Background()
	for _, name := range []string{"Kedai Kopi", "Roti Bakar", "Teh Tarik"} {
		if _, err := svc.CreateMerchant(ctx, "ops", name); err != nil {
			panic(err)
		}
	}

	page, err := svc.ListMerchants(ctx, paykit.PageParams{Limit: 2})
	if err != nil {
		panic(err)
	}
	fmt.Println(page.Data[0].Name, "|", page.Data[1].Name, "| more:", page.HasMore)

	page, _ = svc.ListMerchants(ctx, paykit.PageParams{Limit: 2, Cursor: page.NextCursor})
	fmt.Println(page.Data[0].Name, "| more:", page.HasMore)
	// Output:
	// Teh Tarik | Roti Bakar | more: true
	// Kedai Kopi | more: false
}

// A key pair fixes its environment by prefix; the secret is shown once,
// and the Service keeps only its hash and last four characters.
func ExampleService_CreateAPIKey() {
	svc := bareService(paykit.Config{})
	ctx := context.Background()
	m, _ := svc.CreateMerchant(ctx, "ops", "Kedai Kopi")

	key, err := svc.CreateAPIKey(ctx, "ops", m.ID, paykit.Live)
	if err != nil {
		panic(err)
	}
	fmt.Println(key.Environment,
		strings.HasPrefix(key.PublicKey, "pk_live_"),
		strings.HasPrefix(key.SecretKey, "sk_live_"),
		strings.HasSuffix(key.SecretKey, key.SecretLast4))

	p, _ := svc.Authenticate(ctx, key.PublicKey, key.SecretKey)
	fmt.Println(p.MerchantID == m.ID, p.Environment)
	// Output:
	// live true true true
	// true live
}

// The key list shows no secrets; a revoked key stays listed.
func ExampleService_ListAPIKeys() {
	svc := bareService(paykit.Config{})
	ctx := context.Background()
	m, _ := svc.CreateMerchant(ctx, "ops", "Kedai Kopi")
	test, _ := svc.CreateAPIKey(ctx, "ops", m.ID, paykit.Test)
	if _, err := svc.CreateAPIKey(ctx, "ops", m.ID, paykit.Live); err != nil {
		panic(err)
	}
	if _, err := svc.RevokeAPIKey(ctx, "ops", test.ID); err != nil {
		panic(err)
	}

	keys, err := svc.ListAPIKeys(ctx, m.ID)
	if err != nil {
		panic(err)
	}
	for _, k := range keys {
		fmt.Println(k.Environment, "revoked:", k.RevokedAt != nil, "secret hashed:", len(k.SecretHash) == 64)
	}
	// Output:
	// live revoked: false secret hashed: true
	// test revoked: true secret hashed: true
}

// A revoked key is refused at once; revoking it again changes nothing.
func ExampleService_RevokeAPIKey() {
	svc := bareService(paykit.Config{})
	ctx := context.Background()
	m, _ := svc.CreateMerchant(ctx, "ops", "Kedai Kopi")
	key, _ := svc.CreateAPIKey(ctx, "ops", m.ID, paykit.Test)

	revoked, err := svc.RevokeAPIKey(ctx, "ops:alice", key.ID)
	if err != nil {
		panic(err)
	}
	_, err = svc.Authenticate(ctx, key.PublicKey, key.SecretKey)
	fmt.Println(revoked.RevokedAt != nil, paykit.ErrorCode(err))

	again, _ := svc.RevokeAPIKey(ctx, "ops:alice", key.ID)
	fmt.Println(again.RevokedAt.Equal(*revoked.RevokedAt))
	// Output:
	// true unauthorized
	// true
}

// Authenticate turns the key pair of a request into the Principal every
// merchant call takes; every failure is the same error.
func ExampleService_Authenticate() {
	svc := bareService(paykit.Config{})
	ctx := context.Background()
	m, _ := svc.CreateMerchant(ctx, "ops", "Kedai Kopi")
	key, _ := svc.CreateAPIKey(ctx, "ops", m.ID, paykit.Test)

	p, err := svc.Authenticate(ctx, key.PublicKey, key.SecretKey)
	fmt.Println(p.MerchantID == m.ID, p.Environment, p.KeyID == key.ID, err)

	for _, secret := range []string{key.SecretKey + "x", "sk_live_" + key.SecretKey[len("sk_test_"):], ""} {
		_, err = svc.Authenticate(ctx, key.PublicKey, secret)
		fmt.Println(paykit.ErrorCode(err))
	}
	// Output:
	// true test true <nil>
	// unauthorized
	// unauthorized
	// unauthorized
}

// A host's health check: Ping fails when the Store does not answer or
// refuses writes.
func ExampleService_Ping() {
	svc := bareService(paykit.Config{})
	fmt.Println(svc.Ping(context.Background()))
	// Output: <nil>
}

// Now is the Service's clock (Config.Now) in UTC at the contract's
// millisecond precision.
func ExampleService_Now() {
	bangkok := time.FixedZone("ICT", 7*3600)
	clock := paykit.NewManualClock(time.Date(2026, 6, 1, 15, 0, 0, 123456789, bangkok))
	svc := bareService(paykit.Config{Now: clock.Now})

	fmt.Println(svc.Now())
	clock.Advance(1500 * time.Microsecond)
	fmt.Println(svc.Now().Format(time.RFC3339Nano))
	// Output:
	// 2026-06-01 08:00:00.123 +0000 UTC
	// 2026-06-01T08:00:00.124Z
}

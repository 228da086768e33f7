package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
)

func checkout(scope paykit.Scope, id, ref string, created time.Time) *paykit.Checkout {
	return &paykit.Checkout{
		ID: id, MerchantID: scope.MerchantID, Environment: scope.Environment, Status: paykit.CheckoutOpen,
		Amount: 15_000, Currency: "MYR", Country: "MY", MerchantReference: ref, PaymentIntentID: "pi_" + id,
		ExpiresAt: created.Add(24 * time.Hour), CreatedAt: created, UpdatedAt: created,
	}
}

func checkoutIDs(rows []paykit.Checkout) []string {
	return ids(rows, func(c paykit.Checkout) string { return c.ID })
}

// testCheckouts covers the Store's checkouts: round trip of every stored
// field, copies, tenant scoping, the unique reference, versioned updates,
// list filters and keyset pages.
func testCheckouts(t *testing.T, s paykit.Store) {
	ctx := context.Background()
	t.Run("RoundTrip", func(t *testing.T) {
		is := is.New(t)
		plain := checkout(scopeA, "co_plain", "order-1", base)
		is.NoErr(s.CreateCheckout(ctx, plain))
		got, err := s.GetCheckout(ctx, scopeA, "co_plain")
		is.NoErr(err)
		is.Equal(*got, *plain)
		is.Equal(got.CreatedAt.Location(), time.UTC)

		full := checkout(scopeA, "co_full", "order-2", at(time.Second))
		full.Amount = 9_000_000_000_000_000 // int64, far above float64's exact range
		full.Customer = map[string]string{"name": "Aisyah", "email": "a@example.com"}
		full.Metadata = map[string]string{"order": "1042", "note": "ünïcode ✓"}
		full.PaymentMethod, full.PaymentMethodOptions = "FPX", map[string]string{"bank": "MAYBANK"}
		full.ReturnURL = "https://shop.example/done?x=1"
		is.NoErr(s.CreateCheckout(ctx, full))
		full.Metadata["order"] = "changed" // the Store kept its own copy
		got, err = s.GetCheckout(ctx, scopeA, "co_full")
		is.NoErr(err)
		want := *full
		want.Metadata = map[string]string{"order": "1042", "note": "ünïcode ✓"}
		is.Equal(*got, want)
		got.Customer["name"] = "x" // returned values are copies
		again, err := s.GetCheckout(ctx, scopeA, "co_full")
		is.NoErr(err)
		is.Equal(again.Customer["name"], "Aisyah")

		// Projection fields are the Service's, never stored.
		proj := checkout(scopeA, "co_proj", "order-3", at(2*time.Second))
		proj.URL, proj.PaymentStatus, proj.ProviderStatus, proj.FailureCode = "http://x/pay/checkouts/t", paykit.PaymentFailed, "failed", "provider_declined"
		is.NoErr(s.CreateCheckout(ctx, proj))
		got, err = s.GetCheckout(ctx, scopeA, "co_proj")
		is.NoErr(err)
		is.Equal(got.URL, "")
		is.Equal(got.PaymentStatus, paykit.PaymentStatus(""))
		is.Equal(got.FailureCode, "")

		_, err = s.GetCheckout(ctx, scopeA, "co_missing")
		is.True(errors.Is(err, paykit.ErrNotFound))
	})
	t.Run("TenantScoping", func(t *testing.T) {
		is := is.New(t)
		for _, c := range []*paykit.Checkout{
			checkout(scopeA, "cs_a", "ref", base), checkout(scopeALive, "cs_a_live", "ref", base), checkout(scopeB, "cs_b", "ref", base),
		} {
			is.NoErr(s.CreateCheckout(ctx, c))
		}
		checkTenantIsolation(t, "cs", func(scope paykit.Scope, id string) error {
			_, err := s.GetCheckout(ctx, scope, id)
			return err
		}, func(scope paykit.Scope) ([]string, error) {
			list, err := s.ListCheckouts(ctx, paykit.ListQuery[paykit.ListParams[paykit.CheckoutStatus]]{Scope: scope, Filter: paykit.ListParams[paykit.CheckoutStatus]{MerchantReference: "ref"}, Limit: 10})
			return checkoutIDs(list), err
		})
		// An update naming another scope does not touch the row.
		c, err := s.GetCheckout(ctx, scopeA, "cs_a")
		is.NoErr(err)
		c.Environment, c.Status = paykit.Live, paykit.CheckoutCancelled
		is.True(errors.Is(s.UpdateCheckout(ctx, c), paykit.ErrNotFound))
		c, err = s.GetCheckout(ctx, scopeA, "cs_a")
		is.NoErr(err)
		is.Equal(c.Status, paykit.CheckoutOpen)
	})
	t.Run("UniqueReference", func(t *testing.T) {
		is := is.New(t)
		is.NoErr(s.CreateCheckout(ctx, checkout(scopeA, "cu_1", "dup", base)))
		var ce *paykit.ConflictError
		err := s.CreateCheckout(ctx, checkout(scopeA, "cu_2", "dup", base))
		is.True(errors.As(err, &ce))
		is.Equal(*ce, paykit.ConflictError{Entity: "checkout", Key: "merchant_reference"})
		err = s.CreateCheckout(ctx, checkout(scopeA, "cu_1", "other", base))
		is.True(errors.As(err, &ce))
		is.Equal(*ce, paykit.ConflictError{Entity: "checkout", Key: "id"})
		is.True(errors.Is(err, paykit.ErrAlreadyExists))
		// The same reference in another scope is another business identity.
		is.NoErr(s.CreateCheckout(ctx, checkout(scopeALive, "cu_3", "dup", base)))
		is.NoErr(s.CreateCheckout(ctx, checkout(scopeB, "cu_4", "dup", base)))
		// Inside a transaction the conflict leaves the transaction usable.
		err = s.InTx(ctx, func(tx paykit.Tx) error {
			if err := tx.CreateCheckout(ctx, checkout(scopeA, "cu_5", "dup", base)); !errors.Is(err, paykit.ErrAlreadyExists) {
				return fmt.Errorf("want a conflict, got %v", err)
			}
			return tx.CreateCheckout(ctx, checkout(scopeA, "cu_6", "dup-6", base))
		})
		is.NoErr(err)
		_, err = s.GetCheckout(ctx, scopeA, "cu_6")
		is.NoErr(err)
	})
	t.Run("Versioning", func(t *testing.T) {
		is := is.New(t)
		is.NoErr(s.CreateCheckout(ctx, checkout(scopeA, "cv_1", "ver", base)))
		got, err := s.GetCheckout(ctx, scopeA, "cv_1")
		is.NoErr(err)
		stale := *got
		got.Status, got.UpdatedAt = paykit.CheckoutCompleted, at(time.Minute)
		is.NoErr(s.UpdateCheckout(ctx, got))
		is.Equal(got.Version, stale.Version+1)
		stale.Status = paykit.CheckoutCancelled
		is.True(errors.Is(s.UpdateCheckout(ctx, &stale), paykit.ErrVersionConflict))
		again, err := s.GetCheckout(ctx, scopeA, "cv_1")
		is.NoErr(err)
		is.Equal(again.Status, paykit.CheckoutCompleted) // the stale write did not land
		is.Equal(again.UpdatedAt, at(time.Minute))
		is.Equal(again.Version, got.Version)
		missing := checkout(scopeA, "cv_missing", "x", base)
		is.True(errors.Is(s.UpdateCheckout(ctx, missing), paykit.ErrNotFound))
		// A rolled-back update leaves the row as it was.
		err = s.InTx(ctx, func(tx paykit.Tx) error {
			c, err := tx.GetCheckout(ctx, scopeA, "cv_1")
			if err != nil {
				return err
			}
			c.Status = paykit.CheckoutExpired
			if err := tx.UpdateCheckout(ctx, c); err != nil {
				return err
			}
			return errors.New("roll back")
		})
		is.Equal(err.Error(), "roll back")
		again, err = s.GetCheckout(ctx, scopeA, "cv_1")
		is.NoErr(err)
		is.Equal(again.Status, paykit.CheckoutCompleted)
	})
	t.Run("ListFiltersAndPages", func(t *testing.T) {
		is := is.New(t)
		scope := paykit.Scope{MerchantID: "mch_list", Environment: paykit.Test}
		var all []string
		for i := range 7 {
			c := checkout(scope, fmt.Sprintf("cl_%d", i), fmt.Sprintf("list-%d", i), at(time.Duration(i/2)*time.Second))
			if i%3 == 0 {
				c.Status = paykit.CheckoutCompleted
			}
			if i == 4 {
				c.Currency, c.Country = "THB", "TH"
			}
			is.NoErr(s.CreateCheckout(ctx, c))
			all = append([]string{c.ID}, all...)
		}
		// Newest first by (created_at, id): equal times order by id descending.
		list, err := s.ListCheckouts(ctx, paykit.ListQuery[paykit.ListParams[paykit.CheckoutStatus]]{Scope: scope})
		is.NoErr(err)
		is.Equal(checkoutIDs(list), all)
		list, err = s.ListCheckouts(ctx, paykit.ListQuery[paykit.ListParams[paykit.CheckoutStatus]]{Scope: scope, Filter: paykit.ListParams[paykit.CheckoutStatus]{Statuses: []paykit.CheckoutStatus{paykit.CheckoutCompleted}}})
		is.NoErr(err)
		is.Equal(checkoutIDs(list), []string{"cl_6", "cl_3", "cl_0"})
		list, err = s.ListCheckouts(ctx, paykit.ListQuery[paykit.ListParams[paykit.CheckoutStatus]]{Scope: scope, Filter: paykit.ListParams[paykit.CheckoutStatus]{Statuses: []paykit.CheckoutStatus{paykit.CheckoutOpen, paykit.CheckoutExpired}, Currency: "MYR", Country: "MY"}})
		is.NoErr(err)
		is.Equal(checkoutIDs(list), []string{"cl_5", "cl_2", "cl_1"})
		list, err = s.ListCheckouts(ctx, paykit.ListQuery[paykit.ListParams[paykit.CheckoutStatus]]{Scope: scope, Filter: paykit.ListParams[paykit.CheckoutStatus]{Currency: "THB"}})
		is.NoErr(err)
		is.Equal(checkoutIDs(list), []string{"cl_4"})
		list, err = s.ListCheckouts(ctx, paykit.ListQuery[paykit.ListParams[paykit.CheckoutStatus]]{Scope: scope, Filter: paykit.ListParams[paykit.CheckoutStatus]{MerchantReference: "list-2"}})
		is.NoErr(err)
		is.Equal(checkoutIDs(list), []string{"cl_2"})
		after, before := at(time.Second), at(3*time.Second)
		list, err = s.ListCheckouts(ctx, paykit.ListQuery[paykit.ListParams[paykit.CheckoutStatus]]{Scope: scope, Filter: paykit.ListParams[paykit.CheckoutStatus]{CreatedAfter: &after, CreatedBefore: &before}})
		is.NoErr(err)
		is.Equal(checkoutIDs(list), []string{"cl_5", "cl_4", "cl_3", "cl_2"}) // after inclusive, before exclusive
		for _, limit := range []int{1, 2, 3, 7} {
			got := walkPages(t, limit, func(pos *paykit.Position, limit int) ([]paykit.Checkout, error) {
				return s.ListCheckouts(ctx, paykit.ListQuery[paykit.ListParams[paykit.CheckoutStatus]]{Scope: scope, After: pos, Limit: limit})
			}, func(c paykit.Checkout) paykit.Position { return paykit.Position{CreatedAt: c.CreatedAt, ID: c.ID} })
			is.Equal(got, all)
		}
	})
}

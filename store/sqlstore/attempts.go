package sqlstore

import (
	"context"

	"github.com/paykit/paykit"
)

// findByProviderRefSQL reads the resource whose attempt at a Provider has
// the Provider's id, through the (provider, provider_ref) index of each
// table (its predicate, provider_ref <> ”, is repeated so that both
// dialects use it).
const findByProviderRefSQL = `SELECT 'payment_intent' AS object, merchant_id, environment, id, attempt FROM payment_intents
 WHERE provider = ? AND provider_ref = ? AND provider_ref <> ''
UNION ALL SELECT 'payout_intent', merchant_id, environment, id, attempt FROM payout_intents
 WHERE provider = ? AND provider_ref = ? AND provider_ref <> ''
UNION ALL SELECT 'refund', merchant_id, environment, id, attempt FROM paykit_refunds
 WHERE provider = ? AND provider_ref = ? AND provider_ref <> ''
LIMIT 1`

// attemptOwnerRow is a row of findByProviderRefSQL.
type attemptOwnerRow struct {
	Object      string `bun:"object"`
	MerchantID  string `bun:"merchant_id"`
	Environment string `bun:"environment"`
	ID          string `bun:"id"`
	Attempt     string `bun:"attempt"`
}

// FindByProviderRef implements paykit.Tx.
func (t tx) FindByProviderRef(ctx context.Context, provider, ref string) (paykit.AttemptOwner, error) {
	if ref == "" {
		return paykit.AttemptOwner{}, paykit.ErrNotFound
	}
	var row attemptOwnerRow
	err := t.db.NewRaw(findByProviderRefSQL, provider, ref, provider, ref, provider, ref).Scan(ctx, &row)
	if err != nil {
		return paykit.AttemptOwner{}, mapError("find by provider ref", err)
	}
	return paykit.AttemptOwner{
		Object: row.Object, Scope: paykit.Scope{MerchantID: row.MerchantID, Environment: paykit.Environment(row.Environment)},
		ID: row.ID, Attempt: paykit.AttemptState(row.Attempt),
	}, nil
}

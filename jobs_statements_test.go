package paykit_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/keyring"
	"github.com/paykit/paykit/paykittest"
	"github.com/paykit/paykit/store/sqlstore"
)

// loggedPostgres is a PostgreSQL Store whose statements pass through the
// returned log.
func loggedPostgres(t *testing.T) (*statementLog, paykit.Store) {
	log := &statementLog{}
	return log, sqlstore.New(paykittest.OpenSQL(t, paykittest.PostgresDSN(t)).DB().WithQueryHook(log))
}

// completesJob reports whether q is the UPDATE that completes a job by
// its dedup key.
func completesJob(q string) bool {
	verb, table := statementTable(q)
	return verb == "UPDATE" && table == "jobs" && strings.Contains(q, "SET state = 'completed'")
}

// checkDecision fails t unless stmts, what decision name sent to
// PostgreSQL, are want statements in trips round trips, and complete one
// job, in the deciding transaction (the first).
func checkDecision(t *testing.T, name string, stmts []string, trips, want, wantTrips int) {
	t.Helper()
	in, completes := false, 0
	for _, q := range stmts {
		switch {
		case q == "BEGIN":
			in = true
		case q == "COMMIT":
			if completes > 0 {
				in = false
			}
		case completesJob(q):
			if !in {
				t.Errorf("%s: a job completed outside the deciding transaction", name)
			}
			completes++
		}
	}
	if completes != 1 || len(stmts) != want || trips != wantTrips {
		t.Errorf("%s: %d statements in %d round trips completing %d jobs, want %d in %d completing 1:\n%s",
			name, len(stmts), trips, completes, want, wantTrips, strings.Join(stmts, "\n"))
	}
}

// TestDecisionStatements counts what a decision sends to PostgreSQL: a
// callback that settles a payment, and an operator's approve and reject of
// a held payout each complete the job they make needless (the payment's
// inquiry, the hold's payout.expire) with one more statement in their
// transaction, held in its batch: 10 to 11 statements for the callback and
// the reject, 16 to 17 for the approve (with its dispatch), round trips
// unchanged (7, 9, 7). The callback's success writes its balance
// transaction too: 12.
func TestDecisionStatements(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	log, store := loggedPostgres(t)

	e := newFlowEnvOn(t, store)
	pi, _, err := e.svc.CreatePaymentIntent(ctx, e.test, "k-1", fpx(5000, "order-1"))
	is.NoErr(err)
	e.provider.approve(pi.ID)
	stmts := log.record(func() {
		callbackSucceeded(t, e.svc, "payment", pi.ID)
	})
	checkDecision(t, "callback", stmts, log.trips, 12, 7)

	keys, err := keyring.New("k1", map[string][]byte{"k1": []byte("0123456789abcdef0123456789abcdef")})
	is.NoErr(err)
	pe := newPayoutEnvOn(t, store, keys, 1_000_000)
	for _, c := range []struct {
		name        string
		decide      func(id string) error
		want, trips int
	}{
		{"approve", func(id string) error { _, err := pe.svc.ApprovePayout(ctx, "ops", id, ""); return err }, 17, 9},
		{"reject", func(id string) error { _, err := pe.svc.RejectPayout(ctx, "ops", id, "no"); return err }, 11, 7},
	} {
		po, _, err := pe.svc.CreatePayoutIntent(ctx, pe.test, "k-"+c.name, thPayout(1_000_000, c.name, "000123456789"))
		is.NoErr(err)
		stmts := log.record(func() { is.NoErr(c.decide(po.ID)) })
		checkDecision(t, c.name, stmts, log.trips, c.want, c.trips)
	}
}

// TestEndedCheckoutExpiryStatements: the expiry job of a checkout that
// completed reads it and ends, without a transaction: the round sends the
// claim, one read and the job's end.
func TestEndedCheckoutExpiryStatements(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	log, store := loggedPostgres(t)
	e := newFlowEnvOn(t, store)
	is.NoErr(store.CreateMerchant(ctx, &paykit.Merchant{ID: "mch_1", Name: "Kedai Kopi", CreatedAt: e.clock.Now()}))
	co := e.createCheckout(t, "co-1", paykit.CreateCheckoutRequest{Amount: 15000, Currency: "MYR", Country: "MY", MerchantReference: "order-1"})
	pi, err := e.svc.PayCheckout(ctx, checkoutToken(co), paykit.PayCheckoutRequest{PaymentMethod: "FPX",
		Customer: map[string]string{"name": "Aisyah", "email": "a@example.com"}})
	is.NoErr(err)
	e.provider.approve(pi.ID)
	callbackSucceeded(t, e.svc, "payment", pi.ID)
	e.clock.Set(co.ExpiresAt.Add(-time.Second))
	e.drain(t) // everything else that is due by then

	e.clock.Set(co.ExpiresAt)
	var n int
	stmts := log.record(func() {
		n, err = e.svc.ProcessDue(ctx)
	})
	is.NoErr(err)
	is.Equal(n, 1)
	is.Equal(len(stmts), 3) // claim, read, end
	for _, q := range stmts {
		is.True(q != "BEGIN")
	}
	verb, table := statementTable(stmts[1])
	is.Equal(verb+" "+table, "SELECT checkouts")
	completedJob(t, e.svc, "checkout.expire", co.ID)
}

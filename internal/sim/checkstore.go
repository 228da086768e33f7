package sim

import (
	"context"
	"time"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/provider/sandbox"
)

// CheckStore checks, on a Store and a sandbox PSP's records that other
// processes wrote (the PostgreSQL soak's servers), what the simulation
// checks once its faults stopped and its work settled, for the merchants
// of scopes: the ledger's rules, refunds and disputes within their
// payments, every payment, payout, refund and checkout final, paykit's
// records and money equal to the PSP's, every batch the PSP closed read
// and reconciliation's breaks only those its magic amounts imply. It
// returns every broken invariant; psp is a PSP on the records' State.
func CheckStore(ctx context.Context, store paykit.Store, psp *sandbox.PSP, scopes []paykit.Scope) []Failure {
	w := &world{
		ctx: ctx, store: store, psp: psp, clock: paykit.NewManualClock(time.Now()),
		pspDirect: sandbox.New(sandbox.Config{PSP: psp, APIKey: pspKey, Timeout: time.Minute}),
		obs:       newObservations(), trace: newTracer(nil), faults: newFaultCounts(), step: -1, collect: true,
	}
	for _, sc := range scopes {
		w.obs.merchants = append(w.obs.merchants, &simMerchant{ID: sc.MerchantID, Principal: paykit.Principal{Scope: sc}})
	}
	b := w.checkBooks(true)
	if b != nil {
		w.checkEnded(b)
		w.checkReconciliation(b)
		w.checkMoney(b)
	}
	return w.all
}

// Package sandbox is paykit's built-in test Provider, in two parts that
// talk to each other only over HTTP, as a real integration does:
//
//   - PSP (NewPSP) is a simulated payment service provider: an
//     http.Handler keeping its state in memory or, like a real PSP, in a
//     database (PSPConfig.State, package sandboxsql) where it survives
//     restarts and is shared by every PSP on it. It serves a JSON
//     server-to-server API under /api/ (payments, payouts, refunds,
//     cancels, payer simulation, returns, disputes, settlement batches;
//     bearer API key; Idempotency-Key on creates) and
//     payer pages under /pay/ where a payer approves or declines. It keeps
//     a fee from each payment and settles each merchant's funds in
//     batches every settlement interval (psp_settlement.go). Outcomes
//     are chosen by magic amounts, account numbers and evidence texts (the
//     constants in psp.go, psp_settlement.go and psp_disputes.go);
//     asynchronous outcomes, settlement included,
//     happen lazily from its clock, so tests with a manual clock are
//     deterministic. Test hooks (InjectFault, CreateCalls, Payments,
//     Transfers, Refunds, SettlementBatches, CorruptBatchTotal) let
//     tests break the network on purpose, see what the PSP recorded, and
//     have it state a batch's totals wrong.
//
//   - Provider (New) is the adapter: it implements paykit.Provider,
//     paykit.PayoutProvider, paykit.RefundProvider, paykit.PayerSimulator,
//     paykit.ReturnSimulator, paykit.DisputeProvider,
//     paykit.DisputeSimulator, paykit.SettlementReporter and
//     paykit.SettlementSimulator by calling the PSP, and declares them in its
//     Capabilities. It passes the provider/providertest suite.
//     It is the template for real adapters. The PSP's wire shapes (wire.go)
//     and vocabulary (codes.go) stay in this package; the adapter maps them
//     to paykit's Outcome and failure codes, keeps local codes in
//     Result.Detail only, and classifies every way a call can end: nothing
//     sent or the connection dropped is Unacknowledged, sent without an
//     answer in time is Unknown, and no answer but the PSP's explicit state
//     is ever a failure.
//
// DefaultRouting returns the routes of the contract's sandbox (test
// environment only). A host mounts the PSP somewhere (the example server
// uses /sandbox), points the adapter at it, and registers the adapter
// under Name.
package sandbox

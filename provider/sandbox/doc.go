// Package sandbox is paykit's built-in test Provider, in two parts that
// talk to each other only over HTTP, as a real integration does:
//
//   - PSP (NewPSP) is a simulated payment service provider: an
//     http.Handler keeping its state in memory or, like a real PSP, in a
//     database (PSPConfig.State, package sandboxsql) where it survives
//     restarts and is shared by every PSP on it. It serves a JSON
//     server-to-server API under /api/ (payments, payouts, refunds,
//     cancels, payer simulation, returns; bearer API key; Idempotency-Key
//     on creates) and
//     payer pages under /pay/ where a payer approves or declines. Outcomes
//     are chosen by magic amounts and account numbers (the constants in
//     psp.go; the README lists them); asynchronous outcomes settle
//     lazily from its clock, so tests with a manual clock are
//     deterministic. Test hooks (InjectFault, CreateCalls, Payments,
//     Transfers, Refunds) let
//     tests break the network on purpose and see what the PSP recorded.
//
//   - Provider (New) is the adapter: it implements paykit.Provider,
//     paykit.PayoutProvider, paykit.RefundProvider, paykit.PayerSimulator
//     and paykit.ReturnSimulator by calling the PSP, and declares them in its
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

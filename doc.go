// Package paykit is an embeddable payments engine: it gives a Go host
// application the merchant-facing Payments and Payouts API of a Southeast
// Asian payment service (payment intents for FPX, PromptPay, DuitNow QR,
// e-wallets, cards and bank transfer; hosted checkouts; payment-method
// discovery; payouts with operator approval holds).
//
// The root package holds the domain: resource types, the Service with every
// operation as a Go method, and the interfaces it needs from the outside,
// Store (persistence) and, for payments, Provider (a payment service
// provider). Sub-packages adapt concrete things to those interfaces:
//
//	store/memory      Store in maps, for tests and embedding
//	store/sqlstore    Store on bun: SQLite (modernc.org/sqlite) and PostgreSQL
//	store/storetest   the conformance suite every Store passes
//	httpadapter       net/http handlers for the merchant and operator APIs
//	examples/server   the runnable server wiring it all together
//
// A host picks a Store, builds a Service, mounts the handlers it wants and
// runs the background worker under its own control:
//
//	store, _ := sqlstore.Open(ctx, "sqlite:paykit.db")
//	_ = store.Migrate(ctx)
//	svc, _ := paykit.New(paykit.Config{Store: store})
//	mux := http.NewServeMux()
//	mux.Handle("/v1/", http.StripPrefix("/v1", httpadapter.NewMerchantAPI(svc, httpadapter.Options{})))
//	go svc.Run(ctx) // durable background work: recovery, expiry, cancellation
//	_ = http.ListenAndServe("127.0.0.1:8080", mux)
//
// Conventions: money is int64 minor units inside and a decimal string on the
// wire; every time comes from Config.Now and is kept in UTC at millisecond
// precision; every id comes from Config.NewID. Errors returned by Service
// methods are *Error values carrying the contract's code, message, param and
// HTTP status.
//
// New starts no goroutine. Run blocks until its context ends; ProcessDue
// performs one round of due work, so tests drive the worker step by step.
package paykit

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
//	provider/sandbox  the sandbox PSP and its adapter
//	httpadapter       net/http handlers: merchant and operator APIs, payer
//	                  pages, Provider callbacks
//	examples/server   the runnable server wiring it all together
//	examples/embed    the smallest complete host
//
// A host picks a Store, builds a Service, mounts the handlers it wants and
// runs the background worker under its own control. A persistent Store
// needs a SigningKey (list cursors, payer links) and AccountKeys (stored
// account numbers, webhook secrets) that outlive the process, or New
// refuses it: keys drawn per process would make what was stored or signed
// before a restart, or by another instance, unusable. Load them from a
// secret store, 32 random bytes each (error checks elided):
//
//	store, err := sqlstore.OpenWith(ctx, "sqlite:paykit.db", sqlstore.Options{MaxConns: 8, ConnWait: 2 * time.Second})
//	err = store.Migrate(ctx)
//	accountKeys, err := keyring.New("k1", map[string][]byte{"k1": accountKey})
//	svc, err := paykit.New(paykit.Config{Store: store, SigningKey: signingKey, AccountKeys: accountKeys})
//	mux := http.NewServeMux()
//	mux.Handle("/v1/", http.StripPrefix("/v1", httpadapter.NewMerchantAPI(svc, httpadapter.Options{})))
//	go svc.Run(ctx) // durable background work: recovery, expiry, webhook deliveries
//	err = http.Serve(ln, mux)
//
// The memory Store may omit both keys. A Store that cannot take more work
// makes requests answer 503 service_unavailable with Retry-After, never
// 500. examples/embed is a complete program that also wires the sandbox
// Provider, the payer pages, the operator API and Provider callbacks.
//
// Conventions: money is int64 minor units inside and a decimal string on the
// wire; every time comes from Config.Now and is kept in UTC at millisecond
// precision; every id comes from Config.NewID. Errors returned by Service
// methods are *Error values carrying the contract's code, message, param and
// HTTP status.
//
// New starts no goroutine. Run blocks until its context ends; ProcessDue
// performs one round of due work, so tests drive the worker step by step.
//
// Telemetry goes through the host's OpenTelemetry providers
// (Config.TracerProvider, Config.MeterProvider; the global ones by
// default): spans of Store transactions, Provider calls, job runs (linked
// to the span that enqueued them) and webhook deliveries, and httpadapter's
// of requests, with their duration histograms. A trace that is not sampled
// costs no span of paykit's.
package paykit

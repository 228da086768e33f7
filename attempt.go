package paykit

// AttemptState is where the Provider attempt of a resource (a payment
// attempt, a payout's transfer, a refund) stands. Only the Service moves
// it; it never reaches the API.
type AttemptState string

// Attempt states.
const (
	AttemptNone       AttemptState = ""           // no Provider attempt yet (a checkout waiting for the payer, an approval hold)
	AttemptCreating   AttemptState = "creating"   // persisted; the create call may or may not have reached the Provider
	AttemptOpen       AttemptState = "open"       // the Provider has it; waiting for the payer or the Provider
	AttemptUnknown    AttemptState = "unknown"    // the create call's outcome is unknown; inquiry resolves it
	AttemptCancelling AttemptState = "cancelling" // a cancel waits for the Provider's confirmation
	AttemptClosed     AttemptState = "closed"     // the Provider reported a final result
)

// ProviderAttempt is the Provider state of a resource: which Provider has
// its attempt, under which id, and where the attempt stands. The Store
// persists it; hosts never set it, and it never reaches the API.
type ProviderAttempt struct {
	Provider string // the routed Provider's name
	// ProviderOptions are, for payments, the options as the route mapped
	// them for the Provider (bank codes) at create.
	ProviderOptions map[string]string
	ProviderRef     string // the Provider's id of the attempt, from whichever answer names it first
	Attempt         AttemptState
	// ProviderURL is, for payments, the Provider's payer page behind the
	// continuation URL.
	ProviderURL string
}

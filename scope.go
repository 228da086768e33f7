package paykit

// Environment separates test from live money. An API key's prefix fixes it.
type Environment string

// The two environments.
const (
	Test Environment = "test"
	Live Environment = "live"
)

// Valid reports whether e is test or live.
func (e Environment) Valid() bool { return e == Test || e == Live }

// Scope is the tenant of a request: every read and write of merchant data
// names one.
type Scope struct {
	MerchantID  string
	Environment Environment
}

// Principal is an authenticated API caller.
type Principal struct {
	Scope
	KeyID string
}

// Package storetest is the conformance suite of paykit.Store: a backend is
// correct when Run passes against it. store/memory and store/sqlstore
// (SQLite and PostgreSQL) run it; a third-party backend should too:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) paykit.Store { return mystore.New(...) })
//	}
//
// newStore must return an empty Store for every call; the suite closes it.
//
// CheckLedger asserts the ledger's invariants (every currency sums to zero,
// no balance is negative, each balance equals its entries and the nets of
// its balance transactions) through any Store; tests of code that posts
// to the ledger can call it too.
package storetest

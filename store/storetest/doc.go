// Package storetest is the conformance suite of paykit.Store: a backend is
// correct when Run passes against it. store/memory and store/sqlstore
// (SQLite and PostgreSQL) run it; a third-party backend should too:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) paykit.Store { return mystore.New(...) })
//	}
//
// newStore must return an empty Store for every call; the suite closes it.
package storetest

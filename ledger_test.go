package paykit_test

import (
	"math"
	"testing"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
)

func TestLedgerTxnBalanced(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	txn := func(amounts ...int64) *paykit.LedgerTxn {
		t := &paykit.LedgerTxn{}
		for _, a := range amounts {
			t.Postings = append(t.Postings, paykit.Posting{Account: paykit.AccountAvailable, Amount: a})
		}
		return t
	}
	is.True(txn(-500, 500).Balanced())
	is.True(txn(-500, 200, 300).Balanced())
	is.True(!txn(500).Balanced())          // one posting moves nothing anywhere
	is.True(!txn(-500, 499).Balanced())    // does not sum to zero
	is.True(!txn(-500, 500, 0).Balanced()) // a zero posting is noise
	// Sums that wrap around int64 to zero are refused.
	is.True(!txn(math.MaxInt64, math.MaxInt64, 2).Balanced())
	is.True(!txn(math.MinInt64, math.MinInt64).Balanced())
}

package storetest

import (
	"context"
	"testing"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
)

// testKeyChecks: RecordKeyChecks keeps the first fingerprint of each key
// id, adds new ids, returns them all, and fails on a cancelled context.
func testKeyChecks(t *testing.T, s paykit.Store) {
	is := is.New(t)
	ctx := context.Background()
	got, err := s.RecordKeyChecks(ctx, nil, at(0))
	is.NoErr(err)
	is.Equal(len(got), 0) // nothing recorded yet
	got, err = s.RecordKeyChecks(ctx, map[string]string{"signing": "aa", "account:k1": "bb"}, at(0))
	is.NoErr(err)
	is.Equal(got, map[string]string{"signing": "aa", "account:k1": "bb"})
	got, err = s.RecordKeyChecks(ctx, map[string]string{"signing": "cc", "account:k2": "dd"}, at(1))
	is.NoErr(err)
	is.Equal(got, map[string]string{"signing": "aa", "account:k1": "bb", "account:k2": "dd"}) // the first "signing" stays
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = s.RecordKeyChecks(cctx, map[string]string{"account:k3": "ee"}, at(2))
	is.True(err != nil)
}

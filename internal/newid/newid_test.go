package newid_test

import (
	"regexp"
	"slices"
	"sync"
	"testing"

	"github.com/matryer/is"

	"github.com/paykit/paykit/internal/newid"
)

// Sortable keeps Random's shape, and ids made later sort after
// earlier ones, also when made at once by several goroutines.
func TestSortableSortsInCreationOrder(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	shape := regexp.MustCompile(`^pi_[0-9a-hjkmnp-tv-z]{24}$`)
	is.True(shape.MatchString(newid.Random("pi")))
	prev := newid.Sortable("pi")
	for range 100_000 { // many per millisecond: the sequence orders them
		id := newid.Sortable("pi")
		if !shape.MatchString(id) || id <= prev {
			t.Fatalf("%s after %s", id, prev)
		}
		prev = id
	}
	var wg sync.WaitGroup
	made := make([][]string, 8)
	for g := range made {
		wg.Go(func() {
			for range 10_000 {
				made[g] = append(made[g], newid.Sortable("po"))
			}
		})
	}
	wg.Wait()
	var all []string
	for _, ids := range made {
		is.True(slices.IsSorted(ids)) // each goroutine's in its order
		all = append(all, ids...)
	}
	slices.Sort(all)
	is.Equal(len(slices.Compact(all)), 80_000) // no two alike
}

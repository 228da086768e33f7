package periods_test

import (
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit/internal/periods"
)

func TestPeriods(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	day := 24 * time.Hour
	midnight := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	is.Equal(periods.Closing(midnight.Add(-time.Second), day), midnight)
	is.Equal(periods.Closing(midnight, day), midnight) // a boundary closes its own period
	is.Equal(periods.Closing(midnight.Add(time.Second), day), midnight.Add(day))
	bkk := time.FixedZone("ICT", 7*3600)
	is.Equal(periods.Closing(time.Date(2026, 11, 25, 6, 0, 0, 0, bkk), day), midnight) // in UTC

	k := periods.Key{Closes: midnight, Currency: "MYR"}
	ref := k.Ref("xendit")
	is.Equal(ref, "xendit_2026-11-25T00:00:00Z_MYR")
	back, ok := periods.Parse("xendit", ref)
	is.True(ok)
	is.Equal(back, k)
	for _, bad := range []string{"opn_2026-11-25T00:00:00Z_MYR", "xendit_2026-11-25_MYR", "xendit_2026-11-25T00:00:00Z_myr", "xendit"} {
		_, ok := periods.Parse("xendit", bad)
		is.True(!ok)
	}
	is.True(k.Compare(periods.Key{Closes: midnight, Currency: "THB"}) < 0)
	is.True(k.Compare(periods.Key{Closes: midnight.Add(-day), Currency: "THB"}) > 0)
}

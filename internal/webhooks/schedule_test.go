package webhooks

import (
	"testing"
	"time"

	"github.com/matryer/is"
)

func TestNextDelay(t *testing.T) {
	const h = time.Hour
	fixed := func(f float64) func() float64 { return func() float64 { return f } }
	cases := []struct {
		name       string
		failed     int
		retryAfter time.Duration
		rnd        float64
		want       time.Duration
		ok         bool
	}{
		{"first failure, no jitter", 1, 0, 0.5, 5 * time.Second, true},
		{"first failure, -10%", 1, 0, 0, 4500 * time.Millisecond, true},
		{"first failure, +10%", 1, 0, 1, 5500 * time.Millisecond, true},
		{"second", 2, 0, 0.5, 5 * time.Minute, true},
		{"third", 3, 0, 0.5, 30 * time.Minute, true},
		{"fourth", 4, 0, 0.5, 2 * h, true},
		{"fifth", 5, 0, 0.5, 5 * h, true},
		{"sixth", 6, 0, 0.5, 10 * h, true},
		{"seventh", 7, 0, 0.5, 14 * h, true},
		{"eighth", 8, 0, 0.5, 20 * h, true},
		{"ninth", 9, 0, 0.5, 24 * h, true},
		{"ninth -10%", 9, 0, 0, 24 * h * 9 / 10, true},
		{"tenth failure gives up", 10, 0, 0.5, 0, false},
		{"eleventh gives up", 11, 0, 0.5, 0, false},
		{"gives up even with Retry-After", 10, time.Minute, 0.5, 0, false},
		{"zero treated as one", 0, 0, 0.5, 5 * time.Second, true},
		{"Retry-After larger wins", 1, 2 * time.Minute, 0.5, 2 * time.Minute, true},
		{"Retry-After smaller ignored", 3, 2 * time.Minute, 0.5, 30 * time.Minute, true},
		{"Retry-After smaller than jittered", 1, 5 * time.Second, 1, 5500 * time.Millisecond, true},
		{"Retry-After capped at 24h", 2, 72 * h, 0.5, 24 * h, true},
		{"negative Retry-After ignored", 2, -time.Hour, 0.5, 5 * time.Minute, true},
		{"rnd out of range clamped", 2, 0, 7, 5*time.Minute + 30*time.Second, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			got, ok := NextDelay(c.failed, c.retryAfter, fixed(c.rnd))
			is.Equal(ok, c.ok)
			is.Equal(got, c.want)
		})
	}
}

func TestNextDelayDefaultRandomWithinJitter(t *testing.T) {
	is := is.New(t)
	for failed := 1; failed <= len(Schedule); failed++ {
		base := Schedule[failed-1]
		for range 200 {
			d, ok := NextDelay(failed, 0, nil)
			is.True(ok)
			is.True(d >= base*9/10 && d <= base*11/10)
		}
	}
}

func TestScheduleAboutThreeDays(t *testing.T) {
	is := is.New(t)
	is.Equal(len(Schedule), MaxAttempts-1)
	var total time.Duration
	for _, d := range Schedule {
		total += d
	}
	is.True(total > 3*24*time.Hour && total < 4*24*time.Hour)
}

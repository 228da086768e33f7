//go:build race

package sim

// raceEnabled reports whether the tests run with the race detector, which
// makes each run several times slower.
const raceEnabled = true

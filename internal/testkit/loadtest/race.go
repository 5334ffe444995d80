//go:build race

package loadtest

// raceEnabled reports whether the race detector is on.
const raceEnabled = true

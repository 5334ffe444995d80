//go:build race

package petstoretest_test

// raceEnabled reports whether the test binary was built with -race.
const raceEnabled = true

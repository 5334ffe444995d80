package main

import (
	"runtime/debug"
	"testing"
)

// TestSetGCPercent checks that the server sets its own GOGC when the
// environment sets none, and leaves the one of the environment alone.
func TestSetGCPercent(t *testing.T) {
	const given = 150
	was := debug.SetGCPercent(given)
	t.Cleanup(func() { debug.SetGCPercent(was) })
	env := func(gogc string) func(string) string {
		return func(k string) string {
			if k == "GOGC" {
				return gogc
			}
			return ""
		}
	}
	if setGCPercent(env("150")) {
		t.Error("setGCPercent with GOGC=150 reports that it set the percentage; want it to leave the environment's")
	}
	if got := debug.SetGCPercent(given); got != given {
		t.Errorf("after setGCPercent with GOGC=150, the percentage is %d; want %d", got, given)
	}
	if !setGCPercent(env("")) {
		t.Error("setGCPercent without GOGC reports that it did not set the percentage")
	}
	if got := debug.SetGCPercent(given); got != gcPercent {
		t.Errorf("after setGCPercent without GOGC, the percentage is %d; want %d", got, gcPercent)
	}
}

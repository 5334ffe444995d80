package petstore

import "time"

// SetLimiterClock sets the clock of l, for tests that move time.
func SetLimiterClock(l *MemoryLimiter, now func() time.Time) { l.now = now }

// Bounds of the watch streams, for their tests.
const (
	MaxViewBytes = maxViewBytes
	WatchMinGap  = watchMinGap
)

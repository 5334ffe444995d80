package petstore

import "time"

// SetLimiterClock sets the clock of l, for tests that move time.
func SetLimiterClock(l *MemoryLimiter, now func() time.Time) { l.now = now }

// LimiterLen returns the number of keys whose budgets l keeps.
func LimiterLen(l *MemoryLimiter) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.full)
}

// Bounds of the watch streams, for their tests.
const (
	MaxViewBytes   = maxViewBytes
	WatchMinGap    = watchMinGap
	WatchWave      = watchWave
	WatchWavePause = watchWavePause
)

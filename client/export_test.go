package client

import (
	"context"
	"time"
)

// WithSleep replaces the wait between attempts, so that a test sees the
// waits without waiting.
func WithSleep(f func(ctx context.Context, d time.Duration) error) Option {
	return optionFunc(func(c *Client) error {
		c.sleep = f
		return nil
	})
}

// NextLink exposes nextLink to the tests.
var NextLink = nextLink

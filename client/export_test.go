package client

import (
	"context"
	"time"
)

// set returns an Option that changes c with f.
func set(f func(c *Client)) Option { return optionFunc(func(c *Client) error { f(c); return nil }) }

// WithSleep replaces the wait between attempts, so that a test sees the
// waits without waiting.
func WithSleep(f func(ctx context.Context, d time.Duration) error) Option {
	return set(func(c *Client) { c.sleep = f })
}

// WithPageSize sets how many pets List and All ask for in each request,
// so that a test pages through few pets.
func WithPageSize(n int) Option { return set(func(c *Client) { c.pageSize = n }) }

// WithMaxListPets sets the most pets that List collects without a Limit,
// so that a test meets the bound with few pets.
func WithMaxListPets(n int) Option { return set(func(c *Client) { c.maxList = n }) }

// Sleep exposes the client's wait between attempts to the tests.
var Sleep = sleep

// NextLink exposes nextLink to the tests.
var NextLink = nextLink

// Origin exposes origin to the tests.
var Origin = origin

// Timeout returns the timeout of one request of c.
func Timeout(c *Client) time.Duration { return c.timeout }

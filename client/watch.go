package client

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/petstore-go/petstore"
)

// watchIdle is how long Watch waits for any byte of a stream, a heartbeat
// included, before it takes the connection for dead and reconnects: four
// of the server's default heartbeats.
const watchIdle = 4 * petstore.DefaultWatchHeartbeat

// Watch returns an iterator over the pets that opts selects, ascending by
// ID, that never ends on its own: those stored after opts.After, then each
// one created later, as the server's watch stream (GET /pets with Accept:
// text/event-stream) sends it. opts.Limit is ignored.
//
// When the stream breaks, or nothing arrives for a minute, Watch connects
// again with Last-Event-ID after the backoff of WithBackoff, or the wait
// that a 503 or 429 asks for, so the iterator misses and repeats no pet.
// It yields an error with the zero Pet and stops when ctx is done, or when
// the server answers what a reconnection cannot mend: another error
// status, or events that are not pets of the watch (ErrBadResponse).
// WithTimeout does not apply to a stream, but the Timeout of an http.Client
// of WithHTTPClient does.
func (c *Client) Watch(ctx context.Context, opts petstore.ListOptions) iter.Seq2[petstore.Pet, error] {
	return func(yield func(petstore.Pet, error) bool) {
		last := opts.After
		target := c.petsURL(opts, url.Values{})
		for attempt := 0; ; attempt++ {
			connected, wait, err := c.watchOnce(ctx, target, opts.Status, &last, last != opts.After, yield)
			switch {
			case errors.Is(err, errStopped):
				return
			case ctx.Err() != nil:
				yield(petstore.Pet{}, fmt.Errorf("client: watch %s: %w", target, ctx.Err()))
				return
			case wait < 0:
				yield(petstore.Pet{}, err)
				return
			}
			if connected {
				attempt = 0
			}
			if err := c.sleep(ctx, c.backoff(attempt, wait)); err != nil {
				yield(petstore.Pet{}, fmt.Errorf("client: watch %s: %w", target, err))
				return
			}
		}
	}
}

// errStopped is watchOnce's error when the loop stopped the iterator.
var errStopped = errors.New("the loop stopped")

// watchOnce connects to the watch at target, resuming after *last with
// Last-Event-ID when resume is set (target's cursor starts it otherwise), and
// yields its pets until the stream ends. It reports whether the server
// accepted the watch, and the wait that the server asked for before
// connecting again: 0 for none, or -1 when err is final.
func (c *Client) watchOnce(ctx context.Context, target string, status petstore.Status, last *int64, resume bool,
	yield func(petstore.Pet, error) bool) (connected bool, wait time.Duration, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := c.newCall(ctx, http.MethodGet).request(ctx, target, "text/event-stream")
	if err != nil {
		return false, -1, fmt.Errorf("client: watch %s: %w", target, err)
	}
	if resume {
		req.Header["Last-Event-Id"] = []string{strconv.FormatInt(*last, 10)}
	}
	idle := time.AfterFunc(watchIdle, cancel)
	defer idle.Stop()
	resp, err := c.hc.Do(req)
	if err != nil {
		if errors.Is(err, ErrRedirectRefused) || !transient(err) {
			return false, -1, fmt.Errorf("client: watch %s: %w", target, err)
		}
		return false, 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := readBody(resp, maxErrorBodyBytes)
		e := fmt.Errorf("client: watch %s: %w", target, errorAnswer(resp.StatusCode, b))
		if resp.StatusCode == http.StatusServiceUnavailable || resp.StatusCode == http.StatusTooManyRequests {
			return false, parseRetryAfter(resp.Header.Get("Retry-After")), e
		}
		return false, -1, e
	}
	if ct, _, _ := strings.Cut(resp.Header.Get("Content-Type"), ";"); !strings.EqualFold(strings.TrimSpace(ct), "text/event-stream") {
		return false, -1, fmt.Errorf("client: watch %s: %w: the answer is %q, not a stream (text/event-stream)", target, ErrBadResponse, cut(ct))
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 4<<10), maxPetBytes)
	var id, data string
	for sc.Scan() {
		idle.Reset(watchIdle)
		line := sc.Text()
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch {
		case line == "" && data != "":
			p, err := watchedPet(id, data, status, *last)
			if err != nil {
				return true, -1, fmt.Errorf("client: watch %s: %w", target, err)
			}
			*last = p.ID
			if !yield(p, nil) {
				return true, 0, errStopped
			}
			id, data = "", ""
		case line == "":
			id = ""
		case field == "id":
			id = value
		case field == "data":
			data = value // a pet is one line of JSON
		}
	}
	return true, 0, sc.Err()
}

// watchedPet decodes the event with id and data, and checks that it is a
// pet of the watch of status that follows the pet with ID last.
func watchedPet(id, data string, status petstore.Status, last int64) (petstore.Pet, error) {
	var p petstore.Pet
	if err := json.Unmarshal([]byte(data), &p); err != nil {
		return petstore.Pet{}, fmt.Errorf("%w: an event is not a pet: %w", ErrBadResponse, err)
	}
	switch {
	case strconv.FormatInt(p.ID, 10) != id:
		return p, fmt.Errorf("%w: the event with id %q holds the pet with ID %d", ErrBadResponse, cut(id), p.ID)
	case p.ID <= last:
		return p, fmt.Errorf("%w: the pet with ID %d follows the pet with ID %d; a watch goes in ascending order", ErrBadResponse, p.ID, last)
	case status != "" && p.Status != status:
		return p, fmt.Errorf("%w: the pet with ID %d has the status %q, not %q as asked", ErrBadResponse, p.ID, cut(string(p.Status)), status)
	}
	return p, nil
}

package petstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/petstore-go/petstore/httpapi"
	"github.com/petstore-go/petstore/internal/wake"
)

// Watch configures the watch streams of GET /pets (see WithWatch). A zero
// field takes its default.
type Watch struct {
	// Poll is the longest wait between two reads of the store for pets
	// created elsewhere (by another instance, say); pets created through
	// the handler are sent at once. With an AddNotifier, pets created
	// anywhere are sent at once, and the poll, which then only covers a
	// lost notification, is ten times longer. The default is
	// DefaultWatchPoll, 1 second.
	Poll time.Duration
	// Heartbeat is the longest a stream stays silent before the handler
	// sends a comment line, so that no proxy closes it. The default is
	// DefaultWatchHeartbeat, 15 seconds.
	Heartbeat time.Duration
	// WriteTimeout bounds each write to a stream (a heartbeat or up to 100
	// events), in place of the server's WriteTimeout: a client that does
	// not take a write within it is disconnected, and resumes with
	// Last-Event-ID. The default is DefaultWatchWriteTimeout, 10 seconds.
	WriteTimeout time.Duration
	// MaxStreams caps the streams open at once on the handler; a watch over
	// it is answered 429 rate_limited with Retry-After. The default is
	// DefaultMaxStreams, 1000.
	MaxStreams int
	// MaxStreamsPerPrincipal caps, likewise, the streams of one principal
	// (see Principal). The default is DefaultMaxStreamsPerPrincipal, 100.
	MaxStreamsPerPrincipal int
	// Done, once closed, ends every stream and answers later watches 503
	// unavailable with Retry-After, so that a server shutting down need not
	// wait for its streams: close it from http.Server.RegisterOnShutdown.
	// A stream also ends with its request's context. The default, nil, is
	// never closed.
	Done <-chan struct{}
	// Observe, when set, is called from a stream's goroutine with each
	// change in the streams, and must be safe for concurrent use.
	// otelpetstore's Telemetry.ObserveWatch records them as metrics.
	Observe func(ctx context.Context, o WatchObservation)
}

// A WatchObservation is one change in a handler's watch streams (see
// Watch.Observe).
type WatchObservation struct {
	// Streams is 1 when a stream opens, -1 when it ends, 0 otherwise.
	Streams int
	// Events is the number of events just sent on a stream.
	Events int
}

// WithWatch configures the watch streams of GET /pets, which a client asks
// for with Accept: text/event-stream: the pets after the cursor, or after
// the ID of Last-Event-ID, then each new pet as it is created, each as an
// event whose id is the pet's ID and whose data is the pet's JSON. A client
// that reconnects with Last-Event-ID misses and repeats no pet, on any
// instance serving the same store. Without the option, watches have the
// defaults of Watch.
func WithWatch(w Watch) Option {
	return optionFunc(func(c *config) error {
		c.watch = w
		return errors.Join(orDefault("Poll", &c.watch.Poll, DefaultWatchPoll, "duration"),
			orDefault("Heartbeat", &c.watch.Heartbeat, DefaultWatchHeartbeat, "duration"),
			orDefault("WriteTimeout", &c.watch.WriteTimeout, DefaultWatchWriteTimeout, "duration"),
			orDefault("MaxStreams", &c.watch.MaxStreams, DefaultMaxStreams, "cap"),
			orDefault("MaxStreamsPerPrincipal", &c.watch.MaxStreamsPerPrincipal, DefaultMaxStreamsPerPrincipal, "cap"))
	})
}

// orDefault sets *v, the field name of Watch, to def when it is 0, and
// reports it when it is negative.
func orDefault[T int | time.Duration](name string, v *T, def T, noun string) error {
	switch {
	case *v < 0:
		return fmt.Errorf("WithWatch: %s is %v; use a positive %s, or 0 for %v", name, *v, noun, def)
	case *v == 0:
		*v = def
	}
	return nil
}

// wantsStream reports whether r asks for a watch: one of its Accept media
// ranges is text/event-stream, without q=0. A client that asks for JSON, or
// for anything, is answered a page of JSON.
func wantsStream(r *http.Request) bool { return accepts(r.Header["Accept"], "text/event-stream") }

// Bounds of the watch streams; docs/watch.md gives the figures behind them.
const (
	// watchPage is the most pets read by one store call of a watch, and
	// sent in one write.
	watchPage = 100
	// maxViewLog is the most recent pets that a view keeps for its
	// streams; a stream further behind reads the store itself.
	maxViewLog = 1024
	// maxViewBytes bounds the petBytes that the views of a handler hold
	// together. Past it, every view drops its oldest pets down to an equal
	// share of half of it.
	maxViewBytes = 16 << 20
	// notifiedPoll is how many times longer the poll is when the store is
	// an AddNotifier, since it then only covers a lost notification.
	notifiedPoll = 10
	// watchMinGap is the least time between two rounds of the reader, so
	// that a burst of wakes costs a round every few milliseconds at most.
	watchMinGap = 5 * time.Millisecond
	// The reader pauses for watchWavePause after waking the streams of each
	// watchWave views, so that requests arriving meanwhile are served
	// between the writers rather than behind all of them (another key's p99
	// went from 3 to 25 ms at ten creates a second without it).
	watchWave      = 32
	watchWavePause = time.Millisecond
	// maxStreamBuf is the largest buffer a stream keeps between writes, so
	// that a thousand idle streams hold 4 MiB at most.
	maxStreamBuf = 4 << 10
)

// petBytes is the memory that a pet in a view's log holds: the Pet and its
// name.
func petBytes(p *Pet) int64 { return 48 + int64(len(p.Name)) }

// A hub serves the watch streams of one handler. One reader goroutine,
// running while any stream is open, keeps one view per principal and
// status filter, and reads each view's new pets once per poll, or soon
// after a wake (the handler created a pet, or the AddNotifier store tells
// of one). Wakes coalesce into rounds, which read every view once, at least
// watchMinGap apart or as long as the last round took. Streams of one view
// share what it read, so store calls depend on the views, not the streams.
type hub struct {
	cfg      Watch
	store    *guardedStore
	notifier AddNotifier // the store's, or nil
	log      *slog.Logger

	wake chan struct{} // pets were added; buffered, never closed

	mu           sync.Mutex
	views        map[viewKey]*view
	open         int            // streams
	perPrincipal map[string]int // streams by principal
	reading      bool           // the reader goroutine runs

	seen wake.Highest // the greatest ID of a pet that the store returned
	held atomic.Int64 // the petBytes of the views' logs
}

// newHub returns the hub of a handler with store.
func newHub(cfg Watch, store *guardedStore, log *slog.Logger) *hub {
	n, _ := store.s.(AddNotifier)
	return &hub{cfg: cfg, store: store, notifier: n, log: log, wake: make(chan struct{}, 1),
		views: map[viewKey]*view{}, perPrincipal: map[string]int{}}
}

// created tells the hub that the handler has created a pet, so that its
// streams need not wait for the next poll. A store that is an AddNotifier
// has woken the hub already.
func (h *hub) created(id int64) {
	h.seen.Raise(id)
	if h.notifier == nil {
		h.signal()
	}
}

// signal wakes the reader; wakes that come before it runs coalesce.
func (h *hub) signal() {
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// A viewKey names what a stream sees: its caller and its status filter.
type viewKey struct {
	principal string
	status    Status
}

// A view is what the streams of one viewKey share: the pets the reader has
// read for them. log holds every pet that List returns for the view with an
// ID in (start, last], in ascending order.
type view struct {
	ctx    context.Context // the store calls' context: the first stream's caller, without its cancellation
	status Status
	users  int // streams, guarded by the hub's mu

	mu      sync.Mutex
	primed  bool // start and last are set
	gone    bool // its last stream left: it holds and takes no pets
	start   int64
	last    int64
	log     []Pet
	bytes   int64         // the petBytes of log
	changed chan struct{} // closed when log grows, then replaced
}

// join registers a stream of the caller ctx with status; over a cap, it
// returns the error to answer with.
func (h *hub) join(ctx context.Context, status Status) (*view, *requestError) {
	p := Principal(ctx)
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.open >= h.cfg.MaxStreams:
		return nil, &requestError{code: httpapi.CodeRateLimited, message: "the server holds as many watch streams as it allows; retry later"}
	case h.perPrincipal[p] >= h.cfg.MaxStreamsPerPrincipal:
		return nil, &requestError{code: httpapi.CodeRateLimited, message: "this caller holds " +
			strconv.Itoa(h.cfg.MaxStreamsPerPrincipal) + " watch streams, the most allowed; close one or retry later"}
	}
	k := viewKey{principal: p, status: status}
	v := h.views[k]
	if v == nil {
		v = &view{ctx: context.WithoutCancel(ctx), status: status, changed: make(chan struct{})}
		h.views[k] = v
	}
	v.users++
	h.open++
	h.perPrincipal[p]++
	if !h.reading {
		h.reading = true
		go h.read()
	}
	return v, nil
}

// leave unregisters a stream of the caller ctx from v.
func (h *hub) leave(ctx context.Context, v *view) {
	p := Principal(ctx)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.open--
	if h.perPrincipal[p]--; h.perPrincipal[p] == 0 {
		delete(h.perPrincipal, p)
	}
	if v.users--; v.users == 0 {
		delete(h.views, viewKey{principal: p, status: v.status})
		v.mu.Lock()
		v.gone = true
		h.held.Add(-v.bytes)
		v.log, v.bytes = nil, 0
		v.mu.Unlock()
	}
}

// read is the reader goroutine: it reads every view's new pets once per
// poll, or when woken, until no stream is open. It listens to the store's
// notifications while it runs.
func (h *hub) read() {
	poll := h.cfg.Poll
	if h.notifier != nil {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		h.notifier.NotifyAdds(ctx, h.signal)
		h.signal() // a round now: a pet added before NotifyAdds woke no one
		if poll <= math.MaxInt64/notifiedPoll {
			poll *= notifiedPoll
		}
	}
	t := time.NewTimer(poll)
	defer t.Stop()
	var views []*view
	for {
		select {
		case <-t.C:
		case <-h.wake:
			t.Stop()
		}
		start := time.Now()
		h.mu.Lock()
		if len(h.views) == 0 {
			h.reading = false
			h.mu.Unlock()
			return
		}
		views = slices.AppendSeq(views[:0], maps.Values(h.views))
		h.mu.Unlock()
		grown := 0
		for _, v := range views {
			grew, err := h.poll(v)
			if err != nil {
				h.log.LogAttrs(context.Background(), slog.LevelWarn, "petstore: watch failed to read the store",
					slog.String("error", err.Error()))
			}
			if grew {
				if grown++; grown%watchWave == 0 {
					time.Sleep(watchWavePause)
				}
			}
		}
		gap := max(watchMinGap, time.Since(start))
		time.Sleep(gap)
		t.Reset(max(poll-gap, 0))
	}
}

// poll reads v's pets after the last it holds, unless no stream has
// caught up with the store yet and so set where v starts.
func (h *hub) poll(v *view) (grew bool, err error) {
	v.mu.Lock()
	primed, last := v.primed, v.last
	v.mu.Unlock()
	if !primed {
		return false, nil
	}
	for {
		pets, err := h.store.List(v.ctx, ListOptions{Status: v.status, Limit: watchPage, After: last})
		if err != nil || len(pets) == 0 {
			return grew, err
		}
		grew = true
		last = lastID(pets)
		h.seen.Raise(last)
		if h.held.Add(v.append(pets)) > maxViewBytes {
			h.shrink()
		}
		if len(pets) < watchPage {
			return true, nil
		}
	}
}

// shrink drops the oldest pets of every view, down to an equal share of
// half of maxViewBytes.
func (h *hub) shrink() {
	h.mu.Lock()
	views := slices.Collect(maps.Values(h.views))
	h.mu.Unlock()
	share := maxViewBytes / int64(2*max(len(views), 1))
	for _, v := range views {
		v.mu.Lock()
		before := v.bytes
		n := 0
		for b := v.bytes; b > share && n < len(v.log); n++ {
			b -= petBytes(&v.log[n])
		}
		v.drop(n)
		h.held.Add(v.bytes - before)
		v.mu.Unlock()
	}
}

// append adds pets, which follow v's last, to v's log, wakes its streams,
// and returns by how much v's bytes grew.
func (v *view) append(pets []Pet) int64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.gone {
		return 0
	}
	before := v.bytes
	if len(v.log)+len(pets) > maxViewLog { // drop the older half
		v.drop(min(len(v.log), len(v.log)+len(pets)-maxViewLog/2))
	}
	for i := range pets {
		v.bytes += petBytes(&pets[i])
	}
	v.log = append(v.log, pets...)
	v.last = pets[len(pets)-1].ID
	close(v.changed)
	v.changed = make(chan struct{})
	return v.bytes - before
}

// drop drops the n oldest pets of v's log, to a new array that no stream
// holds; a stream behind them reads the store itself. v.mu is held.
func (v *view) drop(n int) {
	if n <= 0 {
		return
	}
	for i := range n {
		v.bytes -= petBytes(&v.log[i])
	}
	v.start = v.log[n-1].ID
	v.log = append([]Pet(nil), v.log[n:]...)
}

// since returns the pets of v's log after after, and a channel closed when
// more arrive. ok is false when v cannot tell: it holds no pets from right
// after after, so the stream must read the store itself.
func (v *view) since(after int64) (pets []Pet, changed <-chan struct{}, ok bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if !v.primed || after < v.start {
		return nil, nil, false
	}
	i := sort.Search(len(v.log), func(i int) bool { return v.log[i].ID > after })
	n := min(len(v.log), i+watchPage)
	return v.log[i:n:n], v.changed, true
}

// prime gives v its start, unless it has one.
func (v *view) prime(start int64) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if !v.primed {
		v.primed, v.start, v.last = true, start, start
	}
}

// catchUp reads from the store, with the caller's ctx, the next pets of v
// after after, for a stream that v's log cannot serve. It returns them and
// the position after which the stream goes on.
//
// Once the stream has caught up (a short page), v can serve it: catchUp
// gives v its start if it has none, or moves the stream on to v's start.
// Either is safe only at a position at or below the ID of a pet that the
// store has returned, since no pet appears below such a one (see Store):
// the last of the page, or else the stream's own position if no greater ID
// has been seen. A position ahead of every pet, from a made-up cursor,
// never becomes a view's start, which would hide the pets below it.
func (h *hub) catchUp(ctx context.Context, v *view, after int64) ([]Pet, int64, error) {
	v.mu.Lock()
	primed, start := v.primed, v.start
	v.mu.Unlock()
	pets, err := h.store.List(ctx, ListOptions{Status: v.status, Limit: watchPage, After: after})
	if err != nil {
		return nil, after, err
	}
	next := max(after, lastID(pets))
	h.seen.Raise(lastID(pets))
	switch {
	case len(pets) == watchPage: // more follow
	case primed:
		// The page, read after v had its start, holds every pet of the
		// view after the stream's position, and none can appear up to
		// start: start is at or below a pet that was returned earlier.
		next = max(next, start)
	case len(pets) > 0:
		v.prime(next)
	default:
		v.prime(min(after, h.seen.Load()))
	}
	return pets, next, nil
}

// watch answers GET /pets with Accept: text/event-stream: the stream of the
// pets that q selects after q.after, or after Last-Event-ID, which wins.
// Once the answer has started, it ends the stream on a failure, after
// logging it, and returns nil: the client resumes with Last-Event-ID.
func (h *handler) watch(ctx context.Context, w http.ResponseWriter, r *http.Request, q listQuery) error {
	if v := r.Header["Last-Event-Id"]; len(v) > 0 {
		id, err := strconv.ParseInt(v[0], 10, 64)
		if len(v) > 1 || err != nil || v[0][0] < '0' || v[0][0] > '9' { // no sign
			return invalidParameter("Last-Event-ID must be the id of an event of the stream, a pet ID; send it once, as received")
		}
		q.after = id
	}
	cfg := &h.hub.cfg
	select {
	case <-cfg.Done:
		return &requestError{code: httpapi.CodeUnavailable, header: "Retry-After", value: h.retryAfter,
			message: "the server is shutting down; watch again, on another instance if there is one"}
	default:
	}
	v, refused := h.hub.join(ctx, q.status)
	if refused != nil {
		refused.header, refused.value = "Retry-After", h.retryAfter
		return refused
	}
	defer h.hub.leave(ctx, v)
	observe := func(WatchObservation) {}
	if cfg.Observe != nil {
		observe = func(o WatchObservation) { cfg.Observe(ctx, o) }
	}
	observe(WatchObservation{Streams: 1})
	defer observe(WatchObservation{Streams: -1})

	hdr := w.Header()
	hdr.Set("Content-Type", "text/event-stream")
	hdr.Set("Cache-Control", "no-store")
	hdr.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return nil
	}
	var buf []byte // kept between writes, up to maxStreamBuf
	rc := http.NewResponseController(w)
	defer func() { _ = rc.SetWriteDeadline(time.Time{}) }() // the answer is over: no deadline of a stream's outlives it
	// send writes one event for each of pets, or for none the heartbeat
	// comment (sent when the stream opens and after Heartbeat of silence),
	// and flushes them, within the write timeout.
	send := func(pets []Pet) error {
		b := buf[:0]
		if len(pets) == 0 {
			b = append(b, ": heartbeat\n\n"...)
		}
		for i := range pets {
			b = append(b, "id: "...)
			b = strconv.AppendInt(b, pets[i].ID, 10)
			b = append(b, "\ndata: "...)
			b = appendPet(b, &pets[i])
			b = append(b, "\n\n"...)
		}
		if cap(b) <= maxStreamBuf {
			buf = b
		}
		if err := rc.SetWriteDeadline(time.Now().Add(cfg.WriteTimeout)); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return err
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
		return rc.Flush()
	}
	if err := send(nil); err != nil {
		return nil
	}
	heartbeat := time.NewTimer(cfg.Heartbeat)
	defer heartbeat.Stop()
	after := q.after
	paid := true // the request's own read pays for the first page
	for {
		pets, changed, ok := v.since(after)
		next := lastID(pets)
		if !ok { // behind v's log, or v has no start yet
			var err error
			if !paid {
				err = h.spendRead(ctx)
			}
			paid = false
			if err == nil {
				pets, next, err = h.hub.catchUp(ctx, v, after)
			}
			if err != nil {
				if ctx.Err() == nil && !errors.Is(err, errWatchDone) {
					h.log.LogAttrs(ctx, slog.LevelWarn, "petstore: watch failed to read the store", slog.String("error", err.Error()))
				}
				return nil
			}
		}
		if len(pets) > 0 {
			if err := send(pets); err != nil {
				return nil
			}
			observe(WatchObservation{Events: len(pets)})
			heartbeat.Reset(cfg.Heartbeat)
		}
		if !ok || len(pets) > 0 {
			after = next
			continue
		}
		select {
		case <-changed:
		case <-heartbeat.C:
			if err := send(nil); err != nil {
				return nil
			}
			heartbeat.Reset(cfg.Heartbeat)
		case <-ctx.Done():
			return nil
		case <-cfg.Done:
			return nil
		}
	}
}

// spendRead spends one read of the caller's budget (RateLimit.Reads) on a
// page that a stream reads from the store for itself, waiting until the
// budget holds one. It fails when the Limiter fails, unless
// RateLimit.FailOpen is set, and when ctx ends or Watch.Done is closed.
func (h *handler) spendRead(ctx context.Context) error {
	l := h.rateLimit.reads.Limiter
	for l != nil {
		wait, err := l.Allow(ctx, Principal(ctx))
		switch {
		case err != nil && h.rateLimit.failOpen, err == nil && wait <= 0:
			return nil
		case err != nil:
			return fmt.Errorf("%w: %w", errLimiter, err)
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-h.hub.cfg.Done:
			t.Stop()
			return errWatchDone
		}
	}
	return nil
}

// errWatchDone ends a stream when Watch.Done is closed.
var errWatchDone = errors.New("petstore: the watch streams are closed")

// lastID returns the ID of the last of pets, or 0 for none.
func lastID(pets []Pet) int64 {
	if len(pets) == 0 {
		return 0
	}
	return pets[len(pets)-1].ID
}

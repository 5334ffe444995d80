package petstore

import (
	"context"
	"errors"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/petstore-go/petstore/httpapi"
	"github.com/petstore-go/petstore/internal/body"
	"github.com/petstore-go/petstore/internal/respond"
)

// The serve functions of the route table (see apiRoutes), one per operation.

// listPets answers GET /pets: a page of pets ascending by ID and, while more
// follow, a Link to the next page. A full page, one of limit pets, has a
// strong ETag and answers If-None-Match with 304 (see cacheFinal and
// cacheLastFull); a page that can still grow has none.
func (h *handler) listPets(ctx context.Context, w http.ResponseWriter, r *http.Request, _ pathParams) error {
	q, err := parseListQuery(r.URL.RawQuery)
	if err != nil {
		return err
	}
	if wantsStream(r) {
		return h.watch(ctx, w, r, q)
	}
	// One pet more than the page tells whether another page follows.
	pets, err := h.store.List(ctx, ListOptions{Status: q.status, Limit: q.limit + 1, After: q.after})
	if err != nil {
		return err
	}
	buf := h.buffers.Get()
	defer h.buffers.Put(buf)
	more := len(pets) > q.limit
	if more {
		pets = pets[:q.limit]
		next := q
		next.after = pets[len(pets)-1].ID
		w.Header()["Link"] = next.linkValue()
	}
	*buf = append(appendPets((*buf)[:0], pets), '\n')
	switch {
	case more: // pets never change, and none can join a page that others follow
		respond.Cacheable(w, r, *buf, respond.NewTag(*buf, 1), cacheFinal)
	case len(pets) == q.limit: // final but for the Link it gains when a pet is added
		respond.Cacheable(w, r, *buf, respond.NewTag(*buf, 0), cacheLastFull)
	default: // the last page, which grows as pets are added
		respond.JSON(w, r, http.StatusOK, *buf)
	}
	return nil
}

// The Cache-Control values of the answers that carry an ETag, shared and
// never modified: cacheFinal for what never changes (a pet, a full page
// that others follow), cacheLastFull for a full page that gains a Link, and
// so another ETag, when a pet is added. The answer is the caller's, so no
// shared cache keeps either.
var (
	cacheFinal    = []string{"private, max-age=3600"}
	cacheLastFull = []string{"private, no-cache"}
)

// createPet answers POST /pets: it adds the pet in the body and answers 201
// with the pet as stored and its Location. With an Idempotency-Key, a retry
// of a create that was stored is answered with the same pet, and the header
// Idempotent-Replayed: true.
func (h *handler) createPet(ctx context.Context, w http.ResponseWriter, r *http.Request, _ pathParams) error {
	key, err := idempotencyKey(r.Header)
	if err != nil {
		return err
	}
	if ct := r.Header["Content-Type"]; len(ct) != 1 || !body.IsJSON(ct[0]) {
		return &requestError{code: httpapi.CodeUnsupportedMediaType, header: "Accept-Post", value: acceptPost,
			message: "the body must be JSON; send Content-Type: application/json"}
	}
	// A body gets a read deadline of its own, whatever the server's
	// timeouts. It stays: net/http sets the connection's own before the
	// next request, and what is left of a failed body must give up at once.
	rc := http.NewResponseController(w)
	if err := rc.SetReadDeadline(time.Now().Add(h.bodyTimeout)); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	buf := h.buffers.Get()
	defer h.buffers.Put(buf)
	b, err := body.Read(r, h.maxBody, *buf)
	*buf = b[:0]
	switch {
	case errors.Is(err, body.ErrTooLarge):
		return &requestError{code: httpapi.CodePayloadTooLarge,
			message: "the body is larger than " + strconv.FormatInt(h.maxBody, 10) + " bytes; send a smaller pet"}
	case errors.Is(err, os.ErrDeadlineExceeded):
		// The body's read deadline passed: the client is too slow, not
		// gone, though over HTTP/1.1 the failed read of the connection
		// cancels the request's context too.
		return &requestError{code: httpapi.CodeInvalidBody, message: "the body did not arrive in time; send it again, faster"}
	case err != nil && errors.Is(r.Context().Err(), context.Canceled):
		return r.Context().Err() // the client went away while sending it
	case errors.Is(err, ErrUnavailable):
		return err // a host's limit on the bodies read at once: retry later
	case err != nil:
		return &requestError{code: httpapi.CodeInvalidBody, message: "the body could not be read; send it again"}
	}
	p, err := decodeNewPet(b)
	if err != nil {
		return err
	}
	if key != "" {
		k := Principal(ctx) + "\n" + key // a key holds no newline: each principal's keys are apart
		if err := h.running.take(k); err != nil {
			return err
		}
		defer h.running.done(k)
	}
	pet, replayed, err := h.store.Add(ctx, p, AddOptions{IdempotencyKey: key})
	if err != nil {
		return err
	}
	h.hub.created(pet.ID)
	if replayed {
		w.Header()["Idempotent-Replayed"] = idempotentReplayed
	}
	w.Header()["Location"] = []string{"pets/" + strconv.FormatInt(pet.ID, 10)}
	*buf = append(appendPet((*buf)[:0], &pet), '\n')
	respond.JSON(w, r, http.StatusCreated, *buf)
	return nil
}

// getPet answers GET /pets/{petId}, which is deprecated (see apiRoutes). A
// pet never changes, so the answer has a strong ETag and answers
// If-None-Match with 304.
func (h *handler) getPet(ctx context.Context, w http.ResponseWriter, r *http.Request, p pathParams) error {
	id, err := parsePetID(p[0])
	if err != nil {
		return err
	}
	pet, err := h.store.Get(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return &requestError{code: httpapi.CodeNotFound, message: "no pet has ID " + strconv.FormatInt(id, 10) + "; list pets with GET " + h.petsPath}
	}
	if err != nil {
		return err
	}
	buf := h.buffers.Get()
	defer h.buffers.Put(buf)
	*buf = append(appendPet(*buf, &pet), '\n')
	respond.Cacheable(w, r, *buf, respond.NewTag(*buf, 0), cacheFinal)
	return nil
}

// serveOpenAPI answers GET of the OpenAPI document, which is served without
// authentication (see WithOpenAPI).
func (h *handler) serveOpenAPI(_ context.Context, w http.ResponseWriter, r *http.Request, _ pathParams) error {
	respond.JSON(w, r, http.StatusOK, h.openAPI)
	return nil
}

// linkValue returns the value of the Link header to the page that q asks
// for.
func (q listQuery) linkValue() []string {
	var b [128]byte // room for the longest, so that appendLink need not grow it
	return []string{string(q.appendLink(b[:0]))}
}

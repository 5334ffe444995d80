package petstore

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync"

	"github.com/petstore-go/petstore/httpapi"
)

// listPets answers GET /pets: a page of pets ascending by ID and, while more
// follow, a Link to the next page.
func (h *handler) listPets(ctx context.Context, w http.ResponseWriter, r *http.Request) {
	q, err := parseListQuery(r.URL.RawQuery)
	if err != nil {
		httpapi.WriteError(w, r, httpapi.CodeInvalidParameter, err.Error())
		return
	}
	if err := ctx.Err(); err != nil {
		h.failed(w, r, OpListPets, err)
		return
	}
	// One pet more than the page tells whether another page follows.
	opts := ListOptions{Status: q.status, Limit: q.limit + 1, After: q.after}
	scratch := h.lists.get()
	defer h.lists.put(scratch)
	var pets []Pet
	if a, ok := h.store.(listAppender); ok {
		pets, err = a.AppendList(ctx, scratch.pets[:0], opts)
		scratch.pets = pets
	} else {
		pets, err = h.store.List(ctx, opts)
	}
	if err != nil {
		h.failed(w, r, OpListPets, err)
		return
	}
	if len(pets) > q.limit {
		pets = pets[:q.limit]
		next := q
		next.after = pets[len(pets)-1].ID
		w.Header()["Link"] = []string{string(next.appendLink(make([]byte, 0, 96)))}
	}
	scratch.body = appendPets(scratch.body[:0], pets)
	httpapi.WriteJSON(w, r, http.StatusOK, scratch.body)
}

// createPet answers POST /pets: it adds the pet in the body and answers 201
// with the pet as stored and its Location.
func (h *handler) createPet(ctx context.Context, w http.ResponseWriter, r *http.Request) {
	if ct := r.Header["Content-Type"]; len(ct) != 1 || !httpapi.IsJSON(ct[0]) {
		w.Header()["Accept-Post"] = h.acceptPost
		httpapi.WriteError(w, r, httpapi.CodeUnsupportedMediaType, "the body must be JSON; send Content-Type: application/json")
		return
	}
	buf := h.buffers.Get()
	defer h.buffers.Put(buf)
	body, err := httpapi.ReadBody(r, h.maxBody, *buf)
	*buf = body[:0]
	switch {
	case errors.Is(err, httpapi.ErrTooLarge):
		httpapi.WriteError(w, r, httpapi.CodePayloadTooLarge,
			"the body is larger than "+strconv.FormatInt(h.maxBody, 10)+" bytes; send a smaller pet")
		return
	case err != nil:
		httpapi.WriteError(w, r, httpapi.CodeInvalidBody, "the body could not be read; send it again")
		return
	}
	p, err := decodeNewPet(body)
	if err != nil {
		httpapi.WriteError(w, r, httpapi.CodeInvalidBody, err.Error())
		return
	}
	if err := ctx.Err(); err != nil {
		h.failed(w, r, OpCreatePet, err)
		return
	}
	pet, err := h.store.Add(ctx, p)
	if err != nil {
		h.failed(w, r, OpCreatePet, err)
		return
	}
	w.Header()["Location"] = []string{"pets/" + strconv.FormatInt(pet.ID, 10)}
	*buf = appendPet((*buf)[:0], &pet)
	httpapi.WriteJSON(w, r, http.StatusCreated, *buf)
}

// getPet answers GET /pets/{petId}, which is deprecated: every answer carries
// the Deprecation, Sunset and successor Link headers.
func (h *handler) getPet(ctx context.Context, w http.ResponseWriter, r *http.Request, rawID string) {
	hdr := w.Header()
	hdr["Deprecation"] = h.deprecation
	hdr["Sunset"] = h.sunset
	hdr["Link"] = h.successor
	id, err := parsePetID(rawID)
	if err != nil {
		httpapi.WriteError(w, r, httpapi.CodeInvalidParameter, err.Error())
		return
	}
	if err := ctx.Err(); err != nil {
		h.failed(w, r, OpGetPet, err)
		return
	}
	pet, err := h.store.Get(ctx, id)
	switch {
	case errors.Is(err, ErrNotFound):
		httpapi.WriteError(w, r, httpapi.CodeNotFound, "no pet has ID "+strconv.FormatInt(id, 10)+"; list pets with GET /pets")
		return
	case err != nil:
		h.failed(w, r, OpGetPet, err)
		return
	}
	buf := h.buffers.Get()
	*buf = appendPet(*buf, &pet)
	httpapi.WriteJSON(w, r, http.StatusOK, *buf)
	h.buffers.Put(buf)
}

// listAppender is a Store that can append a page of pets to a slice that the
// caller owns, as memstore.Store.AppendList does. Given the same options,
// AppendList appends the pets that List returns. The handler lists with it
// when the store has it, into a slice it reuses across requests, so that a
// page costs no allocation.
type listAppender interface {
	AppendList(ctx context.Context, dst []Pet, opts ListOptions) ([]Pet, error)
}

// listScratch is the memory that listing reuses across requests: the page
// that a listAppender store lists into and the body it is encoded into.
type listScratch struct {
	pets []Pet
	body []byte
}

// listPool recycles listScratch. The zero value is ready to use.
type listPool struct {
	pool sync.Pool
}

func (p *listPool) get() *listScratch {
	if s, ok := p.pool.Get().(*listScratch); ok {
		return s
	}
	return &listScratch{pets: make([]Pet, 0, MaxPageSize+1), body: make([]byte, 0, 4096)}
}

// put returns s to the pool, unless a store or a long page grew it beyond
// what a page needs. The pets in it are not cleared: they hold the names of
// at most one page, which in memstore are part of the store's own memory
// anyway.
func (p *listPool) put(s *listScratch) {
	if cap(s.pets) > MaxPageSize+1 || cap(s.body) > 64<<10 {
		return
	}
	p.pool.Put(s)
}

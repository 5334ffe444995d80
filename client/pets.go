package client

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/internal/wire"
)

// Add creates the pet p with POST /pets and returns it as the server
// stored it. Every create carries an Idempotency-Key, opts.IdempotencyKey
// or a random one made for this call, so that a retry never creates the pet
// twice; replayed is true when the server answered with the pet that an
// earlier create with the caller's key stored. A name that is not valid
// UTF-8 is refused without a request, wrapping petstore.ErrInvalidPet. An
// answer that is not the pet sent, with a positive ID, gives an error
// wrapping ErrBadResponse.
func (c *Client) Add(ctx context.Context, p petstore.NewPet, opts petstore.AddOptions) (pet petstore.Pet, replayed bool, err error) {
	if !utf8.ValidString(p.Name) {
		return petstore.Pet{}, false, fmt.Errorf("client: Add: %w: the name is not valid UTF-8, which JSON cannot carry", petstore.ErrInvalidPet)
	}
	cl := c.newCall(ctx, http.MethodPost)
	cl.body, _ = json.Marshal(p) // a NewPet always marshals
	cl.idem = opts.IdempotencyKey
	if cl.idem == "" {
		cl.idem = rand.Text()
	}
	ans, err := c.do(cl, c.pets, http.StatusCreated)
	if err != nil {
		return petstore.Pet{}, false, err
	}
	if err := json.Unmarshal(ans.body, &pet); err != nil {
		return petstore.Pet{}, false, fmt.Errorf("client: POST %s: the answer is not a pet: %w", c.pets, err)
	}
	if err := checkCreated(pet, p); err != nil {
		return petstore.Pet{}, false, fmt.Errorf("client: POST %s: %w", c.pets, err)
	}
	return pet, opts.IdempotencyKey != "" && ans.header.Get("Idempotent-Replayed") == "true", nil
}

// Get returns the pet with the given ID, with GET /pets/{petId}, which the
// server marks deprecated; Get ignores that, since a Store needs it. For an
// ID that no pet has, the error wraps petstore.ErrNotFound; an answer with a
// pet of another ID gives an error wrapping ErrBadResponse.
func (c *Client) Get(ctx context.Context, id int64) (petstore.Pet, error) {
	target := c.pets + "/" + strconv.FormatInt(id, 10)
	ans, err := c.do(c.newCall(ctx, http.MethodGet), target, http.StatusOK)
	if err != nil {
		return petstore.Pet{}, err
	}
	var pet petstore.Pet
	if err := json.Unmarshal(ans.body, &pet); err != nil {
		return petstore.Pet{}, fmt.Errorf("client: GET %s: the answer is not a pet: %w", target, err)
	}
	if pet.ID != id {
		return petstore.Pet{}, fmt.Errorf("client: GET %s: %w: the answer is the pet with ID %d, not %d as asked", target, ErrBadResponse, pet.ID, id)
	}
	return pet, nil
}

// List returns the pets that opts selects, ascending by ID, as petstore.Store
// defines it, reading the pages as All does; on an error it returns the
// first one that All yields, and no pets. With opts.Limit 0 it collects at
// most MaxListPets pets, and past them returns an error wrapping
// ErrTooManyPets, so that a server whose pages never end cannot fill the
// memory.
func (c *Client) List(ctx context.Context, opts petstore.ListOptions) ([]petstore.Pet, error) {
	var pets []petstore.Pet
	if opts.Limit > 0 {
		pets = make([]petstore.Pet, 0, min(opts.Limit, c.pageSize))
	}
	for p, err := range c.All(ctx, opts) {
		if err != nil {
			return nil, err
		}
		if opts.Limit == 0 && len(pets) == c.maxList {
			return nil, fmt.Errorf("client: List: %w: more than %d pets, the most that List collects without a Limit (MaxListPets); set ListOptions.Limit, or read the pets with All, which holds one page at a time",
				ErrTooManyPets, c.maxList)
		}
		pets = append(pets, p)
	}
	return pets, nil
}

// All returns an iterator over the pets that opts selects, ascending by ID:
// those with an ID greater than opts.After and, when opts.Status is set,
// that status; at most opts.Limit of them, or all when it is 0.
//
// All sends one request per page of petstore.MaxPageSize pets and follows
// the Link rel="next" header until the last page or until the loop stops,
// holding one page at a time. It never yields a pet whose ID is not greater
// than the one before, so it visits every pet that existed when it started
// exactly once, also while pets are added. A page that the client does not
// trust (see ErrBadResponse), or a Link that leaves the base URL (see
// ErrRedirectRefused), ends the iterator with an error and the zero Pet.
func (c *Client) All(ctx context.Context, opts petstore.ListOptions) iter.Seq2[petstore.Pet, error] {
	return func(yield func(petstore.Pet, error) bool) {
		if opts.Limit < 0 {
			yield(petstore.Pet{}, fmt.Errorf("client: ListOptions.Limit is %d; use 0 for every pet, or a positive cap", opts.Limit))
			return
		}
		cl := c.newCall(ctx, http.MethodGet)
		cl.limit = maxPageOverhead + int64(c.pageSize)*maxPagePetBytes
		limit := min(c.pageSize, cmp.Or(opts.Limit, c.pageSize)) // a Limit of 0 is none
		target := c.petsURL(opts, url.Values{"limit": {strconv.Itoa(limit)}})
		last, n := opts.After, 0
		for {
			ans, err := c.do(cl, target, http.StatusOK)
			if err != nil {
				yield(petstore.Pet{}, err)
				return
			}
			var page []petstore.Pet
			if err := json.Unmarshal(ans.body, &page); err != nil {
				yield(petstore.Pet{}, fmt.Errorf("client: GET %s: the answer is not a list of pets: %w", target, err))
				return
			}
			if err := checkPage(page, c.pageSize, opts.Status); err != nil {
				yield(petstore.Pet{}, fmt.Errorf("client: GET %s: %w", target, err))
				return
			}
			fresh := 0
			for _, p := range page {
				if p.ID <= last {
					continue
				}
				last = p.ID
				fresh++
				if !yield(p, nil) {
					return
				}
				if n++; opts.Limit > 0 && n >= opts.Limit {
					return
				}
			}
			ref, ok := nextLink(ans.header["Link"])
			if !ok {
				return
			}
			if fresh == 0 {
				yield(petstore.Pet{}, fmt.Errorf("client: GET %s: the page has no pet after ID %d but links to another; the server's paging is broken", target, last))
				return
			}
			if target, err = c.resolve(target, ref); err != nil {
				yield(petstore.Pet{}, err)
				return
			}
		}
	}
}

// petsURL returns the URL of the pets that opts selects, with the query q
// and opts's status and cursor.
func (c *Client) petsURL(opts petstore.ListOptions, q url.Values) string {
	if opts.Status != "" {
		q.Set("status", string(opts.Status))
	}
	if opts.After > 0 {
		q.Set("cursor", string(wire.AppendCursor(nil, opts.After)))
	}
	if len(q) == 0 {
		return c.pets
	}
	return c.pets + "?" + q.Encode()
}

// resolve resolves the reference ref of a Link header of the answer to a
// request for target, and checks that it stays under the base URL.
func (c *Client) resolve(target, ref string) (string, error) {
	from, _ := url.Parse(target) // just requested, so it parses
	r, err := url.Parse(ref)
	if err != nil {
		return "", fmt.Errorf("client: GET %s: the Link header's next page %q is not a URL: %w", target, ref, err)
	}
	next := from.ResolveReference(r)
	// The decoded path must be below the base path, also once its dot
	// segments are resolved, as a server may do with percent-encoded ones.
	prefix := c.base.Path + "/"
	if origin(next) != c.origin || !strings.HasPrefix(next.Path, prefix) || !strings.HasPrefix(path.Clean(next.Path), prefix) {
		return "", fmt.Errorf("client: GET %s: %w: the Link header's next page %s is not under the base URL %s; the client does not follow it, so as not to send the API key elsewhere",
			target, ErrRedirectRefused, cut(next.Redacted()), c.base)
	}
	return next.String(), nil
}

// nextLink returns the target of the link with rel="next" among the Link
// header values (RFC 8288), "<ref>; param; param, <ref>; ...", and whether
// there is one.
func nextLink(values []string) (string, bool) {
	for _, v := range values {
		for v = strings.TrimSpace(v); strings.HasPrefix(v, "<"); v = strings.TrimSpace(v) {
			ref, rest, ok := strings.Cut(v[1:], ">")
			if !ok {
				break
			}
			// The parameters run to the first comma outside a quoted string.
			params, quoted := rest, false
			v = ""
			for i := 0; i < len(rest); i++ {
				if c := rest[i]; c == '\\' && quoted {
					i++
				} else if c == '"' {
					quoted = !quoted
				} else if c == ',' && !quoted {
					params, v = rest[:i], rest[i+1:]
					break
				}
			}
			if relNext(params) {
				return ref, true
			}
		}
	}
	return "", false
}

// relNext reports whether the first rel parameter of params, "; rel=next;
// ...", gives the relation type "next" among the types it lists.
func relNext(params string) bool {
	for p := range strings.SplitSeq(params, ";") {
		name, value, _ := strings.Cut(p, "=")
		if !strings.EqualFold(strings.TrimSpace(name), "rel") {
			continue
		}
		value = strings.TrimSpace(value)
		if len(value) >= 2 && value[0] == '"' && value[len(value)-1] == '"' {
			value = value[1 : len(value)-1]
		}
		return slices.ContainsFunc(strings.Fields(value), func(typ string) bool { return strings.EqualFold(typ, "next") })
	}
	return false
}

// checkCreated returns an error wrapping ErrBadResponse unless pet, the
// answer to a create of sent, is sent with a positive ID. It names every
// field that differs.
func checkCreated(pet petstore.Pet, sent petstore.NewPet) error {
	var diffs []string
	if pet.ID <= 0 {
		diffs = append(diffs, fmt.Sprintf("its ID is %d, not positive", pet.ID))
	}
	if pet.Name != sent.Name {
		diffs = append(diffs, fmt.Sprintf("its name is %q, not %q", cut(pet.Name), cut(sent.Name)))
	}
	if pet.CategoryID != sent.CategoryID {
		diffs = append(diffs, fmt.Sprintf("its categoryId is %d, not %d", pet.CategoryID, sent.CategoryID))
	}
	if pet.Status != sent.Status {
		diffs = append(diffs, fmt.Sprintf("its status is %q, not %q", cut(string(pet.Status)), cut(string(sent.Status))))
	}
	if diffs == nil {
		return nil
	}
	return fmt.Errorf("%w: the pet answered is not the pet sent: %s", ErrBadResponse, strings.Join(diffs, "; "))
}

// checkPage returns an error wrapping ErrBadResponse for a page of more
// than size pets, or with a pet whose ID is not positive, whose name is
// longer than the API allows, or whose status is not status when status is
// set.
func checkPage(page []petstore.Pet, size int, status petstore.Status) error {
	if len(page) > size {
		return fmt.Errorf("%w: the page holds %d pets, more than the %d asked for", ErrBadResponse, len(page), size)
	}
	for _, p := range page {
		switch {
		case p.ID <= 0:
			return fmt.Errorf("%w: the page holds a pet with ID %d, not positive", ErrBadResponse, p.ID)
		case len(p.Name) > petstore.MaxNameLength && utf8.RuneCountInString(p.Name) > petstore.MaxNameLength:
			return fmt.Errorf("%w: the page holds the pet %d with a name of %d bytes, longer than the %d characters the API allows",
				ErrBadResponse, p.ID, len(p.Name), petstore.MaxNameLength)
		case status != "" && p.Status != status:
			return fmt.Errorf("%w: the page holds the pet %d with the status %q, not %q as asked", ErrBadResponse, p.ID, cut(string(p.Status)), status)
		}
	}
	return nil
}

package client

import (
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
// stored it.
//
// Every create carries an Idempotency-Key, so that Add can retry it when
// the answer is lost or the server is unavailable without creating the pet
// twice: opts.IdempotencyKey when it is set, which makes the create
// idempotent across calls too (see petstore.Store), or else a random key
// that Add makes for this call alone. replayed is true when the server
// answered with a pet that an earlier create with the caller's key stored
// (Idempotent-Replayed: true); with the key that Add made, it is always
// false, since no other call has that key. A replay may also be of a lost
// earlier attempt of this same call.
//
// JSON cannot carry a name that is not valid UTF-8, so Add refuses such a
// pet itself, with an error wrapping petstore.ErrInvalidPet; the server
// judges every other rule of petstore.NewPet.Validate and answers 400
// invalid_body, which gives the same error.
//
// Add checks that the pet answered is the pet sent, with the same name,
// category and status, and a positive ID; otherwise it returns an error
// wrapping ErrBadResponse that says what differed.
func (c *Client) Add(ctx context.Context, p petstore.NewPet, opts petstore.AddOptions) (pet petstore.Pet, replayed bool, err error) {
	if !utf8.ValidString(p.Name) {
		return petstore.Pet{}, false, fmt.Errorf("client: Add: %w: the name is not valid UTF-8, which JSON cannot carry", petstore.ErrInvalidPet)
	}
	cl := c.newCall(ctx, http.MethodPost)
	if cl.body, err = json.Marshal(p); err != nil {
		return petstore.Pet{}, false, fmt.Errorf("client: Add: %w", err)
	}
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
	replayed = opts.IdempotencyKey != "" && ans.header.Get("Idempotent-Replayed") == "true"
	return pet, replayed, nil
}

// Get returns the pet with the given ID, with GET /pets/{petId}. For an ID
// that no pet has, the error wraps petstore.ErrNotFound. An answer with a
// pet of another ID gives an error wrapping ErrBadResponse.
//
// The server marks this operation deprecated (the Deprecation and Sunset
// headers), in favour of listing. Get ignores those headers: it is the only
// way to read one pet by ID, and a Store needs it.
func (c *Client) Get(ctx context.Context, id int64) (petstore.Pet, error) {
	cl := c.newCall(ctx, http.MethodGet)
	target := c.pets + "/" + strconv.FormatInt(id, 10)
	ans, err := c.do(cl, target, http.StatusOK)
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
// defines it: with opts.Limit 0 it returns every pet selected, however many
// pages that takes, up to a bound. It reads the pages as All does, and
// returns the first error that All yields, with no pets.
//
// The bound: with opts.Limit 0, List collects at most the number of pets
// that WithMaxListPets sets (DefaultMaxListPets, 10,000, by default), and
// past it returns an error wrapping ErrTooManyPets, so that a server whose
// pages never end cannot fill the memory. To read more pets, set a Limit,
// raise the bound, or use All, which holds one page at a time.
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
			return nil, fmt.Errorf("client: List: %w: more than %d pets, the most that List collects without a Limit (WithMaxListPets); set ListOptions.Limit, raise the bound, or read the pets with All, which holds one page at a time",
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
// All sends one request per page, of petstore.MaxPageSize pets (fewer
// when opts.Limit asks for fewer), and follows the server's
// Link rel="next" header from page to page until the last page, which has
// none, or until the loop stops. Since the server pages by ID, the iterator
// visits every pet that existed when it started exactly once, also while
// pets are being added; those added meanwhile are visited if their IDs are
// greater than the last one that was already read.
//
// The first request starts after opts.After with the cursor that
// wire.AppendCursor makes. Cursors are otherwise opaque, and All treats
// those of the Link headers so. All never yields a pet whose ID is not
// greater than opts.After or than the ID of the pet yielded before, so a
// server with other cursors cannot make it visit a pet twice.
//
// All holds one page at a time: however many pages a server sends, its
// memory stays that of one page. It reads at most 64 KiB plus 4 KiB a pet
// of each page (464 KiB for a page of 100), and refuses, with an error
// wrapping ErrBadResponse, a page with more pets than it asked for, a pet
// whose ID is not positive or whose name is longer than
// petstore.MaxNameLength, or one of another status than opts.Status.
//
// On an error, the iterator yields it with the zero Pet and stops. It
// follows a Link only under the base URL, at its origin (scheme, host and
// port) and below its path, so that the API key is never sent elsewhere:
// a next page anywhere else gives an error wrapping ErrRedirectRefused.
func (c *Client) All(ctx context.Context, opts petstore.ListOptions) iter.Seq2[petstore.Pet, error] {
	return func(yield func(petstore.Pet, error) bool) {
		if opts.Limit < 0 {
			yield(petstore.Pet{}, fmt.Errorf("client: ListOptions.Limit is %d; use 0 for every pet, or a positive cap", opts.Limit))
			return
		}
		cl := c.newCall(ctx, http.MethodGet)
		cl.limit = maxPageBytes(c.pageSize)
		target := c.firstPage(opts)
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

// firstPage returns the URL of the first page of pets that opts selects.
func (c *Client) firstPage(opts petstore.ListOptions) string {
	limit := c.pageSize
	if opts.Limit > 0 {
		limit = min(limit, opts.Limit)
	}
	return c.petsURL(opts, url.Values{"limit": {strconv.Itoa(limit)}})
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
	from, err := url.Parse(target)
	if err != nil {
		return "", fmt.Errorf("client: GET %s: %w", target, err)
	}
	r, err := url.Parse(ref)
	if err != nil {
		return "", fmt.Errorf("client: GET %s: the Link header's next page %q is not a URL: %w", target, ref, err)
	}
	next := from.ResolveReference(r)
	if origin(next) != c.origin || !c.underBase(next.Path) {
		return "", fmt.Errorf("client: GET %s: %w: the Link header's next page %s is not under the base URL %s; the client does not follow it, so as not to send the API key elsewhere",
			target, ErrRedirectRefused, cut(next.Redacted()), c.base)
	}
	return next.String(), nil
}

// underBase reports whether the path p, decoded, is below the base URL's
// path, also once its dot segments are resolved, as a server may do with
// those that were percent-encoded.
func (c *Client) underBase(p string) bool {
	prefix := c.base.Path + "/"
	return strings.HasPrefix(p, prefix) && strings.HasPrefix(path.Clean(p), prefix)
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

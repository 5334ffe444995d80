package loadtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/petstore-go/petstore"
)

// client makes the API's requests and counts them. It is safe for
// concurrent use.
type client struct {
	base string // the collection's URL
	auth string // the Authorization header
	http *http.Client

	requests             atomic.Int64 // every request tried
	creates, lists, gets atomic.Int64 // the load phase's requests, counted by the load
}

// call sends a request, with body as JSON when it is not nil, requires the
// status want and decodes the answer into v strictly: no unknown fields,
// no trailing data. It returns the answer's headers.
func (cl *client) call(ctx context.Context, method, target string, body []byte, want int, v any) (http.Header, error) {
	cl.requests.Add(1)
	req, err := http.NewRequestWithContext(ctx, method, target, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", cl.auth)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := cl.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: reading the body: %w", method, target, err)
	}
	if resp.StatusCode != want {
		return nil, fmt.Errorf("%s %s answered %d: %s", method, target, resp.StatusCode, b)
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return nil, fmt.Errorf("%s %s: decoding %s: %w", method, target, b, err)
	}
	if d.More() {
		return nil, fmt.Errorf("%s %s: trailing data after the JSON value in %s", method, target, b)
	}
	return resp.Header, nil
}

// create posts p and returns the pet as the 201 answer describes it, after
// checking that it is p with a positive ID at the Location given.
func (cl *client) create(ctx context.Context, p petstore.NewPet) (petstore.Pet, error) {
	cl.creates.Add(1)
	body, _ := json.Marshal(p) // a NewPet always marshals
	var got petstore.Pet
	h, err := cl.call(ctx, http.MethodPost, cl.base, body, http.StatusCreated, &got)
	if err != nil {
		return got, err
	}
	if got.ID < 1 || got.NewPet != p {
		return got, fmt.Errorf("POST %s of %+v answered %+v", cl.base, p, got)
	}
	if loc, want := h.Get("Location"), "pets/"+strconv.FormatInt(got.ID, 10); loc != want {
		return got, fmt.Errorf("POST %s answered Location %q; want %q", cl.base, loc, want)
	}
	return got, nil
}

// get returns the pet with the given ID; any answer but 200 is an error.
func (cl *client) get(ctx context.Context, id int64) (petstore.Pet, error) {
	cl.gets.Add(1)
	var got petstore.Pet
	_, err := cl.call(ctx, http.MethodGet, cl.base+"/"+strconv.FormatInt(id, 10), nil, http.StatusOK, &got)
	return got, err
}

// list gets the page at target, appends its pets to dst, and returns the
// URL of the next page from the Link header, or "" on the last page.
func (cl *client) list(ctx context.Context, target string, dst []petstore.Pet) ([]petstore.Pet, string, error) {
	cl.lists.Add(1)
	var page []petstore.Pet
	h, err := cl.call(ctx, http.MethodGet, target, nil, http.StatusOK, &page)
	if err != nil {
		return dst, "", err
	}
	next, err := nextLink(target, h.Values("Link"))
	if err != nil {
		return dst, "", fmt.Errorf("GET %s: %w", target, err)
	}
	return append(dst, page...), next, nil
}

// nextLink returns the target of the rel="next" link among the Link header
// values, resolved against base, or "" when there is none.
func nextLink(base string, values []string) (string, error) {
	for _, v := range values {
		for link := range strings.SplitSeq(v, ",") {
			ref, params, ok := strings.Cut(strings.TrimSpace(link), ";")
			ref, ok1 := strings.CutPrefix(strings.TrimSpace(ref), "<")
			ref, ok2 := strings.CutSuffix(ref, ">")
			r, err := url.Parse(ref)
			if !ok || !ok1 || !ok2 || err != nil {
				return "", fmt.Errorf("malformed Link header %q", v)
			}
			if strings.TrimSpace(params) == `rel="next"` {
				b, err := url.Parse(base)
				if err != nil {
					return "", err
				}
				return b.ResolveReference(r).String(), nil
			}
		}
	}
	return "", nil
}

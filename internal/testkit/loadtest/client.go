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

// do sends a request and returns the response's status, headers and body.
func (cl *client) do(ctx context.Context, method, target string, body []byte) (int, http.Header, []byte, error) {
	cl.requests.Add(1)
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header.Set("Authorization", cl.auth)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := cl.http.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("%s %s: reading the body: %w", method, target, err)
	}
	return resp.StatusCode, resp.Header, b, nil
}

// create posts p and returns the pet as the 201 answer describes it, after
// checking that it is p with a positive ID at the Location given.
func (cl *client) create(ctx context.Context, p petstore.NewPet) (petstore.Pet, error) {
	cl.creates.Add(1)
	body, err := json.Marshal(p)
	if err != nil {
		return petstore.Pet{}, err
	}
	status, h, b, err := cl.do(ctx, http.MethodPost, cl.base, body)
	if err != nil {
		return petstore.Pet{}, err
	}
	if status != http.StatusCreated {
		return petstore.Pet{}, fmt.Errorf("POST %s answered %d: %s", cl.base, status, b)
	}
	var got petstore.Pet
	if err := decode(b, &got); err != nil {
		return petstore.Pet{}, fmt.Errorf("POST %s: %w", cl.base, err)
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
	target := cl.base + "/" + strconv.FormatInt(id, 10)
	status, _, b, err := cl.do(ctx, http.MethodGet, target, nil)
	if err != nil {
		return petstore.Pet{}, err
	}
	if status != http.StatusOK {
		return petstore.Pet{}, fmt.Errorf("GET %s answered %d: %s", target, status, b)
	}
	var got petstore.Pet
	if err := decode(b, &got); err != nil {
		return petstore.Pet{}, fmt.Errorf("GET %s: %w", target, err)
	}
	return got, nil
}

// list gets the page at target, appends its pets to dst, and returns the
// URL of the next page from the Link header, or "" on the last page.
func (cl *client) list(ctx context.Context, target string, dst []petstore.Pet) ([]petstore.Pet, string, error) {
	cl.lists.Add(1)
	status, h, b, err := cl.do(ctx, http.MethodGet, target, nil)
	if err != nil {
		return dst, "", err
	}
	if status != http.StatusOK {
		return dst, "", fmt.Errorf("GET %s answered %d: %s", target, status, b)
	}
	var page []petstore.Pet
	if err := decode(b, &page); err != nil {
		return dst, "", fmt.Errorf("GET %s: %w", target, err)
	}
	next, err := nextLink(target, h.Values("Link"))
	if err != nil {
		return dst, "", fmt.Errorf("GET %s: %w", target, err)
	}
	return append(dst, page...), next, nil
}

// decode decodes one JSON value, refusing unknown fields and trailing data.
func decode(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return fmt.Errorf("decoding %s: %w", b, err)
	}
	if d.More() {
		return fmt.Errorf("trailing data after the JSON value in %s", b)
	}
	return nil
}

// nextLink returns the target of the rel="next" link among the Link header
// values, resolved against base, or "" when there is none.
func nextLink(base string, values []string) (string, error) {
	for _, v := range values {
		for link := range strings.SplitSeq(v, ",") {
			ref, params, ok := strings.Cut(strings.TrimSpace(link), ";")
			ref, ok1 := strings.CutPrefix(strings.TrimSpace(ref), "<")
			ref, ok2 := strings.CutSuffix(ref, ">")
			if !ok || !ok1 || !ok2 {
				return "", fmt.Errorf("malformed Link header %q", v)
			}
			if strings.TrimSpace(params) != `rel="next"` {
				continue
			}
			b, err := url.Parse(base)
			if err != nil {
				return "", err
			}
			r, err := url.Parse(ref)
			if err != nil {
				return "", fmt.Errorf("the Link header %q: %w", v, err)
			}
			return b.ResolveReference(r).String(), nil
		}
	}
	return "", nil
}

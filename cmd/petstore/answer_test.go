package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/petstore-go/petstore"
)

// The process tests share this helper: a request's answer read in full.

// apiAnswer is the server's answer to one request, read in full.
type apiAnswer struct {
	status int
	header http.Header
	body   []byte
}

// code returns the code of a JSON error body, or "" for another body.
func (a apiAnswer) code() string {
	var e struct{ Code string }
	if json.Unmarshal(a.body, &e) != nil {
		return ""
	}
	return e.Code
}

// pet decodes the body as a pet.
func (a apiAnswer) pet() (petstore.Pet, error) {
	var p petstore.Pet
	if err := json.Unmarshal(a.body, &p); err != nil {
		return petstore.Pet{}, fmt.Errorf("the body %q is not a pet: %v", a.body, err)
	}
	return p, nil
}

// replayed reports whether the answer says it replays an earlier create.
func (a apiAnswer) replayed() bool { return a.header.Get("Idempotent-Replayed") == "true" }

func (a apiAnswer) String() string {
	return fmt.Sprintf("%d Retry-After %q Idempotent-Replayed %q %s", a.status,
		a.header.Get("Retry-After"), a.header.Get("Idempotent-Replayed"), bytes.TrimSpace(a.body))
}

// newCreate returns a request that creates p through the server at
// baseURL, authenticated with apiKey, with the Idempotency-Key idemKey
// unless it is empty.
func newCreate(ctx context.Context, baseURL, apiKey, idemKey string, p petstore.NewPet) (*http.Request, error) {
	body, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, baseURL+"/pets", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+apiKey)
	req.Header.Set("Content-Type", "application/json")
	if idemKey != "" {
		req.Header.Set("Idempotency-Key", idemKey)
	}
	return req, nil
}

// newGet returns a GET request of path under baseURL, authenticated with
// apiKey.
func newGet(ctx context.Context, baseURL, apiKey, path string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, baseURL+path, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+apiKey)
	return req, nil
}

// do sends req and reads the answer in full.
func do(client *http.Client, req *http.Request) (apiAnswer, error) {
	resp, err := client.Do(req)
	if err != nil {
		return apiAnswer{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return apiAnswer{}, fmt.Errorf("%s %s: reading the body: %w", req.Method, req.URL, err)
	}
	return apiAnswer{status: resp.StatusCode, header: resp.Header, body: b}, nil
}

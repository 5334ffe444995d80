package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/petstore-go/petstore"
)

// The process tests share these helpers: a request, and its answer read in
// full.

// apiRequest is a request that the process tests send.
type apiRequest struct {
	method, url, key, body string
	header                 map[string]string
}

// createRequest is the request that creates p through the server at
// baseURL, authenticated with key, with the Idempotency-Key idemKey unless
// it is empty.
func createRequest(baseURL, key, idemKey string, p petstore.NewPet) apiRequest {
	body, _ := json.Marshal(p) // a NewPet always encodes
	q := apiRequest{method: http.MethodPost, url: baseURL + "/pets", key: key, body: string(body)}
	if idemKey != "" {
		q.header = map[string]string{"Idempotency-Key": idemKey}
	}
	return q
}

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

// send sends q with client and reads the answer in full. It may be called
// from any goroutine.
func send(ctx context.Context, client *http.Client, q apiRequest) (apiAnswer, error) {
	r, err := http.NewRequestWithContext(ctx, q.method, q.url, strings.NewReader(q.body))
	if err != nil {
		return apiAnswer{}, err
	}
	if q.key != "" {
		r.Header.Set("Authorization", "Bearer "+q.key)
	}
	if q.body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	for k, v := range q.header {
		r.Header.Set(k, v)
	}
	resp, err := client.Do(r)
	if err != nil {
		return apiAnswer{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return apiAnswer{}, fmt.Errorf("%s %s: reading the body: %w", q.method, q.url, err)
	}
	return apiAnswer{status: resp.StatusCode, header: resp.Header, body: b}, nil
}

// mustSend is send, within 10 seconds, that fails the test when no answer
// comes.
func mustSend(t *testing.T, q apiRequest) apiAnswer {
	t.Helper()
	a, err := send(context.Background(), &http.Client{Timeout: 10 * time.Second}, q)
	if err != nil {
		t.Fatalf("%s %s: %v", q.method, q.url, err)
	}
	return a
}

// adminDo is mustSend that returns the status and the body of the answer.
func adminDo(t *testing.T, q apiRequest) (int, []byte) {
	t.Helper()
	a := mustSend(t, q)
	return a.status, a.body
}

// createPet creates p through the server at baseURL, with idemKey unless it
// is empty, and returns the answer.
func createPet(t *testing.T, baseURL, key, idemKey string, p petstore.NewPet) apiAnswer {
	t.Helper()
	return mustSend(t, createRequest(baseURL, key, idemKey, p))
}

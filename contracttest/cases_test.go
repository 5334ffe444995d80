package contracttest_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/contracttest"
	"github.com/petstore-go/petstore/memstore"
	"github.com/petstore-go/petstore/petstoretest"
)

const contractKey = "contract-key"

// contractServer serves a handler with opts, the default base path and, unless
// opts replace them, a memstore holding three pets and the key contractKey.
func contractServer(t *testing.T, opts ...petstore.Option) string {
	t.Helper()
	store := memstore.New()
	for _, p := range []petstore.NewPet{
		{Name: "Rex", CategoryID: 1, Status: petstore.StatusAvailable},
		{Name: "Tom", CategoryID: 2, Status: petstore.StatusSold},
		{Name: "Nemo", CategoryID: 3},
	} {
		if _, _, err := store.Add(context.Background(), p, petstore.AddOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	opts = append([]petstore.Option{
		petstore.WithStore(store),
		petstore.WithAuthenticator(petstore.APIKeys(contractKey)),
	}, opts...)
	h, err := petstore.New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL + petstore.DefaultBasePath
}

// contractFailingStore is a Store whose every method fails with err, or
// panics with it when panics is set.
type contractFailingStore struct {
	err    error
	panics bool
}

func (s contractFailingStore) fail() error {
	if s.panics {
		panic(s.err)
	}
	return s.err
}

func (s contractFailingStore) Add(context.Context, petstore.NewPet, petstore.AddOptions) (petstore.Pet, bool, error) {
	return petstore.Pet{}, false, s.fail()
}

func (s contractFailingStore) Get(context.Context, int64) (petstore.Pet, error) {
	return petstore.Pet{}, s.fail()
}

func (s contractFailingStore) List(context.Context, petstore.ListOptions) ([]petstore.Pet, error) {
	return nil, s.fail()
}

// contractAuthenticator answers every request with err.
func contractAuthenticator(err error) petstore.Authenticator {
	return petstore.AuthenticatorFunc(func(context.Context, petstore.Operation, string) (context.Context, error) {
		return nil, err
	})
}

// A contractCase is one request and the status it must be answered with.
type contractCase struct {
	name        string
	method      string
	path        string // under the base path
	contentType string // for a body
	body        string
	key         string // "-" for no Authorization header
	want        int
}

// contractCasesFor are the requests that every failing configuration is
// tried with: each operation and a request that matches none.
func contractCasesFor(want int) []contractCase {
	return []contractCase{
		{name: "listPets", method: "GET", path: "/pets", want: want},
		{name: "createPet", method: "POST", path: "/pets", body: `{"name":"Rex","categoryId":1}`, want: want},
		{name: "getPet", method: "GET", path: "/pets/1", want: want},
		{name: "HEAD getPet", method: "HEAD", path: "/pets/1", want: want},
	}
}

// contractCases runs the handler's own cases through client, for TestContract:
// they reach what a black-box suite cannot (failing stores and
// authenticators) and every documented status of every operation.
func contractCases(t *testing.T, client *http.Client) {
	big := `{"name":"Rex","categoryId":1}` + strings.Repeat(" ", petstore.DefaultMaxBodyBytes)
	configs := []struct {
		name  string
		opts  []petstore.Option
		cases []contractCase
	}{
		{
			name: "working",
			cases: []contractCase{
				{name: "list", method: "GET", path: "/pets", want: 200},
				{name: "list page with Link", method: "GET", path: "/pets?limit=1", want: 200},
				{name: "list by status", method: "GET", path: "/pets?status=sold&limit=1", want: 200},
				{name: "list HEAD", method: "HEAD", path: "/pets?limit=1", want: 200},
				{name: "list limit 0", method: "GET", path: "/pets?limit=0", want: 400},
				{name: "list limit 101", method: "GET", path: "/pets?limit=101", want: 400},
				{name: "list limit twice", method: "GET", path: "/pets?limit=1&limit=2", want: 400},
				{name: "list bad status", method: "GET", path: "/pets?status=lost", want: 400},
				{name: "list bad cursor", method: "GET", path: "/pets?cursor=-1", want: 400},
				{name: "list empty cursor", method: "GET", path: "/pets?cursor=", want: 400},
				{name: "list without key", method: "GET", path: "/pets", key: "-", want: 401},
				{name: "list with wrong key", method: "GET", path: "/pets", key: "wrong", want: 401},
				{name: "list with malformed key", method: "GET", path: "/pets", key: "a b", want: 401},
				{name: "create", method: "POST", path: "/pets", body: `{"name":"Rex","categoryId":1,"status":"pending"}`, want: 201},
				{name: "create without status", method: "POST", path: "/pets", body: `{"name":"Rex","categoryId":1}`, want: 201},
				{name: "create with charset", method: "POST", path: "/pets", contentType: "application/json; charset=utf-8", body: `{"name":"Rex","categoryId":1}`, want: 201},
				{name: "create not JSON", method: "POST", path: "/pets", body: `{`, want: 400},
				{name: "create without name", method: "POST", path: "/pets", body: `{"categoryId":1}`, want: 400},
				{name: "create blank name", method: "POST", path: "/pets", body: `{"name":"\u00a0 ","categoryId":1}`, want: 400},
				{name: "create control character", method: "POST", path: "/pets", body: `{"name":"a\u0007","categoryId":1}`, want: 400},
				{name: "create long name", method: "POST", path: "/pets", body: `{"name":"` + strings.Repeat("é", 257) + `","categoryId":1}`, want: 400},
				{name: "create category 0", method: "POST", path: "/pets", body: `{"name":"Rex","categoryId":0}`, want: 400},
				{name: "create with id", method: "POST", path: "/pets", body: `{"id":5,"name":"Rex","categoryId":1}`, want: 400},
				{name: "create unknown member", method: "POST", path: "/pets", body: `{"name":"Rex","categoryId":1,"color":"red"}`, want: 400},
				{name: "create null status", method: "POST", path: "/pets", body: `{"name":"Rex","categoryId":1,"status":null}`, want: 400},
				{name: "create empty body", method: "POST", path: "/pets", want: 400},
				{name: "create too large", method: "POST", path: "/pets", body: big, want: 413},
				{name: "create as text", method: "POST", path: "/pets", contentType: "text/plain", body: `{"name":"Rex","categoryId":1}`, want: 415},
				{name: "create without key", method: "POST", path: "/pets", body: `{"name":"Rex","categoryId":1}`, key: "-", want: 401},
				{name: "get", method: "GET", path: "/pets/1", want: 200},
				{name: "get without status", method: "GET", path: "/pets/3", want: 200},
				{name: "get HEAD", method: "HEAD", path: "/pets/1", want: 200},
				{name: "get not an integer", method: "GET", path: "/pets/abc", want: 400},
				{name: "get out of range", method: "GET", path: "/pets/9223372036854775808", want: 400},
				{name: "get unknown", method: "GET", path: "/pets/999999", want: 404},
				{name: "get negative", method: "GET", path: "/pets/-1", want: 404},
				{name: "get without key", method: "GET", path: "/pets/1", key: "-", want: 401},
				{name: "delete pets", method: "DELETE", path: "/pets", want: 405},
				{name: "put pet", method: "PUT", path: "/pets/1", body: `{}`, want: 405},
				{name: "post pet", method: "POST", path: "/pets/1", body: `{}`, want: 405},
				{name: "other method without key", method: "DELETE", path: "/pets", key: "-", want: 401},
				{name: "unknown path", method: "GET", path: "/orders", want: 404},
				{name: "below a pet", method: "GET", path: "/pets/1/owner", want: 404},
				{name: "trailing slash", method: "GET", path: "/pets/", want: 404},
				{name: "unknown path without key", method: "GET", path: "/orders", key: "-", want: 401},
				{name: "document", method: "GET", path: "/openapi.json", key: "-", want: 200},
				{name: "document HEAD", method: "HEAD", path: "/openapi.json", key: "-", want: 200},
				{name: "document POST", method: "POST", path: "/openapi.json", key: "-", body: `{}`, want: 405},
			},
		},
		{
			name:  "authenticator forbids",
			opts:  []petstore.Option{petstore.WithAuthenticator(contractAuthenticator(petstore.ErrForbidden))},
			cases: append(contractCasesFor(403), contractCase{name: "other method", method: "DELETE", path: "/pets", want: 403}),
		},
		{
			name:  "authenticator down",
			opts:  []petstore.Option{petstore.WithAuthenticator(contractAuthenticator(errors.New("key server unreachable")))},
			cases: append(contractCasesFor(503), contractCase{name: "unknown path", method: "GET", path: "/orders", want: 503}),
		},
		{
			name: "authenticator panics",
			opts: []petstore.Option{petstore.WithAuthenticator(petstore.AuthenticatorFunc(
				func(context.Context, petstore.Operation, string) (context.Context, error) { panic("key server bug") }))},
			cases: contractCasesFor(500),
		},
		{
			name:  "store unavailable",
			opts:  []petstore.Option{petstore.WithStore(contractFailingStore{err: petstore.ErrUnavailable})},
			cases: contractCasesFor(503),
		},
		{
			name:  "store fails",
			opts:  []petstore.Option{petstore.WithStore(contractFailingStore{err: errors.New("disk on fire")})},
			cases: contractCasesFor(500),
		},
		{
			name:  "store panics",
			opts:  []petstore.Option{petstore.WithStore(contractFailingStore{err: errors.New("nil map"), panics: true})},
			cases: contractCasesFor(500),
		},
	}
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			base := contractServer(t, c.opts...)
			for _, tt := range c.cases {
				var body io.Reader
				if tt.body != "" {
					body = strings.NewReader(tt.body)
				}
				req, err := http.NewRequest(tt.method, base+tt.path, body)
				if err != nil {
					t.Fatal(err)
				}
				switch {
				case tt.contentType != "":
					req.Header.Set("Content-Type", tt.contentType)
				case tt.method == http.MethodPost:
					req.Header.Set("Content-Type", "application/json")
				}
				switch tt.key {
				case "-":
				case "":
					req.Header.Set("Authorization", "Bearer "+contractKey)
				default:
					req.Header.Set("Authorization", "Bearer "+tt.key)
				}
				resp, err := client.Do(req)
				if err != nil {
					t.Errorf("%s: %v", tt.name, err)
					continue
				}
				resp.Body.Close()
				if resp.StatusCode != tt.want {
					t.Errorf("%s: %s %s answered %d, want %d", tt.name, tt.method, tt.path, resp.StatusCode, tt.want)
				}
			}
		})
	}
}

// TestContract runs the HTTP conformance suite and the handler's own cases
// through a client that checks every exchange against the document the
// handler serves, then lists the documented outcomes that none exercised.
func TestContract(t *testing.T) {
	base := contractServer(t)
	v, err := contracttest.New(contractFetch(t, base+petstore.OpenAPIPath))
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: v.Transport(http.DefaultTransport)}
	ran := map[string]bool{}
	for _, part := range []struct {
		name string
		run  func(t *testing.T)
	}{
		{"conformance suite", func(t *testing.T) {
			petstoretest.TestServer(t, petstoretest.Endpoint{BaseURL: base, APIKey: contractKey, Client: client})
		}},
		{"handler cases", func(t *testing.T) { contractCases(t, client) }},
	} {
		t.Run(part.name, func(t *testing.T) {
			ran[part.name] = true
			part.run(t)
		})
	}
	if errs := v.Errors(); len(errs) > 0 {
		t.Errorf("%d exchanges broke the contract; the first: %v", len(errs), errs[0])
	}
	if len(ran) < 2 {
		t.Logf("only %d of the parts ran, so unexercised outcomes are not listed", len(ran))
		return
	}
	for _, o := range v.Missing() {
		t.Errorf("documented but never exercised: %v", o)
	}
	seen := v.Seen()
	total := 0
	for _, n := range seen {
		total += n
	}
	t.Logf("%d exchanges checked, %d outcomes seen: %v", total, len(seen), seen)
}

// contractFetch returns the body of a GET of url, without authentication.
func contractFetch(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d, %v", url, resp.StatusCode, err)
	}
	return b
}

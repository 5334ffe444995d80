package petstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/httpapi"
	"github.com/petstore-go/petstore/memstore"
)

const wireKey = "test-key"

// wireSeed is what every wire test's store holds before the request: one
// pet of each status and one without.
var wireSeed = []petstore.NewPet{
	{Name: "Rex", CategoryID: 1, Status: petstore.StatusAvailable},
	{Name: "Tom", CategoryID: 2, Status: petstore.StatusPending},
	{Name: "Kit", CategoryID: 3, Status: petstore.StatusSold},
	{Name: "Nemo", CategoryID: 4},
}

// wireHandler returns a handler on a store holding wireSeed, accepting
// wireKey, with extra options.
func wireHandler(t *testing.T, store petstore.Store, opts ...petstore.Option) http.Handler {
	t.Helper()
	for _, p := range wireSeed {
		if _, _, err := store.Add(context.Background(), p, petstore.AddOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	opts = append([]petstore.Option{petstore.WithStore(store), petstore.WithAuthenticator(petstore.APIKeys(wireKey))}, opts...)
	h, err := petstore.New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// wireRequest is a request with the valid key unless header says otherwise,
// and Content-Type: application/json when it has a body.
type wireRequest struct {
	method, target, body string
	header               http.Header // replaces the defaults for the keys it has
}

func (q wireRequest) do(h http.Handler) *httptest.ResponseRecorder {
	var body io.Reader
	if q.body != "" {
		body = strings.NewReader(q.body)
	}
	r := httptest.NewRequest(q.method, q.target, body)
	r.Header.Set("Authorization", "Bearer "+wireKey)
	if q.body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	for k, v := range q.header {
		r.Header[k] = v
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// wireAll lists every pet in store.
func wireAll(t *testing.T, store petstore.Store) []petstore.Pet {
	t.Helper()
	pets, err := store.List(context.Background(), petstore.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return pets
}

// wireCheckCommon checks what every response carries, and for an error the
// body's code and status.
func wireCheckCommon(t *testing.T, w *httptest.ResponseRecorder, wantStatus int, wantCode httpapi.Code) {
	t.Helper()
	if w.Code != wantStatus {
		t.Errorf("status = %d, want %d; body %s", w.Code, wantStatus, w.Body)
	}
	for k, want := range map[string]string{
		"Content-Type":           "application/json",
		"Cache-Control":          "no-store",
		"X-Content-Type-Options": "nosniff",
	} {
		if got := w.Header().Values(k); len(got) != 1 || got[0] != want {
			t.Errorf("header %s = %q, want %q", k, got, want)
		}
	}
	if wantCode == "" {
		return
	}
	var e map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil {
		t.Fatalf("error body %q: %v", w.Body, err)
	}
	msg, _ := e["message"].(string)
	if msg == "" {
		t.Errorf("error body %s has no message", w.Body)
	}
	want := map[string]any{"code": string(wantCode), "message": msg, "status": float64(wantStatus)}
	if diff := cmp.Diff(want, e); diff != "" {
		t.Errorf("error body (-want +got):\n%s", diff)
	}
}

func TestWireErrors(t *testing.T) {
	longName := strings.Repeat("é", petstore.MaxNameLength+1)
	auth := func(v ...string) http.Header { return http.Header{"Authorization": v} }
	json := func(ct string) http.Header { return http.Header{"Content-Type": {ct}} }
	tests := []struct {
		name   string
		req    wireRequest
		status int
		code   httpapi.Code
		header map[string]string // exact values expected
	}{
		// Authentication, on every operation and on routes that do not exist.
		{"no Authorization", wireRequest{method: "GET", target: "/v1/pets", header: auth()}, 401, "unauthorized", map[string]string{"Www-Authenticate": `Bearer realm="petstore"`}},
		{"no Authorization on create", wireRequest{method: "POST", target: "/v1/pets", body: `{"name":"A","categoryId":1}`, header: auth()}, 401, "unauthorized", map[string]string{"Www-Authenticate": `Bearer realm="petstore"`}},
		{"no Authorization on get", wireRequest{method: "GET", target: "/v1/pets/1", header: auth()}, 401, "unauthorized", map[string]string{"Www-Authenticate": `Bearer realm="petstore"`}},
		{"no Authorization on unknown path", wireRequest{method: "GET", target: "/v1/orders", header: auth()}, 401, "unauthorized", map[string]string{"Www-Authenticate": `Bearer realm="petstore"`}},
		{"no Authorization on wrong method", wireRequest{method: "DELETE", target: "/v1/pets/1", header: auth()}, 401, "unauthorized", map[string]string{"Www-Authenticate": `Bearer realm="petstore"`}},
		{"Basic scheme", wireRequest{method: "GET", target: "/v1/pets", header: auth("Basic " + wireKey)}, 401, "unauthorized", map[string]string{"Www-Authenticate": `Bearer realm="petstore"`}},
		{"empty token", wireRequest{method: "GET", target: "/v1/pets", header: auth("Bearer ")}, 401, "unauthorized", map[string]string{"Www-Authenticate": `Bearer realm="petstore"`}},
		{"scheme alone", wireRequest{method: "GET", target: "/v1/pets", header: auth("Bearer")}, 401, "unauthorized", map[string]string{"Www-Authenticate": `Bearer realm="petstore"`}},
		{"two Authorization headers", wireRequest{method: "GET", target: "/v1/pets", header: auth("Bearer "+wireKey, "Bearer "+wireKey)}, 401, "unauthorized", map[string]string{"Www-Authenticate": `Bearer realm="petstore"`}},
		{"wrong key", wireRequest{method: "GET", target: "/v1/pets", header: auth("Bearer nope")}, 401, "unauthorized", map[string]string{"Www-Authenticate": `Bearer realm="petstore", error="invalid_token"`}},
		{"key with a suffix", wireRequest{method: "GET", target: "/v1/pets", header: auth("Bearer " + wireKey + "x")}, 401, "unauthorized", map[string]string{"Www-Authenticate": `Bearer realm="petstore", error="invalid_token"`}},
		{"malformed token", wireRequest{method: "GET", target: "/v1/pets", header: auth("Bearer a,b")}, 401, "unauthorized", map[string]string{"Www-Authenticate": `Bearer realm="petstore", error="invalid_token"`}},
		{"wrong key on create", wireRequest{method: "POST", target: "/v1/pets", body: `{"name":"A","categoryId":1}`, header: auth("Bearer nope")}, 401, "unauthorized", map[string]string{"Www-Authenticate": `Bearer realm="petstore", error="invalid_token"`}},
		{"wrong key on get", wireRequest{method: "GET", target: "/v1/pets/1", header: auth("Bearer nope")}, 401, "unauthorized", map[string]string{"Www-Authenticate": `Bearer realm="petstore", error="invalid_token"`}},

		// Query parameters of listPets.
		{"limit not an integer", wireRequest{method: "GET", target: "/v1/pets?limit=ten"}, 400, "invalid_parameter", nil},
		{"limit empty", wireRequest{method: "GET", target: "/v1/pets?limit="}, 400, "invalid_parameter", nil},
		{"limit 0", wireRequest{method: "GET", target: "/v1/pets?limit=0"}, 400, "invalid_parameter", nil},
		{"limit negative", wireRequest{method: "GET", target: "/v1/pets?limit=-1"}, 400, "invalid_parameter", nil},
		{"limit 101", wireRequest{method: "GET", target: "/v1/pets?limit=101"}, 400, "invalid_parameter", nil},
		{"limit huge", wireRequest{method: "GET", target: "/v1/pets?limit=99999999999999999999999"}, 400, "invalid_parameter", nil},
		{"limit fraction", wireRequest{method: "GET", target: "/v1/pets?limit=1.5"}, 400, "invalid_parameter", nil},
		{"limit twice", wireRequest{method: "GET", target: "/v1/pets?limit=1&limit=1"}, 400, "invalid_parameter", nil},
		{"status unknown", wireRequest{method: "GET", target: "/v1/pets?status=lost"}, 400, "invalid_parameter", nil},
		{"status in upper case", wireRequest{method: "GET", target: "/v1/pets?status=AVAILABLE"}, 400, "invalid_parameter", nil},
		{"status empty", wireRequest{method: "GET", target: "/v1/pets?status="}, 400, "invalid_parameter", nil},
		{"status twice", wireRequest{method: "GET", target: "/v1/pets?status=sold&status=sold"}, 400, "invalid_parameter", nil},
		{"cursor malformed", wireRequest{method: "GET", target: "/v1/pets?cursor=!!"}, 400, "invalid_parameter", nil},
		{"cursor empty", wireRequest{method: "GET", target: "/v1/pets?cursor="}, 400, "invalid_parameter", nil},
		{"cursor with leading zero", wireRequest{method: "GET", target: "/v1/pets?cursor=01"}, 400, "invalid_parameter", nil},
		{"cursor twice", wireRequest{method: "GET", target: "/v1/pets?cursor=1&cursor=2"}, 400, "invalid_parameter", nil},
		{"bad percent-encoding", wireRequest{method: "GET", target: "/v1/pets?limit=%zz"}, 400, "invalid_parameter", nil},

		// The petId of getPet.
		{"petId not a number", wireRequest{method: "GET", target: "/v1/pets/rex"}, 400, "invalid_parameter", nil},
		{"petId with plus sign", wireRequest{method: "GET", target: "/v1/pets/+1"}, 400, "invalid_parameter", nil},
		{"petId fraction", wireRequest{method: "GET", target: "/v1/pets/1.0"}, 400, "invalid_parameter", nil},
		{"petId over int64", wireRequest{method: "GET", target: "/v1/pets/9223372036854775808"}, 400, "invalid_parameter", nil},
		{"petId hex", wireRequest{method: "GET", target: "/v1/pets/0x1"}, 400, "invalid_parameter", nil},
		{"no such pet", wireRequest{method: "GET", target: "/v1/pets/99"}, 404, "not_found", nil},
		{"pet 0", wireRequest{method: "GET", target: "/v1/pets/0"}, 404, "not_found", nil},
		{"negative pet", wireRequest{method: "GET", target: "/v1/pets/-1"}, 404, "not_found", nil},
		{"largest int64 pet", wireRequest{method: "GET", target: "/v1/pets/9223372036854775807"}, 404, "not_found", nil},

		// Media type and size of createPet's body.
		{"text/plain body", wireRequest{method: "POST", target: "/v1/pets", body: `{"name":"A","categoryId":1}`, header: json("text/plain")}, 415, "unsupported_media_type", map[string]string{"Accept-Post": "application/json"}},
		{"no Content-Type", wireRequest{method: "POST", target: "/v1/pets", body: `{"name":"A","categoryId":1}`, header: http.Header{"Content-Type": nil}}, 415, "unsupported_media_type", map[string]string{"Accept-Post": "application/json"}},
		{"JSON-like media type", wireRequest{method: "POST", target: "/v1/pets", body: `{"name":"A","categoryId":1}`, header: json("application/json-patch+json")}, 415, "unsupported_media_type", map[string]string{"Accept-Post": "application/json"}},
		{"body over the limit", wireRequest{method: "POST", target: "/v1/pets", body: `{"name":"` + strings.Repeat("a", 64<<10) + `","categoryId":1}`}, 413, "payload_too_large", nil},

		// The body of createPet.
		{"empty body", wireRequest{method: "POST", target: "/v1/pets", header: json("application/json")}, 400, "invalid_body", nil},
		{"array body", wireRequest{method: "POST", target: "/v1/pets", body: `[{"name":"A","categoryId":1}]`}, 400, "invalid_body", nil},
		{"two objects", wireRequest{method: "POST", target: "/v1/pets", body: `{"name":"A","categoryId":1}{"name":"B","categoryId":1}`}, 400, "invalid_body", nil},
		{"trailing data", wireRequest{method: "POST", target: "/v1/pets", body: `{"name":"A","categoryId":1} x`}, 400, "invalid_body", nil},
		{"truncated", wireRequest{method: "POST", target: "/v1/pets", body: `{"name":"A","categoryId":1`}, 400, "invalid_body", nil},
		{"name a number", wireRequest{method: "POST", target: "/v1/pets", body: `{"name":7,"categoryId":1}`}, 400, "invalid_body", nil},
		{"categoryId a string", wireRequest{method: "POST", target: "/v1/pets", body: `{"name":"A","categoryId":"1"}`}, 400, "invalid_body", nil},
		{"categoryId a fraction", wireRequest{method: "POST", target: "/v1/pets", body: `{"name":"A","categoryId":1.5}`}, 400, "invalid_body", nil},
		{"categoryId with exponent", wireRequest{method: "POST", target: "/v1/pets", body: `{"name":"A","categoryId":1e2}`}, 400, "invalid_body", nil},
		{"categoryId over int64", wireRequest{method: "POST", target: "/v1/pets", body: `{"name":"A","categoryId":9223372036854775808}`}, 400, "invalid_body", nil},
		{"status a number", wireRequest{method: "POST", target: "/v1/pets", body: `{"name":"A","categoryId":1,"status":1}`}, 400, "invalid_body", nil},
		{"name missing", wireRequest{method: "POST", target: "/v1/pets", body: `{"categoryId":1}`}, 400, "invalid_body", nil},
		{"categoryId missing", wireRequest{method: "POST", target: "/v1/pets", body: `{"name":"A"}`}, 400, "invalid_body", nil},
		{"name null", wireRequest{method: "POST", target: "/v1/pets", body: `{"name":null,"categoryId":1}`}, 400, "invalid_body", nil},
		{"categoryId null", wireRequest{method: "POST", target: "/v1/pets", body: `{"name":"A","categoryId":null}`}, 400, "invalid_body", nil},
		{"status null", wireRequest{method: "POST", target: "/v1/pets", body: `{"name":"A","categoryId":1,"status":null}`}, 400, "invalid_body", nil},
		{"unknown member", wireRequest{method: "POST", target: "/v1/pets", body: `{"name":"A","categoryId":1,"colour":"red"}`}, 400, "invalid_body", nil},
		{"member name in other case", wireRequest{method: "POST", target: "/v1/pets", body: `{"Name":"A","categoryId":1}`}, 400, "invalid_body", nil},
		{"id sent", wireRequest{method: "POST", target: "/v1/pets", body: `{"id":5,"name":"A","categoryId":1}`}, 400, "invalid_body", nil},
		{"duplicate member", wireRequest{method: "POST", target: "/v1/pets", body: `{"name":"A","name":"B","categoryId":1}`}, 400, "invalid_body", nil},
		{"name empty", wireRequest{method: "POST", target: "/v1/pets", body: `{"name":"","categoryId":1}`}, 400, "invalid_body", nil},
		{"name only spaces", wireRequest{method: "POST", target: "/v1/pets", body: `{"name":"  \t ","categoryId":1}`}, 400, "invalid_body", nil},
		{"name too long", wireRequest{method: "POST", target: "/v1/pets", body: `{"name":"` + longName + `","categoryId":1}`}, 400, "invalid_body", nil},
		{"name not UTF-8", wireRequest{method: "POST", target: "/v1/pets", body: "{\"name\":\"a\xffb\",\"categoryId\":1}"}, 400, "invalid_body", nil},
		{"name with lone surrogate", wireRequest{method: "POST", target: "/v1/pets", body: `{"name":"a\ud800b","categoryId":1}`}, 400, "invalid_body", nil},
		{"name with control character", wireRequest{method: "POST", target: "/v1/pets", body: `{"name":"a\u0007b","categoryId":1}`}, 400, "invalid_body", nil},
		{"name with raw newline", wireRequest{method: "POST", target: "/v1/pets", body: "{\"name\":\"a\nb\",\"categoryId\":1}"}, 400, "invalid_body", nil},
		{"status unknown", wireRequest{method: "POST", target: "/v1/pets", body: `{"name":"A","categoryId":1,"status":"lost"}`}, 400, "invalid_body", nil},
		{"status empty", wireRequest{method: "POST", target: "/v1/pets", body: `{"name":"A","categoryId":1,"status":""}`}, 400, "invalid_body", nil},
		{"categoryId 0", wireRequest{method: "POST", target: "/v1/pets", body: `{"name":"A","categoryId":0}`}, 400, "invalid_body", nil},
		{"categoryId negative", wireRequest{method: "POST", target: "/v1/pets", body: `{"name":"A","categoryId":-3}`}, 400, "invalid_body", nil},

		// Routes: exact paths, no redirects, 404 and 405 after authentication.
		{"unknown path", wireRequest{method: "GET", target: "/v1/orders"}, 404, "not_found", nil},
		{"trailing slash", wireRequest{method: "GET", target: "/v1/pets/"}, 404, "not_found", nil},
		{"double slash", wireRequest{method: "GET", target: "/v1//pets"}, 404, "not_found", nil},
		{"dot segments", wireRequest{method: "GET", target: "/v1/pets/../pets"}, 404, "not_found", nil},
		{"nested path", wireRequest{method: "GET", target: "/v1/pets/1/owner"}, 404, "not_found", nil},
		{"other version", wireRequest{method: "GET", target: "/v2/pets"}, 404, "not_found", nil},
		{"no base path", wireRequest{method: "GET", target: "/pets"}, 404, "not_found", nil},
		{"encoded slash in petId", wireRequest{method: "GET", target: "/v1/pets/1%2F2"}, 400, "invalid_parameter", nil},
		{"DELETE pets", wireRequest{method: "DELETE", target: "/v1/pets"}, 405, "method_not_allowed", map[string]string{"Allow": "GET, HEAD, POST"}},
		{"PUT pets", wireRequest{method: "PUT", target: "/v1/pets", body: `{"name":"A","categoryId":1}`}, 405, "method_not_allowed", map[string]string{"Allow": "GET, HEAD, POST"}},
		{"POST pet", wireRequest{method: "POST", target: "/v1/pets/1", body: `{"name":"A","categoryId":1}`}, 405, "method_not_allowed", map[string]string{"Allow": "GET, HEAD"}},
		{"DELETE pet", wireRequest{method: "DELETE", target: "/v1/pets/1"}, 405, "method_not_allowed", map[string]string{"Allow": "GET, HEAD"}},
		{"OPTIONS pet", wireRequest{method: "OPTIONS", target: "/v1/pets/1"}, 405, "method_not_allowed", map[string]string{"Allow": "GET, HEAD"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := memstore.New()
			h := wireHandler(t, store)
			before := wireAll(t, store)
			w := tt.req.do(h)
			wireCheckCommon(t, w, tt.status, tt.code)
			for k, want := range tt.header {
				if got := w.Header().Values(k); len(got) != 1 || got[0] != want {
					t.Errorf("header %s = %q, want %q", k, got, want)
				}
			}
			if got := w.Header().Get("Location"); got != "" {
				t.Errorf("an error has Location %q", got)
			}
			if diff := cmp.Diff(before, wireAll(t, store)); diff != "" {
				t.Errorf("the rejected request changed the store (-before +after):\n%s", diff)
			}
		})
	}
}

// TestUnauthenticatedLearnNothing checks that without a valid key every
// request gets the same answer, whether its path, method or pet exists.
func TestUnauthenticatedLearnNothing(t *testing.T) {
	h := wireHandler(t, memstore.New())
	var first string
	for _, q := range []wireRequest{
		{method: "GET", target: "/v1/pets"},
		{method: "GET", target: "/v1/pets/1"},
		{method: "GET", target: "/v1/pets/999"},
		{method: "GET", target: "/v1/nothing"},
		{method: "DELETE", target: "/v1/pets"},
		{method: "POST", target: "/v1/pets", body: `{}`},
	} {
		q.header = http.Header{"Authorization": {"Bearer wrong"}}
		w := q.do(h)
		got := w.Header().Get("Www-Authenticate") + "\n" + w.Body.String()
		if first == "" {
			first = got
		}
		if got != first || w.Code != 401 {
			t.Errorf("%s %s: %d %q, want 401 %q", q.method, q.target, w.Code, got, first)
		}
	}
}

func TestBearerSchemeIgnoresCase(t *testing.T) {
	h := wireHandler(t, memstore.New())
	for _, v := range []string{"Bearer " + wireKey, "bearer " + wireKey, "BEARER " + wireKey, "bEaReR   " + wireKey} {
		w := wireRequest{method: "GET", target: "/v1/pets", header: http.Header{"Authorization": {v}}}.do(h)
		if w.Code != 200 {
			t.Errorf("Authorization %q: status %d, want 200; %s", v, w.Code, w.Body)
		}
	}
}

// wireAuth is an Authenticator for the 403 and 503 rows: key "reader" may
// only read, key "down" finds the backend down.
var wireAuth = petstore.AuthenticatorFunc(func(ctx context.Context, op petstore.Operation, token string) (context.Context, error) {
	switch {
	case token == "down":
		return nil, errors.New("key server unreachable")
	case token == "reader" && op == petstore.OpCreatePet:
		return nil, petstore.ErrForbidden
	case token == "reader":
		return ctx, nil
	}
	return nil, petstore.ErrUnauthorized
})

func TestAuthenticatorAnswers(t *testing.T) {
	store := memstore.New()
	h := wireHandler(t, store, petstore.WithAuthenticator(wireAuth))
	tests := []struct {
		name   string
		req    wireRequest
		status int
		code   httpapi.Code
		header map[string]string
	}{
		{"read-only key lists", wireRequest{method: "GET", target: "/v1/pets"}, 200, "", nil},
		{"read-only key gets", wireRequest{method: "GET", target: "/v1/pets/1"}, 200, "", nil},
		{"read-only key may not create", wireRequest{method: "POST", target: "/v1/pets", body: `{"name":"A","categoryId":1}`}, 403, "forbidden", nil},
		{"authenticator down", wireRequest{method: "GET", target: "/v1/pets", header: http.Header{"Authorization": {"Bearer down"}}}, 503, "unavailable", map[string]string{"Retry-After": "1"}},
		{"authenticator rejects", wireRequest{method: "GET", target: "/v1/pets", header: http.Header{"Authorization": {"Bearer other"}}}, 401, "unauthorized", map[string]string{"Www-Authenticate": `Bearer realm="petstore", error="invalid_token"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.req.header == nil {
				tt.req.header = http.Header{"Authorization": {"Bearer reader"}}
			}
			before := wireAll(t, store)
			w := tt.req.do(h)
			wireCheckCommon(t, w, tt.status, tt.code)
			for k, want := range tt.header {
				if got := w.Header().Get(k); got != want {
					t.Errorf("header %s = %q, want %q", k, got, want)
				}
			}
			if diff := cmp.Diff(before, wireAll(t, store)); diff != "" {
				t.Errorf("store changed (-before +after):\n%s", diff)
			}
		})
	}
}

func wireRecorder() *httptest.ResponseRecorder { return httptest.NewRecorder() }

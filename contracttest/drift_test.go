package contracttest_test

import (
	"bytes"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/memstore"
)

// driftResponse is a response as a driftBreak middleware may change it.
type driftResponse struct {
	status int
	header http.Header
	body   []byte
}

// driftBreak returns h with every response passed through change before it
// is sent: a handler drifting away from its document.
func driftBreak(h http.Handler, change func(r *http.Request, resp *driftResponse)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		resp := &driftResponse{status: rec.Code, header: rec.Header(), body: rec.Body.Bytes()}
		change(r, resp)
		maps.Copy(w.Header(), resp.header)
		w.Header().Del("Content-Length") // net/http sets the changed body's
		w.WriteHeader(resp.status)
		_, _ = w.Write(resp.body)
	})
}

// driftSet returns a change that sets the header name to value, or deletes
// it when value is "".
func driftSet(name, value string) func(*http.Request, *driftResponse) {
	return func(_ *http.Request, resp *driftResponse) {
		if value == "" {
			resp.header.Del(name)
			return
		}
		resp.header.Set(name, value)
	}
}

// driftReplace returns a change that replaces old with new in the body.
func driftReplace(old, new string) func(*http.Request, *driftResponse) {
	return func(_ *http.Request, resp *driftResponse) {
		resp.body = bytes.Replace(resp.body, []byte(old), []byte(new), 1)
	}
}

// TestDriftCaught breaks the handler's responses on purpose, one way at a
// time, and checks that the validating client rejects each broken response
// and names what broke, while it accepts the unbroken one.
func TestDriftCaught(t *testing.T) {
	tests := []struct {
		name    string
		method  string
		path    string
		body    string
		key     string // "-" for none
		change  func(*http.Request, *driftResponse)
		wantErr string // "" when the response is not broken
	}{
		{name: "unbroken", method: "GET", path: "/pets", change: func(*http.Request, *driftResponse) {}},
		{name: "error body without status", method: "GET", path: "/pets", key: "-",
			change: driftReplace(`,"status":401`, ""), wantErr: `property "status" is missing`},
		{name: "error body with another status", method: "GET", path: "/pets/999", key: "",
			change: driftReplace(`"status":404`, `"status":400`), wantErr: "the error body's status is 400"},
		{name: "error code of another status", method: "GET", path: "/pets/999",
			change: driftReplace(`"not_found"`, `"invalid_parameter"`), wantErr: `the error code "invalid_parameter" goes with status 400`},
		{name: "error code not in the enum", method: "GET", path: "/pets/999",
			change: driftReplace(`"not_found"`, `"gone"`), wantErr: `Error at "/code": value is not one of the allowed values`},
		{name: "undocumented header", method: "GET", path: "/pets",
			change: driftSet("X-Powered-By", "petstore"), wantErr: "header X-Powered-By is not documented"},
		{name: "documented header on a response that does not document it", method: "GET", path: "/pets",
			change: driftSet("Retry-After", "1"), wantErr: "header Retry-After is not documented"},
		{name: "undocumented status", method: "GET", path: "/pets",
			change: func(_ *http.Request, resp *driftResponse) { resp.status = http.StatusAccepted }, wantErr: "status 202 is not documented"},
		{name: "undocumented status for an unknown path", method: "GET", path: "/orders",
			change: func(_ *http.Request, resp *driftResponse) { resp.status = http.StatusTeapot }, wantErr: "status 418 is not documented"},
		{name: "undocumented member", method: "GET", path: "/pets/1",
			change: driftReplace(`"id":1,`, `"id":1,"color":"red",`), wantErr: `property "color" is unsupported`},
		{name: "missing member", method: "GET", path: "/pets",
			change: driftReplace(`"categoryId":1`, `"category":1`), wantErr: `property "categoryId" is missing`},
		{name: "wrong type", method: "GET", path: "/pets/1",
			change: driftReplace(`"id":1`, `"id":"1"`), wantErr: `value must be an integer`},
		{name: "list not an array", method: "GET", path: "/pets",
			change: func(_ *http.Request, resp *driftResponse) { resp.body = []byte(`{"pets":[]}`) }, wantErr: "value must be an array"},
		{name: "Location missing", method: "POST", path: "/pets", body: `{"name":"Rex","categoryId":1}`,
			change: driftSet("Location", ""), wantErr: `response header "Location" missing`},
		{name: "Location absolute", method: "POST", path: "/pets", body: `{"name":"Rex","categoryId":1}`,
			change: driftSet("Location", "/v1/pets/4"), wantErr: `response header "Location" doesn't match schema`},
		{name: "Deprecation not a time", method: "GET", path: "/pets/1",
			change: driftSet("Deprecation", "true"), wantErr: `response header "Deprecation"`},
		{name: "WWW-Authenticate missing", method: "GET", path: "/pets", key: "-",
			change: driftSet("Www-Authenticate", ""), wantErr: `response header "WWW-Authenticate" missing`},
		{name: "Allow missing", method: "DELETE", path: "/pets",
			change: driftSet("Allow", ""), wantErr: `response header "Allow" missing`},
		{name: "Cache-Control changed", method: "GET", path: "/pets",
			change: driftSet("Cache-Control", "max-age=60"), wantErr: `response header "Cache-Control" doesn't match schema`},
		{name: "Content-Type changed", method: "GET", path: "/pets",
			change: driftSet("Content-Type", "text/plain"), wantErr: `Content-Type "text/plain" is not documented`},
		{name: "Content-Type missing", method: "GET", path: "/pets", // nil: not sniffed
			change: func(_ *http.Request, resp *driftResponse) { resp.header["Content-Type"] = nil }, wantErr: `Content-Type "" is not documented`},
		{
			name: "invalid request accepted", method: "POST", path: "/pets", body: `{"name":"Rex","categoryId":1,"color":"red"}`,
			change: func(_ *http.Request, resp *driftResponse) {
				*resp = driftResponse{status: 201, header: resp.header, body: []byte(`{"id":9,"name":"Rex","categoryId":1}`)}
				resp.header.Set("Location", "pets/9")
			},
			wantErr: "the document says the request is not valid, yet it succeeded",
		},
		{name: "document without paths", method: "GET", path: "/openapi.json", key: "-",
			change: driftReplace(`"paths"`, `"routes"`), wantErr: `property "paths" is missing`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, v := contractValidator(t, driftStore(t))
			srv := httptest.NewServer(driftBreak(h, tt.change))
			defer srv.Close()
			key := "Bearer " + contractKey
			if tt.key == "-" {
				key = ""
			}
			client := &http.Client{Transport: v.Transport(http.DefaultTransport)}
			resp, err := contractDo(t.Context(), client, tt.method, srv.URL+"/v1"+tt.path, tt.body, "Authorization", key)
			if resp != nil {
				resp.Body.Close()
			}
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("the unbroken response was rejected: %v", err)
			case tt.wantErr == "":
			case err == nil:
				t.Fatalf("the broken response was accepted; want an error with %q", tt.wantErr)
			case !strings.Contains(err.Error(), tt.wantErr):
				t.Fatalf("the error does not say %q:\n%v", tt.wantErr, err)
			}
			if got, want := len(v.Errors()), min(len(tt.wantErr), 1); got != want {
				t.Errorf("Errors() holds %d errors, want %d", got, want)
			}
		})
	}
}

// driftStore returns a memstore holding one pet, with ID 1.
func driftStore(t *testing.T) petstore.Store {
	t.Helper()
	s := memstore.New()
	if _, _, err := s.Add(t.Context(), petstore.NewPet{Name: "Rex", CategoryID: 1, Status: petstore.StatusAvailable}, petstore.AddOptions{}); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestDriftHeadWithBody checks the one break that a server cannot send: a
// HEAD response with a body.
func TestDriftHeadWithBody(t *testing.T) {
	h, v := contractValidator(t, memstore.New())
	for _, tt := range []struct {
		body    string
		wantErr bool
	}{{"", false}, {"[]", true}} {
		req := httptest.NewRequest(http.MethodHead, "/v1/pets", nil)
		req.Header.Set("Authorization", "Bearer "+contractKey)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		err := v.Check(req, nil, w.Code, w.Header(), []byte(tt.body))
		if (err != nil) != tt.wantErr {
			t.Errorf("HEAD answered with body %q: error %v, want an error: %v", tt.body, err, tt.wantErr)
		}
	}
}

// TestDriftBodyless checks the rule "JSON when there is a body" on an
// answer that documents none, a 304, with breaks that net/http would not
// send: a Content-Type or a body.
func TestDriftBodyless(t *testing.T) {
	h, v := contractValidator(t, driftStore(t))
	get := httptest.NewRequest(http.MethodGet, "/v1/pets/1", nil)
	get.Header.Set("Authorization", "Bearer "+contractKey)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, get)
	etag := w.Header().Get("ETag")
	for _, tt := range []struct {
		name        string
		contentType string
		body        string
		wantErr     string
	}{
		{"as the handler sends it", "", "", ""},
		{"with a Content-Type", "application/json", "", `the response documents no body, yet it has Content-Type "application/json" and 0 body bytes`},
		{"with a body", "", "{}", `the response documents no body, yet it has Content-Type "" and 2 body bytes`},
	} {
		req := get.Clone(t.Context())
		req.Header.Set("If-None-Match", etag)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusNotModified {
			t.Fatalf("GET with If-None-Match: status %d, want 304", w.Code)
		}
		header := w.Header().Clone()
		if tt.contentType != "" {
			header.Set("Content-Type", tt.contentType)
		}
		err := v.Check(req, nil, w.Code, header, []byte(tt.body))
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("304 %s: %v", tt.name, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("304 %s: error %v, want one that says %q", tt.name, err, tt.wantErr)
		}
	}
}

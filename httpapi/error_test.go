package httpapi_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/petstore-go/petstore/httpapi"
)

func TestWriteError(t *testing.T) {
	const message = `no order "1"; list orders at /store/orders`
	fields := []httpapi.FieldError{{Pointer: "/quantity", Detail: "quantity must be 1 or more"}, {Parameter: "limit", Detail: "limit must be a number"}}
	tests := []struct {
		name   string
		fields []httpapi.FieldError
		accept string
		ct     string
	}{
		{"plain", nil, "", "application/json"},
		{"fields", fields, "application/json", "application/json"},
		{"problem", fields, "application/problem+json", "application/problem+json"},
	}
	for _, tt := range tests {
		encoded, err := json.Marshal(httpapi.Error{Code: httpapi.CodeNotFound, Message: message, Status: http.StatusNotFound,
			Type: httpapi.TypeBase + "not_found", Title: "Not found", Errors: tt.fields})
		if err != nil {
			t.Fatal(err)
		}
		encoded = append(encoded, '\n')
		for _, method := range []string{http.MethodGet, http.MethodHead} {
			w := httptest.NewRecorder()
			r := httptest.NewRequest(method, "/store/orders/1", nil)
			if tt.accept != "" {
				r.Header.Set("Accept", tt.accept)
			}
			httpapi.WriteError(w, r, httpapi.CodeNotFound, message, tt.fields...)
			got := map[string]any{"status": w.Code, "header": w.Header()}
			want := map[string]any{"status": http.StatusNotFound, "header": http.Header{
				"Content-Type":           {tt.ct},
				"Cache-Control":          {"no-store"},
				"X-Content-Type-Options": {"nosniff"},
				"Content-Length":         {strconv.Itoa(len(encoded))},
			}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s %s (-want +got):\n%s", tt.name, method, diff)
			}
			if method == http.MethodHead {
				if w.Body.Len() != 0 {
					t.Errorf("%s HEAD: body %q, want none", tt.name, w.Body)
				}
				continue
			}
			if diff := cmp.Diff(string(encoded), w.Body.String()); diff != "" {
				t.Errorf("%s: body, against encoding/json's (-want +got):\n%s", tt.name, diff)
			}
		}
	}
}

func TestCodeTable(t *testing.T) {
	type entry struct {
		Status      int
		Title, Type string
	}
	codes := map[httpapi.Code]int{
		httpapi.CodeInvalidParameter:     400,
		httpapi.CodeInvalidBody:          400,
		httpapi.CodeUnauthorized:         401,
		httpapi.CodeForbidden:            403,
		httpapi.CodeNotFound:             404,
		httpapi.CodeMethodNotAllowed:     405,
		httpapi.CodeIdempotencyKeyInUse:  409,
		httpapi.CodeIdempotencyKeyReused: 422,
		httpapi.CodePayloadTooLarge:      413,
		httpapi.CodeUnsupportedMediaType: 415,
		httpapi.CodeRateLimited:          429,
		httpapi.CodeInternal:             500,
		httpapi.CodeUnavailable:          503,
	}
	want, got := map[httpapi.Code]entry{}, map[httpapi.Code]entry{}
	titles := map[string]httpapi.Code{}
	for c, status := range codes {
		want[c] = entry{status, got[c].Title, httpapi.TypeBase + string(c)}
		got[c] = entry{c.Status(), "", c.Type()}
		title := c.Title()
		if other, ok := titles[title]; ok || title == "" || strings.TrimSpace(title) != title {
			t.Errorf("%s: title %q is blank or also %s's", c, title, other)
		}
		titles[title] = c
	}
	want["no_such_code"] = entry{500, "", httpapi.TypeBase + "internal"}
	got["no_such_code"] = entry{httpapi.Code("no_such_code").Status(), "", httpapi.Code("no_such_code").Type()}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("status and type by code (-want +got):\n%s", diff)
	}
	if got := httpapi.Code("no_such_code").Title(); got != httpapi.CodeInternal.Title() {
		t.Errorf("an unknown code's title is %q, want internal's %q", got, httpapi.CodeInternal.Title())
	}
}

func TestPrefersProblem(t *testing.T) {
	tests := []struct {
		accept []string
		want   bool
	}{
		{nil, false},
		{[]string{""}, false},
		{[]string{"*/*"}, false},
		{[]string{"application/json"}, false},
		{[]string{"application/*"}, false},
		{[]string{"application/problem+json"}, true},
		{[]string{"Application/Problem+JSON"}, true},
		{[]string{"application/problem+json, application/json"}, false},
		{[]string{"application/json;q=0.9, application/problem+json"}, true},
		{[]string{"application/problem+json;q=0.5, application/json;q=0.6"}, false},
		{[]string{"application/problem+json;q=0.5, */*;q=0.1"}, true},
		{[]string{"application/problem+json;q=0"}, false},
		{[]string{"application/problem+json;q=oops"}, false},
		{[]string{"text/html", "application/problem+json"}, true},
		{[]string{"application/*;q=0.2, application/problem+json ; q=0.8"}, true},
	}
	for _, tt := range tests {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header["Accept"] = tt.accept
		if got := httpapi.PrefersProblem(r); got != tt.want {
			t.Errorf("Accept %q: PrefersProblem = %v, want %v", tt.accept, got, tt.want)
		}
	}
}

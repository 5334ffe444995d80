package httpapi_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/petstore-go/petstore/httpapi"
)

func TestWriteError(t *testing.T) {
	const message = `no order "1"; list orders at /store/orders`
	wantBody := httpapi.Error{Code: httpapi.CodeNotFound, Message: message, Status: http.StatusNotFound}
	encoded, err := json.Marshal(wantBody)
	if err != nil {
		t.Fatal(err)
	}
	for _, method := range []string{http.MethodGet, http.MethodHead} {
		w := httptest.NewRecorder()
		httpapi.WriteError(w, httptest.NewRequest(method, "/store/orders/1", nil), httpapi.CodeNotFound, message)
		got := map[string]any{"status": w.Code, "header": w.Header()}
		want := map[string]any{"status": http.StatusNotFound, "header": http.Header{
			"Content-Type":           {"application/json"},
			"Cache-Control":          {"no-store"},
			"X-Content-Type-Options": {"nosniff"},
			"Content-Length":         {strconv.Itoa(len(encoded))},
		}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", method, diff)
		}
		if method == http.MethodHead {
			if w.Body.Len() != 0 {
				t.Errorf("HEAD: body %q, want none", w.Body)
			}
			continue
		}
		if diff := cmp.Diff(string(encoded), w.Body.String()); diff != "" {
			t.Errorf("body, against encoding/json's (-want +got):\n%s", diff)
		}
	}
}

func TestCodeStatus(t *testing.T) {
	want := map[httpapi.Code]int{
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
		httpapi.CodeInternal:             500,
		httpapi.CodeUnavailable:          503,
		"no_such_code":                   500,
	}
	got := map[httpapi.Code]int{}
	for c := range want {
		got[c] = c.Status()
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Code.Status (-want +got):\n%s", diff)
	}
}

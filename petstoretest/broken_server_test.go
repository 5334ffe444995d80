package petstoretest_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/memstore"
)

// brokenServerKey is the API key of the handlers that newBrokenHandler
// makes, unless a test asks for another.
const brokenServerKey = "harness-key"

// brokenHandlerBugs maps each bug of brokenHandler to what it does to the
// responses of the real handler; "none" changes nothing.
var brokenHandlerBugs = map[string]func(r *http.Request, rec *httptest.ResponseRecorder){
	"none": func(*http.Request, *httptest.ResponseRecorder) {},
	// POST /pets answers 200 instead of 201.
	"wrong-status": func(r *http.Request, rec *httptest.ResponseRecorder) {
		if rec.Code == http.StatusCreated {
			rec.Code = http.StatusOK
		}
	},
	// 401 comes without its challenge.
	"no-www-authenticate": func(r *http.Request, rec *httptest.ResponseRecorder) {
		rec.Header().Del("WWW-Authenticate")
	},
	// Error bodies lack their status member.
	"error-without-status": func(r *http.Request, rec *httptest.ResponseRecorder) {
		editErrorBody(rec, func(body map[string]any) { delete(body, "status") })
	},
	// The next Link skips the first pet of the next page.
	"link-skips-pets": func(r *http.Request, rec *httptest.ResponseRecorder) {
		links := rec.Header().Values("Link")
		for i, l := range links {
			links[i] = brokenCursor.ReplaceAllStringFunc(l, func(m string) string {
				id, err := strconv.ParseInt(m[len("cursor="):], 36, 64)
				if err != nil {
					return m
				}
				return "cursor=" + strconv.FormatInt(id+1, 36)
			})
		}
	},
	// The next Link drops the status filter.
	"link-drops-status": func(r *http.Request, rec *httptest.ResponseRecorder) {
		links := rec.Header().Values("Link")
		for i, l := range links {
			links[i] = brokenStatusParam.ReplaceAllString(l, "")
		}
	},
	// Error messages repeat the Authorization header, as a debugging aid
	// left in would.
	"echoes-credential": func(r *http.Request, rec *httptest.ResponseRecorder) {
		editErrorBody(rec, func(body map[string]any) {
			body["message"] = fmt.Sprintf("%v (Authorization: %s)", body["message"], r.Header.Get("Authorization"))
		})
	},
	// Error answers repeat the Authorization header in one of their own.
	"echoes-credential-in-header": func(r *http.Request, rec *httptest.ResponseRecorder) {
		if rec.Code >= http.StatusBadRequest {
			rec.Header().Set("X-Debug-Authorization", r.Header.Get("Authorization"))
		}
	},
	// 415 comes without Accept-Post.
	"no-accept-post": func(r *http.Request, rec *httptest.ResponseRecorder) {
		rec.Header().Del("Accept-Post")
	},
	// GET /pets/{petId} has no Sunset header.
	"no-sunset": func(r *http.Request, rec *httptest.ResponseRecorder) {
		rec.Header().Del("Sunset")
	},
	// Responses lack X-Content-Type-Options.
	"no-nosniff": func(r *http.Request, rec *httptest.ResponseRecorder) {
		rec.Header().Del("X-Content-Type-Options")
	},
	// A method that is not all capitals is answered 405 with no body, as a
	// router in front of the handler that does not route such methods does.
	"router-405": func(r *http.Request, rec *httptest.ResponseRecorder) {
		if r.Method != strings.ToUpper(r.Method) {
			rec.Code = http.StatusMethodNotAllowed
			clear(rec.Header())
			rec.Body.Reset()
		}
	},
	// A pet gives its name twice, the first one empty, which a decoder that
	// keeps the last member reads as the right pet.
	"name-twice": func(r *http.Request, rec *httptest.ResponseRecorder) {
		if rec.Code < 300 {
			b := bytes.ReplaceAll(rec.Body.Bytes(), []byte(`"name":`), []byte(`"name":"","name":`))
			rec.Body.Reset()
			rec.Body.Write(b)
		}
	},
	// An error body gives its code twice.
	"code-twice": func(r *http.Request, rec *httptest.ResponseRecorder) {
		if rec.Code >= 400 {
			b := bytes.Replace(rec.Body.Bytes(), []byte(`"code":`), []byte(`"code":"internal","code":`), 1)
			rec.Body.Reset()
			rec.Body.Write(b)
		}
	},
	// A path with a trailing slash is redirected to the path without it.
	"trailing-slash-redirect": func(r *http.Request, rec *httptest.ResponseRecorder) {
		if p := r.URL.Path; strings.HasSuffix(p, "/") && strings.Count(p, "/") > 2 && rec.Code == http.StatusNotFound {
			rec.Code = http.StatusMovedPermanently
			rec.Header().Set("Location", strings.TrimSuffix(p, "/"))
		}
	},
}

// editErrorBody applies edit to the members of rec's error body, if any.
func editErrorBody(rec *httptest.ResponseRecorder, edit func(body map[string]any)) {
	var body map[string]any
	if rec.Code >= 400 && json.Unmarshal(rec.Body.Bytes(), &body) == nil {
		edit(body)
		b, _ := json.Marshal(body)
		rec.Body.Reset()
		rec.Body.Write(b)
	}
}

var (
	brokenCursor      = regexp.MustCompile(`cursor=[0-9a-z]+`)
	brokenStatusParam = regexp.MustCompile(`&status=[a-z]+`)
)

// newBrokenHandler returns the handler of petstore.New on a memstore at
// /v1 that accepts key, with the responses changed by the bug.
func newBrokenHandler(bug, key string) (http.Handler, error) {
	f, ok := brokenHandlerBugs[bug]
	if !ok {
		return nil, fmt.Errorf("no broken handler has the bug %q", bug)
	}
	h, err := petstore.New(petstore.WithStore(memstore.New()), petstore.WithAuthenticator(petstore.APIKeys(key)))
	if err != nil {
		return nil, err
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		for k, v := range rec.Header() { // the handler shares some values between answers
			rec.Header()[k] = slices.Clone(v)
		}
		f(r, rec)
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Del("Content-Length") // the body may have changed
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	}), nil
}

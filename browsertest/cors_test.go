package browsertest_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/memstore"
)

// The lists of the CORS middleware of docs/http.md, which the root
// package's TestCORSHeadersCoverTheDocument keeps in step with the OpenAPI
// document.
const (
	allow   = "Authorization, Content-Type, Idempotency-Key, If-None-Match, Last-Event-ID"
	expose  = "Link, ETag, Location, Idempotent-Replayed, Retry-After, WWW-Authenticate, Allow, Accept-Post, Deprecation, Sunset, RateLimit-Policy, RateLimit"
	methods = "GET, HEAD, POST"
)

// withCORS is the net/http CORS middleware that docs/http.md shows, for one
// trusted origin.
func withCORS(origin string, api http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Add("Vary", "Origin")
		if r.Header.Get("Origin") == origin {
			h.Set("Access-Control-Allow-Origin", origin)
			h.Set("Access-Control-Expose-Headers", expose)
			if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
				h.Set("Access-Control-Allow-Methods", methods)
				h.Set("Access-Control-Allow-Headers", allow)
				h.Set("Access-Control-Max-Age", "600")
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
		api.ServeHTTP(w, r)
	})
}

// corsScript calls the API at API (replaced before use) from the page's
// own origin, as a browser application would, and returns what the page
// can read of the answers.
const corsScript = `(async () => {
	const api = "API";
	const auth = {"Authorization": "Bearer ` + key + `"};
	const json = {...auth, "Content-Type": "application/json"};
	const out = {};
	try {
		let r = await fetch(api + "/pets", {method: "POST", headers: {...json, "Idempotency-Key": "k1"}, body: '{"name":"Rex","categoryId":1}'});
		out.create = r.status + " " + r.headers.get("Location");
		r = await fetch(api + "/pets", {method: "POST", headers: {...json, "Idempotency-Key": "k1"}, body: '{"name":"Rex","categoryId":1}'});
		out.replay = r.status + " " + r.headers.get("Idempotent-Replayed");
		await fetch(api + "/pets", {method: "POST", headers: json, body: '{"name":"Tom","categoryId":2}'});
		r = await fetch(api + "/pets?limit=1", {headers: auth, cache: "no-store"});
		const tag = r.headers.get("ETag");
		out.page = r.status + " " + r.headers.get("Link") + " " + (tag ? "tagged" : "untagged");
		r = await fetch(api + "/pets?limit=1", {headers: {...auth, "If-None-Match": tag}, cache: "no-store"});
		out.conditional = String(r.status);
		r = await fetch(api + "/pets/1", {headers: auth, cache: "no-store"});
		out.get = r.status + " " + (r.headers.get("Deprecation") ? "deprecated" : "-") + " " + (r.headers.get("Sunset") ? "sunset" : "-");
		r = await fetch(api + "/pets/1", {headers: {"Authorization": "Bearer wrong"}});
		out.unauthorized = r.status + " " + (await r.json()).code + " " + r.headers.get("WWW-Authenticate");
	} catch (e) {
		out.error = e.name;
	}
	return out;
})()`

// TestCORSFromAnotherOrigin serves the handler behind the README's CORS
// middleware and calls it with fetch from a page of another origin in
// headless Chromium: a create with an Idempotency-Key (a preflighted
// request) and its replay, a full page with its Link and ETag and the 304
// of If-None-Match, a get with its deprecation headers, and a 401 whose
// body and challenge the page can read. From an origin that the middleware
// does not trust, the first fetch fails.
func TestCORSFromAnotherOrigin(t *testing.T) {
	exe := chromium(t)
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(`<!DOCTYPE html><title>an application</title>`))
	}))
	defer app.Close()
	stranger := httptest.NewServer(app.Config.Handler)
	defer stranger.Close()

	api, err := petstore.New(petstore.WithStore(memstore.New()), petstore.WithAuthenticator(petstore.APIKeys(key)))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(withCORS(app.URL, api))
	defer srv.Close()

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ctx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	ctx, cancelTab := chromedp.NewContext(ctx, chromedp.WithLogf(t.Logf))
	defer cancelTab()

	awaitPromise := func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }
	script := strings.Replace(corsScript, "API", srv.URL+"/v1", 1)
	var got, strange map[string]string
	if err := chromedp.Run(ctx,
		chromedp.Navigate(app.URL),
		chromedp.Evaluate(script, &got, awaitPromise),
		chromedp.Navigate(stranger.URL),
		chromedp.Evaluate(script, &strange, awaitPromise),
	); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"create":       "201 pets/1",
		"replay":       "201 true",
		"page":         `200 <?limit=1&cursor=1>; rel="next" tagged`,
		"conditional":  "304",
		"get":          "200 deprecated sunset",
		"unauthorized": `401 unauthorized Bearer realm="petstore", error="invalid_token"`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("what a page of the trusted origin reads (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"error": "TypeError"}, strange); diff != "" {
		t.Errorf("what a page of another origin reads (-want +got):\n%s", diff)
	}
}

package browsertest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"
	"github.com/gorilla/mux"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/docspage"
	"github.com/petstore-go/petstore/internal/wire"
	"github.com/petstore-go/petstore/memstore"
)

// key is the API key that the test types into the page's Authorize dialog.
const key = "browser-test-key"

// chromium returns the path of a Chromium to drive: PETSTORE_CHROMIUM, or
// the first of the usual names found on PATH. Without one, it skips the
// test, or fails it under CI=true, where the browser test must run.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("PETSTORE_CHROMIUM"); p != "" {
		return p
	}
	names := []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless-shell"}
	for _, name := range names {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := fmt.Sprintf("no Chromium found: none of %s is on PATH and PETSTORE_CHROMIUM is not set; install it with apt-get install chromium", strings.Join(names, ", "))
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// browserLog collects what the browser reports that the page must never
// cause: console errors and warnings, uncaught exceptions, requests that
// failed or were answered with an error, and requests to another origin.
type browserLog struct {
	origin string

	mu       sync.Mutex
	problems []string
	requests []string // URL of every request the page made, in order
}

func (l *browserLog) add(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.problems = append(l.problems, fmt.Sprintf(format, args...))
}

// listen records the events of the browser tab in l.
func (l *browserLog) listen(ev any) {
	switch ev := ev.(type) {
	case *cdplog.EventEntryAdded:
		// CSP violations are reported here, with source "security".
		if ev.Entry.Level == cdplog.LevelError || ev.Entry.Level == cdplog.LevelWarning {
			l.add("log %s/%s: %s %s", ev.Entry.Source, ev.Entry.Level, ev.Entry.Text, ev.Entry.URL)
		}
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.APITypeError || ev.Type == runtime.APITypeWarning || ev.Type == runtime.APITypeAssert {
			var args []string
			for _, a := range ev.Args {
				args = append(args, string(a.Value)+a.Description)
			}
			l.add("console.%s: %s", ev.Type, strings.Join(args, " "))
		}
	case *runtime.EventExceptionThrown:
		d := ev.ExceptionDetails
		text := d.Text
		if d.Exception != nil {
			text += " " + d.Exception.Description
		}
		l.add("exception at %s:%d: %s", d.URL, d.LineNumber, text)
	case *network.EventRequestWillBeSent:
		u := ev.Request.URL
		l.mu.Lock()
		l.requests = append(l.requests, u)
		l.mu.Unlock()
		if !strings.HasPrefix(u, l.origin+"/") && !strings.HasPrefix(u, "data:") {
			l.add("request to another origin: %s", u)
		}
	case *network.EventLoadingFailed:
		l.add("request failed: %s %s (blocked: %s)", ev.Type, ev.ErrorText, ev.BlockedReason)
	case *network.EventResponseReceived:
		if ev.Response.Status >= 400 {
			l.add("request answered %d: %s", ev.Response.Status, ev.Response.URL)
		}
	}
}

// cspListener is evaluated in the page before its own scripts: it keeps
// every securitypolicyviolation event that the document fires.
const cspListener = `window.__csp = [];
document.addEventListener("securitypolicyviolation", e =>
	window.__csp.push(e.violatedDirective + " " + e.blockedURI));`

// TestDocsPageInChromium serves the handler under a base path in a host's
// gorilla/mux router, opens its docs page in headless Chromium, checks that
// every operation is shown, authorizes with an API key, checks that "Try
// it out" fills in the create with the document's example pet, executes it
// and sees the 201 and the pet stored, and checks that the browser reported no
// CSP violation, no error and no failed or foreign request. It saves a
// screenshot of the page at the end.
func TestDocsPageInChromium(t *testing.T) {
	exe := chromium(t)

	store := memstore.New()
	api, err := petstore.New(petstore.WithStore(store), petstore.WithAuthenticator(petstore.APIKeys(key)),
		petstore.WithBasePath("/zoo/api/v1"), petstore.WithDocs(docspage.Files()))
	if err != nil {
		t.Fatal(err)
	}
	host := mux.NewRouter()
	host.PathPrefix("/zoo/api/").Handler(api)
	host.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "host page", http.StatusTeapot) })
	srv := httptest.NewServer(host)
	defer srv.Close()

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.NoSandbox, // the sandbox needs privileges that containers and root lack
		chromedp.WindowSize(1280, 900),
	)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	ctx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	ctx, cancelTab := chromedp.NewContext(ctx, chromedp.WithLogf(t.Logf))
	defer cancelTab()

	logs := &browserLog{origin: srv.URL}
	chromedp.ListenTarget(ctx, logs.listen)

	docs := srv.URL + "/zoo/api/v1/docs"
	var ops []string
	if err := chromedp.Run(ctx,
		network.Enable(),
		cdplog.Enable(),
		chromedp.ActionFunc(func(ctx context.Context) error {
			_, err := page.AddScriptToEvaluateOnNewDocument(cspListener).Do(ctx)
			return err
		}),
		chromedp.Navigate(docs),
		chromedp.WaitVisible(`.opblock-post`, chromedp.ByQuery),
		chromedp.Evaluate(`Array.from(document.querySelectorAll(".opblock")).map(op =>
			op.querySelector(".opblock-summary-method").textContent + " " +
			op.querySelector("[data-path]").getAttribute("data-path"))`, &ops),
	); err != nil {
		t.Fatalf("opening %s: %v", docs, err)
	}
	var want []string // the page lists the operations in the route table's order
	for _, r := range wire.Routes() {
		want = append(want, r.Method+" "+r.Pattern)
	}
	if diff := cmp.Diff(want, ops); diff != "" {
		t.Errorf("operations on the page (-want +got):\n%s", diff)
	}

	// Authorize with the key, then try out POST /pets with the body that
	// the page fills in from the document's example.
	var status, responseBody, prefilled string
	var screenshot []byte
	if err := chromedp.Run(ctx,
		chromedp.Click(`.auth-wrapper .authorize`, chromedp.ByQuery),
		chromedp.WaitVisible(`.modal-ux input`, chromedp.ByQuery),
		chromedp.SendKeys(`.modal-ux input`, key, chromedp.ByQuery),
		chromedp.Click(`.modal-ux .auth-btn-wrapper .authorize`, chromedp.ByQuery),
		chromedp.WaitVisible(`.modal-ux .auth-btn-wrapper .btn-done`, chromedp.ByQuery),
		chromedp.Click(`.modal-ux .auth-btn-wrapper .btn-done`, chromedp.ByQuery),
		chromedp.WaitNotPresent(`.modal-ux`, chromedp.ByQuery),
		chromedp.FullScreenshot(&screenshot, 100), // every operation, the key in place
		chromedp.Click(`.opblock-post .opblock-summary-control`, chromedp.ByQuery),
		chromedp.WaitVisible(`.opblock-post .try-out__btn`, chromedp.ByQuery),
		chromedp.Click(`.opblock-post .try-out__btn`, chromedp.ByQuery),
		chromedp.WaitVisible(`.opblock-post textarea.body-param__text`, chromedp.ByQuery),
		chromedp.Value(`.opblock-post textarea.body-param__text`, &prefilled, chromedp.ByQuery),
		chromedp.WaitVisible(`.opblock-post .execute`, chromedp.ByQuery),
		chromedp.Click(`.opblock-post .execute`, chromedp.ByQuery),
		chromedp.WaitVisible(`.opblock-post .live-responses-table .response .response-col_status`, chromedp.ByQuery),
		chromedp.Text(`.opblock-post .live-responses-table .response .response-col_status`, &status, chromedp.ByQuery),
		chromedp.Text(`.opblock-post .live-responses-table .response-col_description pre`, &responseBody, chromedp.ByQuery),
	); err != nil {
		t.Fatalf("trying out POST /pets: %v", err)
	}
	var example petstore.NewPet
	if err := json.Unmarshal([]byte(prefilled), &example); err != nil {
		t.Errorf("Try it out filled in %q: %v", prefilled, err)
	}
	if want := (petstore.NewPet{Name: "Rex", CategoryID: 1, Status: petstore.StatusAvailable}); example != want {
		t.Errorf("Try it out filled in %+v, want the document's example %+v", example, want)
	}
	if strings.TrimSpace(status) != "201" || !strings.Contains(responseBody, `"name": "Rex"`) {
		t.Errorf("Try it out on POST /pets answered %q, want 201; body %s", status, responseBody)
	}
	var created petstore.Pet
	if err := json.Unmarshal([]byte(responseBody), &created); err != nil {
		t.Errorf("the page shows the body %q: %v", responseBody, err)
	}
	stored, err := store.List(context.Background(), petstore.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]petstore.Pet{created}, stored); diff != "" {
		t.Errorf("the store after Try it out (-want +got):\n%s", diff)
	}

	var violations []string
	if err := chromedp.Run(ctx, chromedp.Evaluate(`window.__csp`, &violations)); err != nil {
		t.Fatal(err)
	}
	if len(violations) > 0 {
		t.Errorf("the page violated its Content-Security-Policy: %q", violations)
	}
	path := os.Getenv("PETSTORE_SCREENSHOT")
	if path == "" {
		path = filepath.Join(os.TempDir(), "petstore-docs.png")
	}
	if err := os.WriteFile(path, screenshot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("saved a screenshot of %s to %s", docs, path)

	logs.mu.Lock()
	defer logs.mu.Unlock()
	if len(logs.problems) > 0 {
		t.Errorf("the browser reported:\n%s", strings.Join(logs.problems, "\n"))
	}
	if !hasSuffix(logs.requests, "/zoo/api/v1/openapi.json") {
		t.Errorf("the page never read the document; it requested:\n%s", strings.Join(logs.requests, "\n"))
	}
}

// hasSuffix reports whether any of urls ends with suffix.
func hasSuffix(urls []string, suffix string) bool {
	for _, u := range urls {
		if strings.HasSuffix(u, suffix) {
			return true
		}
	}
	return false
}

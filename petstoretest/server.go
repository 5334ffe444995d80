package petstoretest

import (
	"cmp"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/petstore-go/petstore"
)

// An Endpoint is a running server of the animal store API, as TestServer
// reaches it.
type Endpoint struct {
	// BaseURL is the URL under which the API is served, with its base path
	// and without a trailing slash, such as "http://127.0.0.1:8080/v1":
	// the list of pets is at BaseURL + "/pets".
	BaseURL string

	// APIKey is a key that the server accepts for every operation.
	APIKey string

	// Client sends the requests; nil means http.DefaultClient. TestServer
	// uses a copy of it that does not follow redirects, so that a redirect
	// shows as the response it is.
	Client *http.Client

	// MaxBodyBytes is the largest request body that the server accepts, as
	// set with petstore.WithMaxBodyBytes; 0 means the default,
	// petstore.DefaultMaxBodyBytes (64 KiB).
	MaxBodyBytes int64

	// Accept, when set, is the Accept header of every request that sets
	// none, such as "application/problem+json" to test the server's answers
	// to a client that prefers problem details (RFC 9457): its errors must
	// then have that Content-Type.
	Accept string
}

// TestServer tests a running server of the animal store API through HTTP
// only, one subtest per rule of the API specification and of the package's
// wire decisions, named after the rule, one after another. A failure names
// the rule that the server broke, with a diff. It checks every answer and
// header that a client can provoke, and that no answer repeats a credential
// of its request; it cannot provoke 403, 500 or 503.
//
// TestServer creates the pets that it checks, with names unique to the run,
// and leaves them in the store, which need not be empty. It pages through
// every pet of the store a few times, which takes a while on a store with
// very many pets.
func TestServer(t *testing.T, e Endpoint) {
	t.Helper()
	run, err := serverRun(e)
	if err != nil {
		t.Fatal(err)
	}
	testClauses(t, serverCases, run)
}

// CheckServer is the core of TestServer: it checks the server at e and
// returns an error for each rule that the server broke, joined, or nil.
// Each error names its rule, as in petstoretest: clause "auth-missing"
// failed: ...
func CheckServer(e Endpoint) error {
	run, err := serverRun(e)
	if err != nil {
		return err
	}
	return checkClauses(serverCases, run)
}

// serverRun checks e and returns the function that runs a rule of
// TestServer against it, with e's defaults filled in and a prefix of pet
// names unique to the run.
func serverRun(e Endpoint) (func(reporter, clause[*serverT]), error) {
	e.BaseURL = strings.TrimSuffix(e.BaseURL, "/")
	if u, err := url.Parse(e.BaseURL); err != nil || u.Scheme == "" || u.Host == "" {
		return nil, fmt.Errorf("petstoretest: Endpoint.BaseURL %q is not an absolute URL such as http://127.0.0.1:8080/v1", e.BaseURL)
	}
	if e.APIKey == "" {
		return nil, errors.New("petstoretest: Endpoint.APIKey is empty; give a key that the server accepts")
	}
	e.MaxBodyBytes = cmp.Or(e.MaxBodyBytes, petstore.DefaultMaxBodyBytes)
	client := *cmp.Or(e.Client, http.DefaultClient)
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	run := rand.Text()[:8]
	return func(r reporter, c clause[*serverT]) {
		names := "petstoretest " + run + " " + c.name
		c.test(&serverT{reporter: r, clause: c.sentence, rule: c.sentence, e: e, client: &client, names: names, seq: new(int)})
	}, nil
}

// serverT is the state of one rule of TestServer, which reports its
// failures to the reporter.
type serverT struct {
	reporter
	clause string // the rule of the subtest
	rule   string // the rule that failures break: clause, or one that helpers check for every subtest
	e      Endpoint
	client *http.Client
	names  string // the prefix of the names of the pets that the subtest creates
	seq    *int   // the number of names made so far
}

// Errorf reports a violation of st.rule and goes on.
func (st *serverT) Errorf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if st.rule != st.clause {
		msg += "\nrule: " + st.rule
	}
	st.reporter.Errorf("%s", msg)
}

// under returns st reporting its violations against rule.
func (st *serverT) under(rule string) *serverT {
	u := *st
	u.rule = rule
	return &u
}

func (st *serverT) url(path string) string { return st.e.BaseURL + path }

// name returns a pet name that no other subtest or run uses.
func (st *serverT) name(label string) string {
	*st.seq++
	return fmt.Sprintf("%s %s %d", st.names, label, *st.seq)
}

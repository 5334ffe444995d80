package petstoretest_test

import (
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/memstore"
	"github.com/petstore-go/petstore/petstoretest"
)

// TestServerDocUsage runs the usage of TestServer that the package doc
// shows, as written there: TestDocUsageVerbatim keeps the two the same.
func TestServerDocUsage(t *testing.T) {
	h, err := petstore.New(petstore.WithStore(memstore.New()), petstore.WithAuthenticator(petstore.APIKeys("key")))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	petstoretest.TestServer(t, petstoretest.Endpoint{BaseURL: srv.URL + "/v1", APIKey: "key"})
}

// TestDocUsageVerbatim checks that the body of TestServerDocUsage is the
// usage of TestServer in the package doc, line for line.
func TestDocUsageVerbatim(t *testing.T) {
	doc := readFile(t, "doc.go")
	// The usage is the indented block of the doc that calls TestServer.
	var block []string
	for _, b := range docBlocks(doc) {
		if strings.Contains(strings.Join(b, "\n"), "petstoretest.TestServer(") {
			block = b
		}
	}
	if block == nil {
		t.Fatalf("doc.go has no indented block that calls petstoretest.TestServer:\n%s", doc)
	}

	src := readFile(t, "doc_usage_test.go")
	_, body, ok := strings.Cut(src, "func TestServerDocUsage(t *testing.T) {\n")
	if !ok {
		t.Fatal("doc_usage_test.go has no func TestServerDocUsage")
	}
	body, _, _ = strings.Cut(body, "\n}\n")
	var got []string
	for line := range strings.SplitSeq(body, "\n") {
		got = append(got, strings.TrimPrefix(line, "\t"))
	}
	if diff := cmp.Diff(block, got); diff != "" {
		t.Errorf("the usage of TestServer in doc.go and the body of TestServerDocUsage differ (-doc +test):\n%s", diff)
	}
}

// docBlocks returns the indented blocks of the doc comment in src, each
// line without the comment marker and the first tab.
func docBlocks(src string) [][]string {
	var blocks [][]string
	var cur []string
	for line := range strings.SplitSeq(src, "\n") {
		if code, ok := strings.CutPrefix(line, "//\t"); ok {
			cur = append(cur, code)
			continue
		}
		if cur != nil {
			blocks = append(blocks, cur)
			cur = nil
		}
	}
	return blocks
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

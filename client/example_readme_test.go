package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/client"
	"github.com/petstore-go/petstore/memstore"
)

// readmeClient is the README's example of the client ("Calling it from
// Go"): the lines between the markers are the README's, word for word, as
// TestREADMEClientExample checks.
func readmeClient(ctx context.Context, baseURL, key string) error {
	// README begin
	c, err := client.New(baseURL, client.WithAPIKey(key))
	if err != nil {
		return err
	}
	pet, _, err := c.Add(ctx, petstore.NewPet{Name: "Rex", CategoryID: 1, Status: petstore.StatusAvailable}, petstore.AddOptions{})
	if err != nil {
		return err
	}
	fmt.Println("created", pet.ID)
	for p, err := range c.All(ctx, petstore.ListOptions{Status: petstore.StatusAvailable}) {
		if err != nil {
			return err
		}
		fmt.Println(p.ID, p.Name)
	}
	_, err = c.Get(ctx, 42)
	switch {
	case errors.Is(err, petstore.ErrNotFound): // 404: no pet has ID 42
		fmt.Println("no pet 42")
	case errors.Is(err, petstore.ErrUnavailable): // 503, or no answer, even after the client's retries
		return err
	}
	var e *client.Error // the answer: Status, Code, Message
	if errors.As(err, &e) {
		fmt.Println(e.Status, e.Code)
	}
	// README end
	return nil
}

// Example_readme runs the README's example against the handler on an
// in-memory store.
func Example_readme() {
	h, err := petstore.New(petstore.WithStore(memstore.New()), petstore.WithAuthenticator(petstore.APIKeys("secret-key")))
	if err != nil {
		log.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	if err := readmeClient(context.Background(), srv.URL+"/v1", "secret-key"); err != nil {
		log.Fatal(err)
	}
	// Output:
	// created 1
	// 1 Rex
	// no pet 42
	// 404 not_found
}

// TestREADMEClientExample checks that the README's example of the client is
// the body of readmeClient, which Example_readme runs.
func TestREADMEClientExample(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	must(t, err)
	_, section, ok := strings.Cut(string(readme), "\n## Calling it from Go\n")
	if !ok {
		t.Fatal(`README.md has no section "Calling it from Go"`)
	}
	_, block, ok := strings.Cut(section, "```go\n")
	if !ok {
		t.Fatal(`the README's section "Calling it from Go" has no Go block`)
	}
	block, _, _ = strings.Cut(block, "```\n")

	src, err := os.ReadFile("example_readme_test.go")
	must(t, err)
	_, body, _ := strings.Cut(string(src), "\t// README begin\n")
	body, _, _ = strings.Cut(body, "\t// README end\n")
	var want strings.Builder
	for line := range strings.Lines(body) {
		want.WriteString(strings.TrimPrefix(line, "\t"))
	}
	if diff := cmp.Diff(want.String(), block); diff != "" {
		t.Errorf("the README's example (+) is not readmeClient's body (-):\n%s", diff)
	}
}

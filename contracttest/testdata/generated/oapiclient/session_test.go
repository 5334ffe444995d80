package oapiclient_test

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"petstoregen/oapiclient"
)

// withKey returns a client of server that sends key.
func withKey(t *testing.T, server, key string) *oapiclient.ClientWithResponses {
	t.Helper()
	c, err := oapiclient.NewClientWithResponses(server, oapiclient.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
		r.Header.Set("Authorization", "Bearer "+key)
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestSession runs the session against the server at
// PETSTORE_OAPICLIENT_URL with the key of PETSTORE_KEY: a 401, three
// creates, a filtered list one page at a time through the next Link, a get,
// a 404 and a 400 with its field errors.
func TestSession(t *testing.T) {
	server, apiKey := os.Getenv("PETSTORE_OAPICLIENT_URL"), os.Getenv("PETSTORE_KEY")
	if server == "" || apiKey == "" {
		t.Fatal("PETSTORE_OAPICLIENT_URL and PETSTORE_KEY are not set: contracttest's TestGeneratedClients runs this test against a server")
	}
	ctx := t.Context()
	c := withKey(t, server, apiKey)

	res, err := withKey(t, server, "not "+apiKey).ListPetsWithResponse(ctx, &oapiclient.ListPetsParams{})
	if err != nil || res.JSON401 == nil || res.JSON401.Code != oapiclient.Unauthorized {
		t.Errorf("list with a wrong key: %v, %v; want a 401 unauthorized", res, err)
	}

	var ids []int64
	for _, p := range []struct {
		name   string
		status oapiclient.PetStatus
	}{{"Rex", oapiclient.Available}, {"Tom", oapiclient.Pending}, {"Fido", oapiclient.Available}} {
		res, err := c.CreatePetWithResponse(ctx, &oapiclient.CreatePetParams{}, oapiclient.NewPet{Name: p.name, CategoryId: 1, Status: &p.status})
		if err != nil || res.JSON201 == nil || res.Headers201 == nil {
			t.Fatalf("create %s: %v, %v; want a 201", p.name, res, err)
		}
		if want := "pets/" + strconv.FormatInt(res.JSON201.Id, 10); res.JSON201.Name != p.name || res.Headers201.Location != want {
			t.Errorf("create %s: %+v at %q, want the pet at %q", p.name, res.JSON201, res.Headers201.Location, want)
		}
		ids = append(ids, res.JSON201.Id)
	}

	var names []string
	limit, status := 1, oapiclient.Available
	params := oapiclient.ListPetsParams{Limit: &limit, Status: &status}
	for range 4 {
		res, err := c.ListPetsWithResponse(ctx, &params)
		if err != nil || res.JSON200 == nil || res.Headers200 == nil {
			t.Fatalf("list %+v: %v, %v; want a 200", params, res, err)
		}
		for _, p := range *res.JSON200 {
			names = append(names, p.Name)
		}
		if res.Headers200.Link == nil {
			break
		}
		next := cursor(t, *res.Headers200.Link)
		params.Cursor = &next
	}
	if diff := cmp.Diff([]string{"Rex", "Fido"}, names); diff != "" {
		t.Errorf("the available pets, page by page (-want +got):\n%s", diff)
	}

	got, err := c.GetPetWithResponse(ctx, ids[1], &oapiclient.GetPetParams{})
	if err != nil || got.JSON200 == nil || got.Headers200 == nil {
		t.Fatalf("get %d: %v, %v; want a 200", ids[1], got, err)
	}
	if got.JSON200.Name != "Tom" || got.JSON200.Status == nil || *got.JSON200.Status != oapiclient.Pending || got.Headers200.Deprecation == nil {
		t.Errorf("get %d: %+v with Deprecation %v, want Tom, pending, deprecated", ids[1], got.JSON200, got.Headers200.Deprecation)
	}
	got, err = c.GetPetWithResponse(ctx, ids[2]+1000, &oapiclient.GetPetParams{})
	if err != nil || got.JSON404 == nil || got.JSON404.Code != oapiclient.NotFound {
		t.Errorf("get an unknown pet: %v, %v; want a 404 not_found", got, err)
	}

	bad, err := c.CreatePetWithResponse(ctx, &oapiclient.CreatePetParams{}, oapiclient.NewPet{Name: " ", CategoryId: 0})
	if err != nil || bad.JSON400 == nil || bad.JSON400.Errors == nil {
		t.Fatalf("create an invalid pet: %v, %v; want a 400 with field errors", bad, err)
	}
	var pointers []string
	for _, e := range *bad.JSON400.Errors {
		if e.Pointer != nil {
			pointers = append(pointers, *e.Pointer)
		}
	}
	if diff := cmp.Diff([]any{oapiclient.InvalidBody, []string{"/name", "/categoryId"}}, []any{bad.JSON400.Code, pointers}); diff != "" {
		t.Errorf("create an invalid pet: code and pointers of the field errors (-want +got):\n%s", diff)
	}
}

// cursor returns the cursor of the page that a next Link points to.
func cursor(t *testing.T, link string) string {
	t.Helper()
	target, _, _ := strings.Cut(strings.TrimPrefix(link, "<"), ">")
	u, err := url.Parse(target)
	if err != nil || u.Query().Get("cursor") == "" {
		t.Fatalf("the next Link %q has no cursor (%v)", link, err)
	}
	return u.Query().Get("cursor")
}

package ogenclient_test

import (
	"context"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"petstoregen/ogenclient"
)

// key is a SecuritySource that sends one API key.
type key string

func (k key) Bearer(context.Context, ogenclient.OperationName) (ogenclient.Bearer, error) {
	return ogenclient.Bearer{Token: string(k)}, nil
}

// TestSession runs the session against the server at PETSTORE_OGENCLIENT_URL
// with the key of PETSTORE_KEY: a 401, three creates, a filtered list one
// page at a time through the next Link, a get, a 404 and a 400 with its
// field errors.
func TestSession(t *testing.T) {
	server, apiKey := os.Getenv("PETSTORE_OGENCLIENT_URL"), os.Getenv("PETSTORE_KEY")
	if server == "" || apiKey == "" {
		t.Fatal("PETSTORE_OGENCLIENT_URL and PETSTORE_KEY are not set: contracttest's TestGeneratedClients runs this test against a server")
	}
	ctx := t.Context()
	c, err := ogenclient.NewClient(server, key(apiKey))
	if err != nil {
		t.Fatal(err)
	}

	wrong, err := ogenclient.NewClient(server, key("not "+apiKey))
	if err != nil {
		t.Fatal(err)
	}
	res, err := wrong.ListPets(ctx, ogenclient.ListPetsParams{})
	if u, ok := res.(*ogenclient.ListPetsApplicationJSONUnauthorized); err != nil || !ok || u.Response.Code != ogenclient.ErrorCodeUnauthorized {
		t.Errorf("list with a wrong key: %#v, %v; want a 401 unauthorized", res, err)
	}

	var ids []int64
	for _, p := range []struct {
		name   string
		status ogenclient.PetStatus
	}{{"Rex", ogenclient.PetStatusAvailable}, {"Tom", ogenclient.PetStatusPending}, {"Fido", ogenclient.PetStatusAvailable}} {
		res, err := c.CreatePet(ctx, &ogenclient.NewPet{Name: p.name, CategoryId: 1, Status: ogenclient.NewOptPetStatus(p.status)}, ogenclient.CreatePetParams{})
		created, ok := res.(*ogenclient.PetHeaders)
		if err != nil || !ok {
			t.Fatalf("create %s: %#v, %v; want a 201", p.name, res, err)
		}
		if want := "pets/" + strconv.FormatInt(created.Response.ID, 10); created.Response.Name != p.name || created.Location != want {
			t.Errorf("create %s: %+v at %q, want the pet at %q", p.name, created.Response, created.Location, want)
		}
		ids = append(ids, created.Response.ID)
	}

	var names []string
	params := ogenclient.ListPetsParams{Limit: ogenclient.NewOptInt(1), Status: ogenclient.NewOptPetStatus(ogenclient.PetStatusAvailable)}
	for range 4 {
		res, err := c.ListPets(ctx, params)
		page, ok := res.(*ogenclient.PetsHeaders)
		if err != nil || !ok {
			t.Fatalf("list %+v: %#v, %v; want a 200", params, res, err)
		}
		for _, p := range page.Response {
			names = append(names, p.Name)
		}
		link, ok := page.Link.Get()
		if !ok {
			break
		}
		params.Cursor = ogenclient.NewOptString(cursor(t, link))
	}
	if diff := cmp.Diff([]string{"Rex", "Fido"}, names); diff != "" {
		t.Errorf("the available pets, page by page (-want +got):\n%s", diff)
	}

	res2, err := c.GetPet(ctx, ogenclient.GetPetParams{PetId: ids[1]})
	got, ok := res2.(*ogenclient.GetPetOKHeaders)
	if err != nil || !ok {
		t.Fatalf("get %d: %#v, %v; want a 200", ids[1], res2, err)
	}
	if got.Response.Name != "Tom" || got.Response.Status.Or("") != ogenclient.PetStatusPending || !got.Deprecation.IsSet() {
		t.Errorf("get %d: %+v with Deprecation %v, want Tom, pending, deprecated", ids[1], got.Response, got.Deprecation)
	}
	res2, err = c.GetPet(ctx, ogenclient.GetPetParams{PetId: ids[2] + 1000})
	if nf, ok := res2.(*ogenclient.GetPetApplicationJSONNotFound); err != nil || !ok || nf.Response.Code != ogenclient.ErrorCodeNotFound {
		t.Errorf("get an unknown pet: %#v, %v; want a 404 not_found", res2, err)
	}

	res3, err := c.CreatePet(ctx, &ogenclient.NewPet{Name: " ", CategoryId: 0}, ogenclient.CreatePetParams{})
	bad, ok := res3.(*ogenclient.CreatePetApplicationJSONBadRequest)
	if err != nil || !ok {
		t.Fatalf("create an invalid pet: %#v, %v; want a 400", res3, err)
	}
	var pointers []string
	for _, e := range bad.Response.Errors {
		pointers = append(pointers, e.Pointer.Or(""))
	}
	if diff := cmp.Diff([]any{ogenclient.ErrorCodeInvalidBody, []string{"/name", "/categoryId"}}, []any{bad.Response.Code, pointers}); diff != "" {
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

package petstore_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/httpapi"
	"github.com/petstore-go/petstore/internal/wire"
)

// openapiResponse is a response of the document, or a reference to one.
type openapiResponse struct {
	Ref         string         `json:"$ref"`
	Description string         `json:"description"`
	Headers     map[string]any `json:"headers"`
}

// openapiDoc is what TestOpenAPIMatchesRoutes reads of the document.
type openapiDoc struct {
	Paths map[string]map[string]struct {
		OperationID string                     `json:"operationId"`
		Deprecated  bool                       `json:"deprecated"`
		Responses   map[string]openapiResponse `json:"responses"`
	} `json:"paths"`
	Components struct {
		Responses map[string]openapiResponse `json:"responses"`
		Headers   map[string]struct {
			Schema struct {
				Enum []string `json:"enum"`
			} `json:"schema"`
		} `json:"headers"`
	} `json:"components"`
}

// resolve returns r, or the response it refers to.
func (d *openapiDoc) resolve(t *testing.T, r openapiResponse) openapiResponse {
	t.Helper()
	if r.Ref == "" {
		return r
	}
	name, ok := strings.CutPrefix(r.Ref, "#/components/responses/")
	ref, found := d.Components.Responses[name]
	if !ok || !found {
		t.Fatalf("response reference %q is not to a response of the components", r.Ref)
	}
	return ref
}

// documentedCode is how a response's description names its error code.
var documentedCode = regexp.MustCompile("The code is `([a-z_]+)`")

// TestOpenAPIMatchesRoutes checks the document against the route table
// (wire.Routes and wire.Allow), so that neither can change without
// the other: the same paths, methods, operationIds and deprecated flags;
// the Allow values of its 405 (those of the document's own path included); on every operation, the answers of
// authentication (each one authenticates), each error response naming a
// code of its status; and on a deprecated operation, the deprecation
// headers on every answer but those of authentication.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	var doc openapiDoc
	if err := json.Unmarshal(openapiFile(t), &doc); err != nil {
		t.Fatal(err)
	}
	type op struct {
		ID         string
		Deprecated bool
	}
	wantOps, gotOps := map[string]op{}, map[string]op{}
	var patterns []string
	for _, r := range wire.Routes() {
		wantOps[r.Method+" "+r.Pattern] = op{r.Operation, r.Deprecated}
		if !slices.Contains(patterns, r.Pattern) {
			patterns = append(patterns, r.Pattern)
		}
	}
	for path, methods := range doc.Paths {
		for method, o := range methods {
			gotOps[strings.ToUpper(method)+" "+path] = op{o.OperationID, o.Deprecated}
		}
	}
	if diff := cmp.Diff(wantOps, gotOps); diff != "" {
		t.Errorf("operations of the route table (-want) and of the document (+got):\n%s", diff)
	}

	// The document's Allow values are those of its paths and of the
	// document itself (its 405 is the same MethodNotAllowed response), each
	// once, in the order the route table first gives them.
	var wantAllow []string
	for _, p := range append(patterns, petstore.OpenAPIPath) {
		if a := wire.Allow(p); !slices.Contains(wantAllow, a) {
			wantAllow = append(wantAllow, a)
		}
	}
	if diff := cmp.Diff(wantAllow, doc.Components.Headers["Allow"].Schema.Enum); diff != "" {
		t.Errorf("Allow values of the route table (-want) and of the document's Allow header (+got):\n%s", diff)
	}

	// Every operation is authenticated, so it can answer these.
	authStatuses := []int{http.StatusUnauthorized, http.StatusForbidden, http.StatusInternalServerError, http.StatusServiceUnavailable}
	for _, r := range wire.Routes() {
		o, ok := doc.Paths[r.Pattern][strings.ToLower(r.Method)]
		if !ok {
			continue // reported above
		}
		name := r.Method + " " + r.Pattern
		for _, s := range authStatuses {
			if _, ok := o.Responses[strconv.Itoa(s)]; !ok {
				t.Errorf("%s: status %d, which authentication can answer, is not documented", name, s)
			}
		}
		for status, resp := range o.Responses {
			resp := doc.resolve(t, resp)
			n, err := strconv.Atoi(status)
			if err != nil {
				t.Errorf("%s: status %q is not a number", name, status)
				continue
			}
			if n >= 400 {
				m := documentedCode.FindStringSubmatch(resp.Description)
				if m == nil || httpapi.Code(m[1]).Status() != n {
					t.Errorf("%s %d: the description names no code of status %d: %q", name, n, n, resp.Description)
				}
			}
			_, hasDeprecation := resp.Headers["Deprecation"]
			authAnswer := n == http.StatusUnauthorized || n == http.StatusForbidden
			switch {
			case r.Deprecated && !authAnswer && !hasDeprecation:
				t.Errorf("%s %d: the operation is deprecated, but the answer documents no Deprecation header", name, n)
			case !r.Deprecated && hasDeprecation:
				t.Errorf("%s %d: the operation is not deprecated, but the answer documents a Deprecation header", name, n)
			}
		}
	}
}

package petstore_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/petstore-go/petstore/httpapi"
	"github.com/petstore-go/petstore/internal/wire"
)

// openapiResponse is a response of the document, or a reference to one.
type openapiResponse struct {
	Ref         string `json:"$ref"`
	Description string `json:"description"`
	Headers     map[string]struct {
		Ref string `json:"$ref"`
	} `json:"headers"`
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
// (wire.Routes), so that neither can change without the other: the same
// paths, methods, operationIds and deprecated flags; on every operation, the answers of authentication (each one authenticates),
// each error response naming a code of its status, and the rate limit
// headers on every answer (each one is governed by a budget); on a
// deprecated operation, the deprecation headers on every answer but those
// of authentication; and each header of an answer a reference to the one
// definition of the components.
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
	for _, r := range wire.Routes() {
		wantOps[r.Method+" "+r.Pattern] = op{r.Operation, r.Deprecated}
	}
	for path, methods := range doc.Paths {
		for method, o := range methods {
			gotOps[strings.ToUpper(method)+" "+path] = op{o.OperationID, o.Deprecated}
		}
	}
	if diff := cmp.Diff(wantOps, gotOps); diff != "" {
		t.Errorf("operations of the route table (-want) and of the document (+got):\n%s", diff)
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
			for hname, h := range resp.Headers {
				if !strings.HasPrefix(h.Ref, "#/components/headers/") {
					t.Errorf("%s %d: header %s is defined in place, not referred to in the components", name, n, hname)
				}
			}
			for _, hname := range []string{"RateLimit-Policy", "RateLimit"} {
				if _, ok := resp.Headers[hname]; !ok {
					t.Errorf("%s %d: the answer documents no %s header", name, n, hname)
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

package petstore_test

import (
	"testing"

	"github.com/petstore-go/petstore"
)

// TestDeprecationDates checks the deprecation headers on every answer of
// getPet, with the default dates and with WithDeprecation's, and that no
// other operation carries them. (The conformance clause get-deprecation
// checks their form and the successor link over the wire.)
func TestDeprecationDates(t *testing.T) {
	dep, sunset := defaultDates()
	for _, tc := range []struct {
		name        string
		opts        []petstore.Option
		deprecation string
		sunset      string
	}{
		{"default", nil, "@1767225600", "Thu, 05 Dec 2030 00:00:00 GMT"},
		{"WithDeprecation", []petstore.Option{petstore.WithDeprecation(dep.AddDate(1, 0, 0), sunset.AddDate(1, 0, 0))},
			"@1798761600", "Fri, 05 Dec 2031 00:00:00 GMT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := newEnv(t, tc.opts...)
			want := map[string]string{"Deprecation": tc.deprecation, "Sunset": tc.sunset, "Link": `<../pets>; rel="successor-version"`}
			for _, target := range []string{"/v1/pets/1", "/v1/pets/99", "/v1/pets/x"} {
				w := env.serve(newRequest(t, "GET", target, "", nil))
				for k, v := range want {
					if got := w.Header().Get(k); got != v {
						t.Errorf("GET %s: %s = %q, want %q", target, k, got, v)
					}
				}
			}
			for _, target := range []string{"/v1/pets", "/v1/nothing"} {
				w := env.serve(newRequest(t, "GET", target, "", nil))
				if got := w.Header().Get("Deprecation"); got != "" {
					t.Errorf("GET %s has Deprecation %q; only getPet is deprecated", target, got)
				}
			}
		})
	}
}

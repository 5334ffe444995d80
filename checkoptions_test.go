package petstore_test

import (
	"testing"
	"time"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/docspage"
	"github.com/petstore-go/petstore/memstore"
)

// TestCheckOptions checks that CheckOptions returns, word for word, the
// error that New returns for the same options with a store and an
// authenticator, and nil when New would succeed, so that a host can check
// its configuration before it opens its store.
func TestCheckOptions(t *testing.T) {
	tests := []struct {
		name    string
		opts    []petstore.Option
		wantErr bool
	}{
		{"none", nil, false},
		{"valid", []petstore.Option{petstore.WithBasePath("/api"), petstore.WithStoreTimeout(time.Second), petstore.WithDocs(docspage.Files())}, false},
		{"valid keys", []petstore.Option{petstore.WithAuthenticator(petstore.APIKeys("k1", "k2"))}, false},
		{"base path", []petstore.Option{petstore.WithBasePath("v1/")}, true},
		{"store timeout", []petstore.Option{petstore.WithStoreTimeout(-time.Second)}, true},
		{"nil option", []petstore.Option{nil}, true},
		{"bad key", []petstore.Option{petstore.WithAuthenticator(petstore.APIKeys("a key"))}, true},
		{"docs without the document", []petstore.Option{petstore.WithDocs(docspage.Files()), petstore.WithOpenAPI(false)}, true},
		{"two mistakes", []petstore.Option{petstore.WithBasePath("v1"), petstore.WithMaxBodyBytes(-1)}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := petstore.CheckOptions(tt.opts...)
			if (err != nil) != tt.wantErr {
				t.Fatalf("CheckOptions: %v, want an error: %v", err, tt.wantErr)
			}
			full := append([]petstore.Option{petstore.WithStore(memstore.New()), petstore.WithAuthenticator(petstore.APIKeys("key"))}, tt.opts...)
			_, newErr := petstore.New(full...)
			if err == nil {
				if newErr != nil {
					t.Errorf("CheckOptions: nil, but New: %v", newErr)
				}
				return
			}
			if newErr == nil || err.Error() != newErr.Error() {
				t.Errorf("CheckOptions: %v\nNew: %v\nwant the same error", err, newErr)
			}
		})
	}
}

package petstore_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/httpapi"
	"github.com/petstore-go/petstore/internal/testkit/faultstore"
)

// TestClientClosedRequest: a client that hangs up over a real connection
// while the store works on its read is observed as 499
// client_closed_request, not as a 503, and logged at debug only.
func TestClientClosedRequest(t *testing.T) {
	for _, op := range faultsOps()[:2] { // the reads
		t.Run(op.target, func(t *testing.T) {
			observed := make(chan petstore.Observation, 1)
			env := faultsNewEnv(t, petstore.WithObserver(func(_ context.Context, o petstore.Observation) { observed <- o }))
			env.fs.Set(op.method, faultstore.Fault{Delay: time.Hour}) // it waits until its context is done
			srv := newServer(t, env.h)

			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+op.target, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+testKey)
			errc := make(chan error, 1)
			go func() {
				resp, err := srv.Client().Do(req)
				if err == nil {
					resp.Body.Close()
				}
				errc <- err
			}()
			waitFor(t, "the store to be called", func() bool { return env.fs.Calls(op.method) > 0 })
			cancel()
			if err := <-errc; !errors.Is(err, context.Canceled) {
				t.Fatalf("the client's request ended with %v, want context.Canceled", err)
			}
			var o petstore.Observation
			select {
			case o = <-observed:
			case <-time.After(10 * time.Second):
				t.Fatal("the request was not observed")
			}
			want := petstore.Observation{Status: 499, Code: httpapi.CodeClientClosedRequest, Method: http.MethodGet}
			got := petstore.Observation{Status: o.Status, Code: o.Code, Method: o.Method}
			if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("observation (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"DEBUG petstore: client went away " + string(op.op)}, env.log.levels(t)); diff != "" {
				t.Errorf("log (-want +got):\n%s", diff)
			}
		})
	}
}

package petstore_test

import (
	"context"
	"errors"
	"github.com/petstore-go/petstore/httpapi"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/memstore"
)

// blockingStore is a Store whose reads wait until their context is done,
// telling entered when they begin.
type blockingStore struct {
	petstore.Store
	entered chan struct{}
}

var _ petstore.Store = blockingStore{}

func (s blockingStore) List(ctx context.Context, _ petstore.ListOptions) ([]petstore.Pet, error) {
	s.entered <- struct{}{}
	<-ctx.Done()
	return nil, ctx.Err()
}

func (s blockingStore) Get(ctx context.Context, _ int64) (petstore.Pet, error) {
	s.entered <- struct{}{}
	<-ctx.Done()
	return petstore.Pet{}, ctx.Err()
}

// TestClientClosedRequest: a client that hangs up over a real connection
// while the store works on its read is observed as 499
// client_closed_request, not as a 503, and logged at debug only.
func TestClientClosedRequest(t *testing.T) {
	for target, op := range map[string]petstore.Operation{"/v1/pets": petstore.OpListPets, "/v1/pets/1": petstore.OpGetPet} {
		t.Run(target, func(t *testing.T) {
			store := blockingStore{Store: memstore.New(), entered: make(chan struct{}, 1)}
			observed := make(chan petstore.Observation, 1)
			var logs logBuffer
			h := newHandler(t, store,
				petstore.WithLogger(slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))),
				petstore.WithObserver(func(_ context.Context, o petstore.Observation) { observed <- o }))
			srv := newServer(t, h)

			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+target, nil)
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
			select {
			case <-store.entered:
			case <-time.After(10 * time.Second):
				t.Fatal("the store was not called")
			}
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
			if diff := cmp.Diff([]string{"DEBUG petstore: client went away " + string(op)}, logs.levels(t)); diff != "" {
				t.Errorf("log (-want +got):\n%s", diff)
			}
		})
	}
}

package client_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/client"
	"github.com/petstore-go/petstore/memstore"
)

// An exchangeLog is the real handler behind an httptest.Server that notes,
// for every GET, its If-None-Match and the status it was answered with.
type exchangeLog struct {
	mu  sync.Mutex
	got []string // "If-None-Match? status" per GET: "- 200", "tag 304"
}

func (l *exchangeLog) serve(t *testing.T, store petstore.Store) string {
	t.Helper()
	h, err := petstore.New(petstore.WithStore(store), petstore.WithAuthenticator(authenticator))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusWriter{ResponseWriter: w}
		h.ServeHTTP(rec, r)
		if r.Method == http.MethodGet {
			inm := "-"
			if r.Header.Get("If-None-Match") != "" {
				inm = "tag"
			}
			l.mu.Lock()
			l.got = append(l.got, inm+" "+http.StatusText(rec.status))
			l.mu.Unlock()
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL + petstore.DefaultBasePath
}

// take returns the exchanges noted since the last call.
func (l *exchangeLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	got := l.got
	l.got = nil
	return got
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(status int) {
	w.status = status
	w.ResponseWriter.WriteHeader(status)
}

// addPlain adds n pets of the same name and category and no status to
// store, so that their JSON differs only in the ID.
func addPlain(t *testing.T, store petstore.Store, n int) {
	t.Helper()
	for range n {
		if _, _, err := store.Add(context.Background(), petstore.NewPet{Name: "p", CategoryID: 1}, petstore.AddOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestETagCacheGet checks that a Get of a pet read before asks with
// If-None-Match, takes the 304 as the pet, and that WithETagCache(0) never
// asks so.
func TestETagCacheGet(t *testing.T) {
	for _, c := range []struct {
		name string
		opts []client.Option
		want []string
	}{
		{"default", nil, []string{"- OK", "tag Not Modified", "tag Not Modified"}},
		{"WithETagCache(0)", []client.Option{client.WithETagCache(0)}, []string{"- OK", "- OK", "- OK"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			store := memstore.New()
			addPlain(t, store, 1)
			var log exchangeLog
			cl := newClient(t, log.serve(t, store), c.opts...)
			want, err := store.Get(context.Background(), 1)
			if err != nil {
				t.Fatal(err)
			}
			for range 3 {
				got, err := cl.Get(t.Context(), 1)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("Get (-want +got):\n%s", diff)
				}
			}
			if diff := cmp.Diff(c.want, log.take()); diff != "" {
				t.Errorf("If-None-Match and status of the GETs (-want +got):\n%s", diff)
			}
		})
	}
}

// TestETagCacheList checks that List over pages read before asks for the
// full ones with If-None-Match and takes their 304s, that the last page,
// which can grow, is read in full each time, and that pets added since are
// listed: a full last page that has gained a next page is read again.
func TestETagCacheList(t *testing.T) {
	store := memstore.New()
	addPlain(t, store, 4)
	var log exchangeLog
	cl := newClient(t, log.serve(t, store), client.WithPageSize(2))
	list := func(wantPets int, want []string) {
		t.Helper()
		pets, err := cl.List(t.Context(), petstore.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		all, err := store.List(context.Background(), petstore.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(pets) != wantPets {
			t.Errorf("List returned %d pets, want %d", len(pets), wantPets)
		}
		if diff := cmp.Diff(all, pets); diff != "" {
			t.Errorf("List (-store +client):\n%s", diff)
		}
		if diff := cmp.Diff(want, log.take()); diff != "" {
			t.Errorf("If-None-Match and status of the GETs (-want +got):\n%s", diff)
		}
	}
	// Pages of 2: [1 2] [3 4], the second full but last, so revalidated.
	list(4, []string{"- OK", "- OK"})
	list(4, []string{"tag Not Modified", "tag Not Modified"})
	addPlain(t, store, 1)
	// [3 4] now has a next page, so its old tag no longer matches; [5]
	// can still grow and has no tag.
	list(5, []string{"tag Not Modified", "tag OK", "- OK"})
	list(5, []string{"tag Not Modified", "tag Not Modified", "- OK"})
}

// TestETagCacheBound checks that the cache keeps no more than its bound,
// forgetting the oldest first: with room for four pets, of six read, the
// first is asked for again in full and the last with If-None-Match.
func TestETagCacheBound(t *testing.T) {
	store := memstore.New()
	addPlain(t, store, 6)
	var log exchangeLog
	one := len(`{"id":1,"name":"p","categoryId":1}`)
	cl := newClient(t, log.serve(t, store), client.WithETagCache(4*one))
	for _, id := range []int64{1, 2, 3, 4, 5, 6, 6, 1} {
		if _, err := cl.Get(t.Context(), id); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"- OK", "- OK", "- OK", "- OK", "- OK", "- OK", "tag Not Modified", "- OK"}
	if diff := cmp.Diff(want, log.take()); diff != "" {
		t.Errorf("If-None-Match and status of the GETs (-want +got):\n%s", diff)
	}
}

package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/petstore-go/petstore"
)

// crashRounds is how many times TestServerCrash kills the server.
const crashRounds = 5

// TestServerCrash kills the server on its SQLite file with SIGKILL under
// concurrent creates, crashRounds times, and starts it again: every pet
// acknowledged with 201 is there as it was, no ID or name is there twice,
// and a keyed retry of an acknowledged create replays it.
func TestServerCrash(t *testing.T) {
	const key = "crash-key"
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	bin := buildServer(t)
	dir := t.TempDir()

	acked := map[int64]loadCreate{} // every create answered 201, by ID
	p := startServerIn(t, dir, bin, key, nil)
	for round := range crashRounds {
		before := len(acked)
		killAfter := time.Duration(100+rng.IntN(600)) * time.Millisecond
		creates := crashLoad(t, p, key, round, killAfter)
		for _, c := range creates {
			if prev, ok := acked[c.pet.ID]; ok {
				t.Fatalf("round %d: ID %d acknowledged twice: %+v and %+v", round, c.pet.ID, prev, c)
			}
			acked[c.pet.ID] = c
		}

		p = startServerIn(t, dir, bin, key, nil)
		pets := allPets(t.Context(), t, p, key)
		stored := make(map[int64]petstore.Pet, len(pets))
		names := make(map[string]int64, len(pets))
		for i, pet := range pets {
			if i > 0 && pet.ID <= pets[i-1].ID {
				t.Fatalf("round %d: the list gives ID %d after %d", round, pet.ID, pets[i-1].ID)
			}
			if id, ok := names[pet.Name]; ok {
				t.Errorf("round %d: pets %d and %d are both %q: one create stored two pets", round, id, pet.ID, pet.Name)
			}
			names[pet.Name] = pet.ID
			stored[pet.ID] = pet
		}
		for id, c := range acked {
			if got, ok := stored[id]; !ok {
				t.Errorf("round %d: pet %d was acknowledged with 201 but is gone after the kill", round, id)
			} else if got != c.pet {
				t.Errorf("round %d: pet %d is %+v after the kill; acknowledged as %+v", round, id, got, c.pet)
			}
		}
		replays := 0
		for _, c := range creates {
			if c.key == "" {
				continue
			}
			a := createPet(t, p.baseURL, key, c.key, c.pet.NewPet)
			got, err := a.pet()
			if a.status != http.StatusCreated || !a.replayed() || err != nil || got != c.pet {
				t.Errorf("round %d: the keyed retry of pet %d after the kill: %v; want 201 replaying %+v", round, c.pet.ID, a, c.pet)
			}
			replays++
		}
		t.Logf("round %d: killed after %v; %d creates acknowledged (%d in all), %d pets stored, %d keyed retries replayed",
			round, killAfter, len(acked)-before, len(acked), len(pets), replays)
		if len(acked) == before {
			t.Errorf("round %d: no create was acknowledged before the kill", round)
		}
	}
}

// A loadCreate is a create that the server acknowledged with 201: the pet
// it answered with, its idempotency key ("" for none), and when.
type loadCreate struct {
	pet   petstore.Pet
	key   string
	acked time.Time
}

// createLoad sends creates to p from 16 goroutines until ctx ends, every
// other one with an idempotency key. A request that fails ends its
// goroutine, as an error of the test unless dies is set (the server is
// killed). It returns a channel closed at the first 201, and a function
// that waits for the goroutines and returns the creates acknowledged.
func createLoad(ctx context.Context, t *testing.T, p *serverProcess, key, prefix string, dies bool) (<-chan struct{}, func() []loadCreate) {
	const workers = 16
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: workers}}
	var (
		mu      sync.Mutex
		created []loadCreate
		wg      sync.WaitGroup
		first   = make(chan struct{})
		once    sync.Once
	)
	statuses := []petstore.Status{"", petstore.StatusAvailable, petstore.StatusPending, petstore.StatusSold}
	for w := range workers {
		wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				name := fmt.Sprintf("%s-w%d-%d", prefix, w, i)
				pet := petstore.NewPet{Name: name, CategoryID: int64(1 + i%5), Status: statuses[(w+i)%len(statuses)]}
				idemKey := ""
				if i%2 == 0 {
					idemKey = "k-" + name
				}
				a, err := send(ctx, client, createRequest(p.baseURL, key, idemKey, pet))
				if err != nil {
					if !dies && ctx.Err() == nil {
						t.Errorf("create %s: %v", name, err)
					}
					return
				}
				got, err := a.pet()
				if a.status != http.StatusCreated || err != nil || got.NewPet != pet {
					t.Errorf("create %s: %v; want 201 with %+v", name, a, pet)
					return
				}
				mu.Lock()
				created = append(created, loadCreate{pet: got, key: idemKey, acked: time.Now()})
				mu.Unlock()
				once.Do(func() { close(first) })
			}
		})
	}
	return first, func() []loadCreate {
		wg.Wait()
		client.CloseIdleConnections()
		return created
	}
}

// crashLoad runs createLoad and kills p with SIGKILL killAfter after the
// first 201, and returns the creates acknowledged before it died.
func crashLoad(t *testing.T, p *serverProcess, key string, round int, killAfter time.Duration) []loadCreate {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	first, wait := createLoad(ctx, t, p, key, fmt.Sprint("r", round), true)
	select {
	case <-first:
	case <-time.After(30 * time.Second):
		t.Errorf("round %d: no create acknowledged within 30s", round)
	}
	time.Sleep(killAfter)
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-p.exited
	cancel()
	return wait()
}

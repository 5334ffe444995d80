package main

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/redislimit/redistest"
)

// TestRateLimitCreates floods the server with keyed creates from one key:
// past its budget each is answered 429 rate_limited with Retry-After and
// stores nothing, while another key creates as before.
func TestRateLimitCreates(t *testing.T) {
	const attacker, victim, counter = "attacker-key-0123456789", "victim-key-0123456789", "counter-key-0123456789"
	p := startServer(t, buildServer(t), attacker+","+victim+","+counter, nil, "-store", "memory", "-create-limit", "2,10", "-limit-pause", "0")
	before := len(allPets(t.Context(), t, p, counter))
	idem := strings.Repeat("k", 240)
	statuses := map[int]int{}
	for i := range 60 {
		a := createPet(t, p.baseURL, attacker, idem+strconv.Itoa(i), petstore.NewPet{Name: "flood", CategoryID: 1})
		statuses[a.status]++
		if a.status == http.StatusTooManyRequests {
			if secs, err := strconv.Atoi(a.header.Get("Retry-After")); err != nil || secs < 1 || a.code() != "rate_limited" {
				t.Fatalf("a 429 without Retry-After in whole seconds or the code rate_limited: %v", a)
			}
		}
	}
	created := len(allPets(t.Context(), t, p, counter)) - before
	t.Logf("a flood of 60 creates: %v; %d pets stored", statuses, created)
	if created != statuses[http.StatusCreated] {
		t.Errorf("%d pets stored for %d answers 201: a create answered 429 stored something", created, statuses[http.StatusCreated])
	}
	if statuses[http.StatusCreated] > 10+2*5 || statuses[http.StatusTooManyRequests] == 0 {
		t.Errorf("answers %v; want at most the burst of 10 and a few more at 2 a second created, the rest 429", statuses)
	}
	if a := createPet(t, p.baseURL, victim, "", petstore.NewPet{Name: "victim", CategoryID: 1}); a.status != http.StatusCreated {
		t.Errorf("another key's create during the flood: %v; want 201", a)
	}
}

// TestLimitPause: by default a 429 over the budget is held for at least
// half of -limit-pause's second.
func TestLimitPause(t *testing.T) {
	const key = "pause-key-0123456789"
	p := startServer(t, buildServer(t), key, nil, "-store", "memory", "-create-limit", "1,1")
	if a := createPet(t, p.baseURL, key, "", petstore.NewPet{Name: "first", CategoryID: 1}); a.status != http.StatusCreated {
		t.Fatalf("the first create: %v; want 201", a)
	}
	start := time.Now()
	if a := createPet(t, p.baseURL, key, "", petstore.NewPet{Name: "second", CategoryID: 1}); a.status != http.StatusTooManyRequests {
		t.Fatalf("the second create, over a budget of 1: %v; want 429", a)
	}
	if took := time.Since(start); took < 500*time.Millisecond {
		t.Errorf("the 429 was answered after %v; want at least half of -limit-pause's 1s", took)
	}
}

// TestRateLimitSharedRedis reads with one key for 10 s from two instances
// in turn: on one Redis the key gets its budget once, with budgets kept in
// each process it gets one from each.
func TestRateLimitSharedRedis(t *testing.T) {
	redisURL := redistest.Start(t)
	bin := buildServer(t)
	const key = "shared-key-0123456789"
	const rate, burst = 2, 5
	const period = 10 * time.Second
	limit := []string{"-store", "memory", "-read-limit", fmt.Sprintf("%d,%d", rate, burst), "-limit-pause", "0"}
	instances := map[string][]*serverProcess{
		"redis":   {startServer(t, bin, key, []string{redisURLVar + "=" + redisURL}, limit...), startServer(t, bin, key, []string{redisURLVar + "=" + redisURL}, limit...)},
		"process": {startServer(t, bin, key, nil, limit...), startServer(t, bin, key, nil, limit...)},
	}
	served := map[string]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for name, procs := range instances {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(t.Context(), period)
			defer cancel()
			for i := 0; ctx.Err() == nil; i++ {
				a, err := send(ctx, http.DefaultClient, apiRequest{method: http.MethodGet, url: procs[i%2].baseURL + "/pets?limit=1", key: key})
				switch {
				case ctx.Err() != nil:
				case err != nil:
					t.Errorf("%s: %v", name, err)
					return
				case a.status == http.StatusOK:
					mu.Lock()
					served[name]++
					mu.Unlock()
				case a.status != http.StatusTooManyRequests:
					t.Errorf("%s: %v; want 200 or 429", name, a)
					return
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
	wg.Wait()
	budget := rate*int(period/time.Second) + burst
	t.Logf("reads served in %v at %d a second with a burst of %d (a budget of %d): %v", period, rate, burst, budget, served)
	if served["redis"] > budget+1 || served["redis"] < budget-rate {
		t.Errorf("two instances on one Redis served %d reads; want the one budget of %d", served["redis"], budget)
	}
	if served["process"] < 2*(budget-rate) {
		t.Errorf("two instances with budgets of their own served %d reads; want about twice the budget of %d", served["process"], budget)
	}
}

package petstoretest_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/petstore-go/petstore"
)

// logStore is a small durable petstore.Store: an append-only log of JSON
// lines in one file, one line for each pet stored, with its idempotency key
// and principal, synced to disk before Add returns and read back into
// memory on open. With the bug "none" it keeps the Store contract and
// everything survives a reopen; each other bug, named by bug, is one that a
// real durable store could have.
type logStore struct {
	bug     string
	closing atomic.Bool // Close has been called

	mu   sync.Mutex
	f    *os.File                   // the log; nil once closed
	pets []petstore.Pet             // in ascending order of ID
	last int64                      // the last ID assigned
	keys map[[2]string]petstore.Pet // by principal and idempotency key
}

var _ petstore.Store = (*logStore)(nil)

// logStoreBugs are the bugs that logStore knows.
var logStoreBugs = []string{
	"none",
	"ids-restart",   // the ID counter starts again at 1 on open
	"keys-lost",     // idempotency keys are not read back on open
	"cache-only",    // nothing is read back on open: the pets lived in memory only
	"key-after-pet", // the key is logged apart from its pet, and not at all when ctx ends or the store closes between the two
}

// logRecord is one line of the log: a pet, with its idempotency key when it
// has one, or (for the bug key-after-pet) a key alone, for the pet KeyOf.
type logRecord struct {
	ID int64 `json:"id,omitempty"`
	petstore.NewPet
	Principal string `json:"principal,omitempty"`
	Key       string `json:"key,omitempty"`
	KeyOf     int64  `json:"keyOf,omitempty"`
}

var errLogStoreClosed = errors.New("logstore: closed")

// openLogStore opens the log at path, creating it when it does not exist,
// and reads it back.
func openLogStore(path, bug string) (*logStore, error) {
	if !slices.Contains(logStoreBugs, bug) {
		return nil, fmt.Errorf("no log store has the bug %q", bug)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	s := &logStore{bug: bug, f: f, keys: map[[2]string]petstore.Pet{}}
	if bug != "cache-only" {
		if err := s.replay(); err != nil {
			return nil, errors.Join(fmt.Errorf("logstore: reading %s: %w", path, err), f.Close())
		}
	}
	if bug == "ids-restart" {
		s.last = 0
	}
	return s, nil
}

// replay reads the log into memory.
func (s *logStore) replay() error {
	sc := bufio.NewScanner(s.f)
	for sc.Scan() {
		var rec logRecord
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return err
		}
		if rec.KeyOf != 0 {
			if s.bug != "keys-lost" {
				i := slices.IndexFunc(s.pets, func(p petstore.Pet) bool { return p.ID == rec.KeyOf })
				if i < 0 {
					return fmt.Errorf("the key %q is for pet %d, which the log does not hold", rec.Key, rec.KeyOf)
				}
				s.keys[[2]string{rec.Principal, rec.Key}] = s.pets[i]
			}
			continue
		}
		pet := petstore.Pet{ID: rec.ID, NewPet: rec.NewPet}
		s.pets = append(s.pets, pet)
		s.last = max(s.last, pet.ID)
		if rec.Key != "" && s.bug != "keys-lost" {
			s.keys[[2]string{rec.Principal, rec.Key}] = pet
		}
	}
	return sc.Err()
}

// write appends rec to the log and syncs it to disk.
func (s *logStore) write(rec logRecord) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	if _, err := s.f.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("logstore: %w", err)
	}
	if err := s.f.Sync(); err != nil {
		return fmt.Errorf("logstore: %w", err)
	}
	return nil
}

// Add stores p under the next ID. It holds the lock from its check of ctx
// to the sync of the log, so a pet is either logged and visible, or
// neither; Close waits for it.
func (s *logStore) Add(ctx context.Context, p petstore.NewPet, opts petstore.AddOptions) (petstore.Pet, bool, error) {
	if err := p.Validate(); err != nil {
		return petstore.Pet{}, false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return petstore.Pet{}, false, errLogStoreClosed
	}
	if err := ctx.Err(); err != nil {
		return petstore.Pet{}, false, fmt.Errorf("logstore: %w", err)
	}
	key := [2]string{petstore.Principal(ctx), opts.IdempotencyKey}
	if stored, ok := s.keys[key]; ok && opts.IdempotencyKey != "" {
		if stored.NewPet != p {
			return petstore.Pet{}, false, fmt.Errorf("logstore: %w", petstore.ErrIdempotencyKeyReused)
		}
		return stored, true, nil
	}
	pet := petstore.Pet{ID: s.last + 1, NewPet: p}
	rec := logRecord{ID: pet.ID, NewPet: p}
	if opts.IdempotencyKey != "" && s.bug != "key-after-pet" {
		rec.Principal, rec.Key = key[0], key[1]
	}
	if err := s.write(rec); err != nil {
		return petstore.Pet{}, false, err
	}
	s.last = pet.ID
	s.pets = append(s.pets, pet)
	if opts.IdempotencyKey != "" && s.bug == "key-after-pet" {
		if err := s.interrupted(ctx); err != nil {
			return petstore.Pet{}, false, fmt.Errorf("logstore: %w", err)
		}
		if err := s.write(logRecord{KeyOf: pet.ID, Principal: key[0], Key: key[1]}); err != nil {
			return petstore.Pet{}, false, err
		}
	}
	if opts.IdempotencyKey != "" {
		s.keys[key] = pet
	}
	return pet, false, nil
}

// interrupted returns ctx.Err(), or errLogStoreClosed when ctx is not done
// and Close has been called.
func (s *logStore) interrupted(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.closing.Load() {
		return errLogStoreClosed
	}
	return nil
}

func (s *logStore) Get(ctx context.Context, id int64) (petstore.Pet, error) {
	if err := ctx.Err(); err != nil {
		return petstore.Pet{}, fmt.Errorf("logstore: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return petstore.Pet{}, errLogStoreClosed
	}
	for _, p := range s.pets {
		if p.ID == id {
			return p, nil
		}
	}
	return petstore.Pet{}, fmt.Errorf("logstore: pet %d: %w", id, petstore.ErrNotFound)
}

func (s *logStore) List(ctx context.Context, opts petstore.ListOptions) ([]petstore.Pet, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("logstore: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return nil, errLogStoreClosed
	}
	var out []petstore.Pet
	for _, p := range s.pets {
		if p.ID <= opts.After || opts.Status != "" && p.Status != opts.Status {
			continue
		}
		if opts.Limit > 0 && len(out) == opts.Limit {
			break
		}
		out = append(out, p)
	}
	return out, nil
}

// Close waits for the calls in flight and closes the log. Calls after it
// return errLogStoreClosed.
func (s *logStore) Close() error {
	s.closing.Store(true)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	s.f = nil
	return err
}

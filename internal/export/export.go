// Package export is what petstore export writes and petstore import reads:
// the Record that the SQL stores' Export gives and Import takes, the check
// of a record, and the records as JSON lines.
//
// The lines: the first is Header; each other line is one pet, in ascending
// ID order, with the idempotency key of the create that stored it while
// the store keeps it, and the principal that scoped that key:
//
//	{"petstoreExport":1}
//	{"id":1,"name":"Rex","categoryId":2,"status":"available"}
//	{"id":2,"name":"Tom","categoryId":1,"idempotencyKey":{"principal":"alice","key":"k1","createdAt":"2026-01-02T15:04:05.123Z"}}
//
// createdAt is when the key was stored, in UTC to the millisecond: the
// store that imports it forgets the key when the store it came from would
// have. Exporting what was imported gives the same lines.
package export

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"time"

	"github.com/petstore-go/petstore"
)

// A Record is a pet as a store's Export gives it and Import takes it, with
// the idempotency key of the create that stored it while the store keeps
// that key.
type Record struct {
	petstore.Pet
	// Principal and Key are the key's scope and the key, or both empty
	// when no key is kept for the pet.
	Principal, Key string
	// KeyCreated is when the key was stored, by the store's clock; the key
	// is forgotten once its retention has passed from then.
	KeyCreated time.Time
}

// MaxID is the highest pet ID that Check takes: 2⁵³−1, the largest
// integer that a JSON number read as a float64 (as JavaScript reads it)
// holds exactly. A store that took 2⁶³−1, the last ID there is, could
// never create a pet again; above MaxID, 2⁶³−2⁵³ IDs are left for creates.
const MaxID = 1<<53 - 1

// MaxSkew is how far past the importing clock a key's KeyCreated may be:
// the clocks of the machine that exported and the one that imports may
// differ by that much. A key stored later still would be kept past its
// retention, for ever in the worst case.
const MaxSkew = 5 * time.Minute

// Check reports what makes r unfit for import after a record with ID last
// (0 for the first), when the importing clock reads now.
func (r Record) Check(last int64, now time.Time) error {
	switch {
	case r.ID <= 0:
		return fmt.Errorf("pet ID %d: IDs are positive", r.ID)
	case r.ID <= last:
		return fmt.Errorf("pet ID %d after %d: IDs must ascend, as export gives them", r.ID, last)
	case r.ID > MaxID:
		return fmt.Errorf("pet ID %d is above %d (2^53-1), the highest that import takes, "+
			"so that creates after it have IDs left and every ID reads exactly as a JSON number", r.ID, int64(MaxID))
	case r.Key == "" && (r.Principal != "" || !r.KeyCreated.IsZero()):
		return fmt.Errorf("pet %d: a key's principal or time without the key", r.ID)
	case r.Key != "" && r.KeyCreated.IsZero():
		return fmt.Errorf("pet %d: a key without the time it was stored", r.ID)
	case r.KeyCreated.After(now.Add(MaxSkew)):
		return fmt.Errorf("pet %d: the key was stored at %s, in the future (now is %s, and clocks may differ by %v at most); "+
			"such a key would outlive its retention", r.ID, r.KeyCreated.UTC().Format(timeLayout), now.UTC().Format(timeLayout), MaxSkew)
	}
	if err := r.NewPet.Validate(); err != nil {
		return fmt.Errorf("pet %d: %w", r.ID, err)
	}
	return nil
}

// Rows are the rows of a store's export query: pgx.Rows or *sql.Rows.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// Scan yields the records that rows hold until yield asks to stop, and
// returns the error of a row that fails to scan, or of rows. The columns
// are a pet's ID, name, category and status, then its key's principal, key
// and creation time, which keyCreated reads (empty, empty, NULL: no key).
func Scan[T any](rows Rows, keyCreated func(T) time.Time, yield func(Record, error) bool) error {
	for rows.Next() {
		var (
			r       Record
			created *T
		)
		if err := rows.Scan(&r.ID, &r.Name, &r.CategoryID, &r.Status, &r.Principal, &r.Key, &created); err != nil {
			return err
		}
		if created != nil {
			r.KeyCreated = keyCreated(*created).UTC()
		}
		if !yield(r, nil) {
			return nil
		}
	}
	return rows.Err()
}

// Header is the first line of an export.
const Header = `{"petstoreExport":1}`

// line is one pet of an export.
type line struct {
	petstore.Pet      // its JSON: id, name, categoryId, status
	Key          *key `json:"idempotencyKey,omitempty"`
}

// key is the idempotency key of a line.
type key struct {
	Principal string `json:"principal"`
	Key       string `json:"key"`
	CreatedAt string `json:"createdAt"`
}

// timeLayout is the layout of createdAt.
const timeLayout = "2006-01-02T15:04:05.000Z07:00"

// MaxLine is the longest line that Read reads: a pet's name is at most 256
// characters and a key 255.
const MaxLine = 64 << 10

// Write writes records to w as lines and returns the number of pets and
// keys written.
func Write(w io.Writer, records iter.Seq2[Record, error]) (pets, keys int64, err error) {
	bw := bufio.NewWriter(w)
	bw.WriteString(Header + "\n")
	enc := json.NewEncoder(bw)
	for r, err := range records {
		if err != nil {
			return pets, keys, err
		}
		l := line{Pet: r.Pet}
		if r.Key != "" {
			l.Key = &key{Principal: r.Principal, Key: r.Key, CreatedAt: r.KeyCreated.UTC().Format(timeLayout)}
			keys++
		}
		if err := enc.Encode(l); err != nil {
			return pets, keys, err
		}
		pets++
	}
	return pets, keys, bw.Flush()
}

// Read returns the records of the lines that r holds, one line at a time,
// each checked (see Check) against the clock reading now. It yields an
// error that names the line and the reason for anything that Write does
// not write or Check refuses: a missing or other first line, a line that is
// not one JSON object of a pet, an unknown field, an invalid record.
func Read(r io.Reader, now time.Time) iter.Seq2[Record, error] {
	return func(yield func(Record, error) bool) {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 0, 4096), MaxLine)
		n := 0
		fail := func(format string, args ...any) {
			yield(Record{}, fmt.Errorf("line %d: %s", n, fmt.Sprintf(format, args...)))
		}
		var last int64
		for sc.Scan() {
			n++
			b := sc.Bytes()
			if n == 1 {
				if string(bytes.TrimSpace(b)) != Header {
					fail("want %s, the first line of what petstore export writes", Header)
					return
				}
				continue
			}
			var l line
			dec := json.NewDecoder(bytes.NewReader(b))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&l); err != nil {
				fail("not a pet as petstore export writes it: %v", err)
				return
			}
			if dec.More() {
				fail("more than one JSON value")
				return
			}
			rec := Record{Pet: l.Pet}
			if k := l.Key; k != nil {
				created, err := time.Parse(timeLayout, k.CreatedAt)
				if k.Key == "" || err != nil {
					fail("the idempotency key needs a key and a createdAt such as 2026-01-02T15:04:05.123Z")
					return
				}
				rec.Principal, rec.Key, rec.KeyCreated = k.Principal, k.Key, created
			}
			if err := rec.Check(last, now); err != nil {
				fail("%v", err)
				return
			}
			last = rec.ID
			if !yield(rec, nil) {
				return
			}
		}
		err := sc.Err()
		switch {
		case errors.Is(err, bufio.ErrTooLong):
			n++
			fail("longer than %d bytes", MaxLine)
		case err != nil:
			yield(Record{}, err)
		case n == 0:
			yield(Record{}, errors.New("the input is empty; want what petstore export writes"))
		}
	}
}

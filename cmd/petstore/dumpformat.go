package main

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
	"github.com/petstore-go/petstore/sqlitestore"
)

// The format of petstore export, read by petstore import: JSON lines. The
// first line is exportHeader; each other line is one pet, in ascending ID
// order, with the idempotency key of the create that stored it while the
// store keeps it:
//
//	{"petstoreExport":1}
//	{"id":1,"name":"Rex","categoryId":2,"status":"available"}
//	{"id":2,"name":"Tom","categoryId":1,"idempotencyKey":{"principal":"alice","key":"k1","createdAt":"2026-01-02T15:04:05.123Z"}}
//
// createdAt is when the key was stored, in UTC to the millisecond: its age
// at any time follows, and import keeps it, so that the key is forgotten
// when it would have been in the store it came from. Exporting what was
// imported gives the same lines.
const exportHeader = `{"petstoreExport":1}`

// exportLine is one pet of an export.
type exportLine struct {
	ID         int64           `json:"id"`
	Name       string          `json:"name"`
	CategoryID int64           `json:"categoryId"`
	Status     petstore.Status `json:"status,omitempty"`
	Key        *exportKey      `json:"idempotencyKey,omitempty"`
}

// exportKey is the idempotency key of an exportLine.
type exportKey struct {
	Principal string `json:"principal"`
	Key       string `json:"key"`
	CreatedAt string `json:"createdAt"`
}

// keyTimeLayout is the layout of createdAt.
const keyTimeLayout = "2006-01-02T15:04:05.000Z07:00"

// maxExportLine is the longest line that import reads: a pet's name is at
// most 256 characters and a key 255.
const maxExportLine = 64 << 10

// writeExport writes records to w in the export format and returns the
// number of pets and keys written.
func writeExport(w io.Writer, records iter.Seq2[sqlitestore.Record, error]) (pets, keys int64, err error) {
	bw := bufio.NewWriter(w)
	bw.WriteString(exportHeader + "\n")
	enc := json.NewEncoder(bw)
	for r, err := range records {
		if err != nil {
			return pets, keys, err
		}
		line := exportLine{ID: r.ID, Name: r.Name, CategoryID: r.CategoryID, Status: r.Status}
		if r.Key != "" {
			line.Key = &exportKey{Principal: r.Principal, Key: r.Key, CreatedAt: r.KeyCreated.UTC().Format(keyTimeLayout)}
			keys++
		}
		if err := enc.Encode(line); err != nil {
			return pets, keys, err
		}
		pets++
	}
	return pets, keys, bw.Flush()
}

// readExport returns the records of the export that r holds, one line at a
// time. It yields an error naming the line for anything that export does
// not write: a missing or other first line, a line that is not one JSON
// object of a pet, an unknown field, an invalid pet, IDs out of order.
func readExport(r io.Reader) iter.Seq2[sqlitestore.Record, error] {
	return func(yield func(sqlitestore.Record, error) bool) {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 0, 4096), maxExportLine)
		n := 0
		fail := func(format string, args ...any) {
			yield(sqlitestore.Record{}, fmt.Errorf("line %d: %s", n, fmt.Sprintf(format, args...)))
		}
		var last int64
		for sc.Scan() {
			n++
			b := sc.Bytes()
			if n == 1 {
				if string(bytes.TrimSpace(b)) != exportHeader {
					fail("want %s, the first line of what petstore export writes", exportHeader)
					return
				}
				continue
			}
			var line exportLine
			dec := json.NewDecoder(bytes.NewReader(b))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&line); err != nil {
				fail("not a pet as petstore export writes it: %v", err)
				return
			}
			if dec.More() {
				fail("more than one JSON value")
				return
			}
			rec := sqlitestore.Record{Pet: petstore.Pet{ID: line.ID, NewPet: petstore.NewPet{Name: line.Name, CategoryID: line.CategoryID, Status: line.Status}}}
			if k := line.Key; k != nil {
				created, err := time.Parse(keyTimeLayout, k.CreatedAt)
				if k.Key == "" || err != nil {
					fail("the idempotency key needs a key and a createdAt such as 2026-01-02T15:04:05.123Z")
					return
				}
				rec.Principal, rec.Key, rec.KeyCreated = k.Principal, k.Key, created
			}
			switch {
			case line.ID <= 0:
				fail("id %d: want a positive id", line.ID)
				return
			case line.ID <= last:
				fail("id %d after %d: ids must ascend, as petstore export writes them", line.ID, last)
				return
			}
			if err := rec.Validate(); err != nil {
				fail("pet %d: %v", line.ID, err)
				return
			}
			last = line.ID
			if !yield(rec, nil) {
				return
			}
		}
		err := sc.Err()
		switch {
		case errors.Is(err, bufio.ErrTooLong):
			n++
			fail("longer than %d bytes", maxExportLine)
		case err != nil:
			yield(sqlitestore.Record{}, err)
		case n == 0:
			yield(sqlitestore.Record{}, errors.New("the input is empty; want what petstore export writes"))
		}
	}
}

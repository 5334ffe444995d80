package export_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/internal/export"
)

var now = time.Date(2026, 1, 2, 15, 4, 5, 123e6, time.UTC)

// TestWriteRead writes records and reads them back, the same.
func TestWriteRead(t *testing.T) {
	want := []export.Record{
		{Pet: petstore.Pet{ID: 1, NewPet: petstore.NewPet{Name: "Rex", CategoryID: 2, Status: petstore.StatusAvailable}}},
		{Pet: petstore.Pet{ID: 2, NewPet: petstore.NewPet{Name: "Tom", CategoryID: 1}}, Principal: "key-3849217f2053a1a1", Key: "k1", KeyCreated: now},
		{Pet: petstore.Pet{ID: export.MaxID, NewPet: petstore.NewPet{Name: "last", CategoryID: 1}}, Principal: "alice", Key: "k2", KeyCreated: now.Add(export.MaxSkew)},
	}
	var b bytes.Buffer
	pets, keys, err := export.Write(&b, func(yield func(export.Record, error) bool) {
		for _, r := range want {
			if !yield(r, nil) {
				return
			}
		}
	})
	if err != nil || pets != 3 || keys != 2 {
		t.Fatalf("Write: %d pets, %d keys, %v; want 3, 2", pets, keys, err)
	}
	wantLines := export.Header + "\n" +
		`{"id":1,"name":"Rex","categoryId":2,"status":"available"}` + "\n" +
		`{"id":2,"name":"Tom","categoryId":1,"idempotencyKey":{"principal":"key-3849217f2053a1a1","key":"k1","createdAt":"2026-01-02T15:04:05.123Z"}}` + "\n" +
		`{"id":9007199254740991,"name":"last","categoryId":1,"idempotencyKey":{"principal":"alice","key":"k2","createdAt":"2026-01-02T15:09:05.123Z"}}` + "\n"
	if diff := cmp.Diff(wantLines, b.String()); diff != "" {
		t.Errorf("Write (-want +got):\n%s", diff)
	}
	var got []export.Record
	for r, err := range export.Read(&b, now) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Read (-want +got):\n%s", diff)
	}
}

// TestReadRefuses checks that Read stops at the first line it refuses,
// and names the line and the reason.
func TestReadRefuses(t *testing.T) {
	const head = export.Header + "\n"
	pet := `{"id":1,"name":"a","categoryId":1}` + "\n"
	keyed := func(created string) string {
		return `{"id":1,"name":"a","categoryId":1,"idempotencyKey":{"principal":"p","key":"k","createdAt":"` + created + `"}}` + "\n"
	}
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", "the input is empty"},
		{"no header", pet, `line 1: want {"petstoreExport":1}`},
		{"not JSON", head + "{\n", "line 2: not a pet"},
		{"unknown field", head + `{"id":1,"name":"a","categoryId":1,"owner":"x"}` + "\n", `line 2: not a pet as petstore export writes it: json: unknown field "owner"`},
		{"two values", head + `{"id":1,"name":"a","categoryId":1} {}` + "\n", "line 2: more than one JSON value"},
		{"ID not positive", head + `{"id":0,"name":"a","categoryId":1}` + "\n", "line 2: pet ID 0: IDs are positive"},
		{"IDs out of order", head + pet + pet, "line 3: pet ID 1 after 1: IDs must ascend"},
		{"ID above the ceiling", head + `{"id":9007199254740992,"name":"a","categoryId":1}` + "\n", "line 2: pet ID 9007199254740992 is above 9007199254740991 (2^53-1)"},
		{"last ID there is", head + `{"id":9223372036854775807,"name":"a","categoryId":1}` + "\n", "line 2: pet ID 9223372036854775807 is above"},
		{"invalid pet", head + `{"id":1,"name":" ","categoryId":1}` + "\n", "line 2: pet 1: "},
		{"key without time", head + `{"id":1,"name":"a","categoryId":1,"idempotencyKey":{"principal":"p","key":"k","createdAt":""}}` + "\n", "line 2: the idempotency key needs"},
		{"key from the future", head + keyed("2999-01-01T00:00:00.000Z"), "line 2: pet 1: the key was stored at 2999-01-01T00:00:00.000Z, in the future"},
		{"key past the skew", head + keyed(now.Add(export.MaxSkew+time.Millisecond).Format("2006-01-02T15:04:05.000Z")), "line 2: pet 1: the key was stored at 2026-01-02T15:09:05.124Z"},
		{"too long", head + strings.Repeat(" ", export.MaxLine+1), "line 2: longer than 65536 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var errs []error
			n := 0
			for _, err := range export.Read(strings.NewReader(tt.in), now) {
				if err != nil {
					errs = append(errs, err)
				} else {
					n++
				}
			}
			if len(errs) != 1 || !strings.Contains(errs[0].Error(), tt.want) {
				t.Fatalf("Read yielded %d records and the errors %v; want one error with %q", n, errs, tt.want)
			}
		})
	}
}

// TestCheck checks what a store's Import refuses of records given to it in
// Go, which no line holds.
func TestCheck(t *testing.T) {
	pet := petstore.Pet{ID: 2, NewPet: petstore.NewPet{Name: "Rex", CategoryID: 1}}
	tests := []struct {
		name string
		r    export.Record
		want string // "" for none
	}{
		{"plain", export.Record{Pet: pet}, ""},
		{"keyed", export.Record{Pet: pet, Principal: "p", Key: "k", KeyCreated: now}, ""},
		{"principal without key", export.Record{Pet: pet, Principal: "p"}, "pet 2: a key's principal or time without the key"},
		{"time without key", export.Record{Pet: pet, KeyCreated: now}, "pet 2: a key's principal or time without the key"},
		{"key without time", export.Record{Pet: pet, Key: "k"}, "pet 2: a key without the time it was stored"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.r.Check(1, now)
			if (tt.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("Check: %v; want %q", err, tt.want)
			}
		})
	}
}

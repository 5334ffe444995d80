package petstore

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// encodePets are pets whose JSON the handler writes with appendPet: tricky
// names, every status, and statuses that a Store might return although the
// handler never stores them.
var encodePets = []Pet{
	{ID: 1, NewPet: NewPet{Name: "Rex", CategoryID: 1}},
	{ID: 2, NewPet: NewPet{Name: "Tom & Jerry <3", CategoryID: 2, Status: StatusAvailable}},
	{ID: 3, NewPet: NewPet{Name: `say "meow" \o/`, CategoryID: 3, Status: StatusPending}},
	{ID: 4, NewPet: NewPet{Name: "Мурка 🐈 café", CategoryID: 4, Status: StatusSold}},
	{ID: 5, NewPet: NewPet{Name: "line\u2028para\u2029end", CategoryID: 5}},
	{ID: 6, NewPet: NewPet{Name: "ctrl\x00\x01\x1f\n\r\t", CategoryID: 6}},
	{ID: 7, NewPet: NewPet{Name: "bad\xff\xfeutf8\xed\xa0\x80", CategoryID: 7}},
	{ID: 1<<63 - 1, NewPet: NewPet{Name: "", CategoryID: -1 << 63}},
	{ID: -5, NewPet: NewPet{Name: "negative", CategoryID: 0, Status: "weird \"status\" <x>"}},
	{ID: 8, NewPet: NewPet{Name: strings.Repeat("long name ", 30), CategoryID: 1, Status: "\xff"}},
}

// TestEncodeMatchesEncodingJSON checks that appendPet and appendPets write
// exactly what encoding/json.Marshal writes for the same values, and that
// it decodes back to them.
func TestEncodeMatchesEncodingJSON(t *testing.T) {
	for _, p := range encodePets {
		t.Run(strconv.FormatInt(p.ID, 10), func(t *testing.T) { encodeCheckPet(t, p) })
	}
	t.Run("page", func(t *testing.T) {
		for _, pets := range [][]Pet{nil, {}, encodePets[:1], encodePets} {
			got := appendPets([]byte("prefix:"), pets)
			want, err := json.Marshal(pets)
			if err != nil {
				t.Fatal(err)
			}
			if len(pets) == 0 {
				want = []byte("[]") // the handler writes an empty page as [], never null
			}
			if diff := cmp.Diff("prefix:"+string(want), string(got)); diff != "" {
				t.Errorf("appendPets(%d pets) (-encoding/json +appendPets):\n%s", len(pets), diff)
			}
		}
	})
}

// FuzzEncodePet checks, for any pet, that appendPet writes valid JSON that
// encoding/json decodes to the values it decodes its own encoding to (the
// pet itself when its strings are valid UTF-8), byte for byte the same as
// encoding/json except for the escapes of backspace and form feed.
func FuzzEncodePet(f *testing.F) {
	for _, p := range encodePets {
		f.Add(p.ID, p.Name, p.CategoryID, string(p.Status))
	}
	f.Fuzz(func(t *testing.T, id int64, name string, category int64, status string) {
		encodeCheckPet(t, Pet{ID: id, NewPet: NewPet{Name: name, CategoryID: category, Status: Status(status)}})
	})
}

// encodeCheckPet checks appendPet(p) against encoding/json.
func encodeCheckPet(t *testing.T, p Pet) {
	t.Helper()
	got := appendPet(nil, &p)
	if !json.Valid(got) {
		t.Fatalf("appendPet(%+v) = %s: not valid JSON", p, got)
	}
	want, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.ContainsAny(p.Name+string(p.Status), "\b\f") && !bytes.Equal(got, want) {
		t.Errorf("appendPet(%+v):\n got %s\nwant %s (encoding/json)", p, got, want)
	}
	var gotPet, wantPet Pet
	if err := json.Unmarshal(got, &gotPet); err != nil {
		t.Fatalf("decoding %s: %v", got, err)
	}
	if err := json.Unmarshal(want, &wantPet); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantPet, gotPet); diff != "" {
		t.Errorf("appendPet(%+v) decodes differently from encoding/json's encoding (-want +got):\n%s", p, diff)
	}
	if utf8.ValidString(p.Name) && utf8.ValidString(string(p.Status)) {
		if diff := cmp.Diff(p, gotPet); diff != "" {
			t.Errorf("appendPet(%+v) does not decode to the pet (-want +got):\n%s", p, diff)
		}
	}
}

// BenchmarkEncodePage encodes a page of 20 pets with appendPets into a
// reused buffer, as the handler does, beside encoding/json.Marshal of the
// same page: impl=appendPets must cost at most half of impl=encoding_json.
//
//	go test -run '^$' -bench EncodePage -benchmem -count 10 . | benchstat -col /impl -
func BenchmarkEncodePage(b *testing.B) {
	statuses := []Status{"", StatusAvailable, StatusPending, StatusSold}
	page := make([]Pet, 20)
	for i := range page {
		id := int64(12345 + i)
		page[i] = Pet{ID: id, NewPet: NewPet{Name: "pet " + strconv.FormatInt(id, 10), CategoryID: id%7 + 1, Status: statuses[i%4]}}
	}
	b.Run("impl=encoding_json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(page); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("impl=appendPets", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, 2048)
		for b.Loop() {
			buf = appendPets(buf[:0], page)
		}
	})
}

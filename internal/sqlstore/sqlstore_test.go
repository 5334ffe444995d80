package sqlstore_test

import (
	"log/slog"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/internal/sqlstore"
)

func TestOptions(t *testing.T) {
	tests := []struct {
		name string
		set  func(*sqlstore.Options) error
		want string // in the error; "" for none
	}{
		{"least retention", func(o *sqlstore.Options) error { return o.SetKeyRetention(petstore.MinKeyRetention) }, ""},
		{"short retention", func(o *sqlstore.Options) error { return o.SetKeyRetention(time.Hour) },
			"WithKeyRetention: 1h0m0s is shorter than petstore.MinKeyRetention (24h0m0s)"},
		{"clock", func(o *sqlstore.Options) error { return o.SetClock(time.Now) }, ""},
		{"nil clock", func(o *sqlstore.Options) error { return o.SetClock(nil) }, "WithClock: the clock is nil"},
		{"logger", func(o *sqlstore.Options) error { return o.SetLogger(slog.Default()) }, ""},
		{"nil logger", func(o *sqlstore.Options) error { return o.SetLogger(nil) }, "WithLogger: the logger is nil"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := sqlstore.DefaultOptions()
			err := tt.set(&o)
			if (tt.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("got %v; want an error with %q", err, tt.want)
			}
			if o.Now == nil || o.Logger == nil || o.KeyRetention < petstore.MinKeyRetention {
				t.Errorf("options %+v after a setter; want every one set", o)
			}
		})
	}
}

func TestMigrations(t *testing.T) {
	file := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	tests := []struct {
		name    string
		fs      fstest.MapFS
		want    []sqlstore.Migration
		wantErr string
	}{
		{"in order", fstest.MapFS{"m/0002_b.sql": file("B"), "m/0001_a.sql": file("A"), "m/notes.txt": file("")},
			[]sqlstore.Migration{{Version: 1, Name: "0001_a.sql", SQL: "A"}, {Version: 2, Name: "0002_b.sql", SQL: "B"}}, ""},
		{"gap", fstest.MapFS{"m/0001_a.sql": file("A"), "m/0003_c.sql": file("C")}, nil, "0003_c.sql: versions must run 1, 2, 3"},
		{"misnamed", fstest.MapFS{"m/first.sql": file("A")}, nil, "first.sql is not named NNNN_description.sql"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := sqlstore.Migrations(tt.fs, "m")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Migrations: %v; want an error with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Migrations (-want +got):\n%s", diff)
			}
		})
	}
}

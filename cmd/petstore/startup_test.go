package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/internal/testkit/pgtest"
)

// TestStartupRefuses starts the server on configurations that cannot work,
// one of each step of the start: each exits 2 with one message, before it
// prints a key or serves, none saying that the store is unavailable, and a
// file that is not a database is left as it was; a PostgreSQL database that
// does not exist is named with the statement that creates it.
func TestStartupRefuses(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedPort := ln.Addr().String()
	ln.Close()
	ca := newTestCA(t)
	goodCert, goodKey := pairFiles(t, ca.valid(t))
	_, otherKey := pairFiles(t, ca.valid(t))
	tmp := t.TempDir()
	notDB, missing := filepath.Join(tmp, "notes.txt"), filepath.Join(tmp, "missing", "petstore.db")
	content := []byte(strings.Repeat("not a database\n", 400))
	if err := os.WriteFile(notDB, content, 0o600); err != nil {
		t.Fatal(err)
	}
	const otherFile = "; -data or PETSTORE_DATA names another file, -store memory keeps pets in memory"

	bin := buildServer(t)
	tests := []struct {
		name string
		env  []string // after PETSTORE_API_KEYS=k
		args []string
		want string // the whole of stderr, after "petstore: "
	}{
		{"a key no bearer token can carry", []string{"PETSTORE_API_KEYS=good-key,pa$$word!"}, nil,
			"petstore.New: WithAuthenticator: NamedAPIKeys: key 2 of 2 has characters that no bearer token can carry; " +
				"use only letters, digits, -, ., _, ~, + and /, with = only at the end"},
		{"a key's name that cannot be a principal", []string{"PETSTORE_API_KEYS=alice smith:KEY1"}, nil,
			`petstore.New: WithAuthenticator: NamedAPIKeys: the principal of key 1 of 1 "alice smith" has a character other than ` +
				`visible ASCII, or one of , : " ' \; use letters, digits and - . _ @ for instance`},
		{"keys variable with only a comma", []string{"PETSTORE_API_KEYS=,"}, nil,
			"PETSTORE_API_KEYS is set but holds no usable key, only commas and spaces; " +
				"give keys separated by commas, or leave it empty to have a key made and kept"},
		{"a base path no request can match", nil, []string{"-base-path", "/München"},
			`petstore.New: WithBasePath: "/München" is not a path as it appears in a request URL, so no request can match it; use "/M%C3%BCnchen"`},
		{"an unknown flag", nil, []string{"-port", "8080"}, "flag provided but not defined: -port; see -help"},
		{"a database that refuses connections", []string{"PETSTORE_POSTGRES_URL=postgres://app@" + closedPort + "/shop?sslmode=disable&connect_timeout=5"}, nil,
			"cannot reach PostgreSQL: failed to connect to `user=app database=shop`: " + closedPort + " (127.0.0.1): " +
				"dial error: dial tcp " + closedPort + ": connect: connection refused"},
		{"a TLS key of another certificate, from the environment", []string{tlsCertVar + "=" + goodCert, tlsKeyVar + "=" + otherKey}, nil,
			"TLS certificate file " + goodCert + " and key file " + otherKey + ": tls: private key does not match public key"},
		{"the TLS flag wins over the variable", []string{tlsCertVar + "=" + goodCert, tlsKeyVar + "=" + goodKey}, []string{"-tls-cert", missing},
			"the TLS key pair cannot be read: open " + missing + ": no such file or directory"},
		{"a data file that is not a database", nil, []string{"-data", notDB},
			"sqlitestore.Open: " + notDB + " is not a SQLite database; give the path of a petstore database or of a new file: file is not a database (26)" + otherFile},
		{"a data file in a missing directory", nil, []string{"-data", missing},
			"sqlitestore.Open: " + missing + ": the directory " + filepath.Dir(missing) + " does not exist, or is no directory; create it first" + otherFile},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runToExit(t, bin, append([]string{"PETSTORE_API_KEYS=k"}, tt.env...), tt.args...)
			if code != 2 || stdout != "" {
				t.Errorf("exit status %d, want 2; stdout %q, want nothing printed before refusing to start", code, stdout)
			}
			if diff := cmp.Diff("petstore: "+tt.want+"\n", stderr); diff != "" {
				t.Errorf("stderr (-want +got):\n%s", diff)
			}
			if strings.Contains(stderr, "unavailable") {
				t.Errorf("a start-up error speaks of an unavailable store:\n%s", stderr)
			}
		})
	}
	if got, err := os.ReadFile(notDB); err != nil || string(got) != string(content) {
		t.Errorf("the file that is not a database was changed (%v)", err)
	}
	t.Run("a database that does not exist", func(t *testing.T) {
		u := parseURL(t, pgtest.URL(t))
		name := uniqueName("petstore_missing_")
		u.Path = "/" + name
		code, stdout, stderr := runToExit(t, bin, []string{"PETSTORE_API_KEYS=k", "PETSTORE_POSTGRES_URL=" + u.String()})
		prefix, suffix := "petstore: cannot reach PostgreSQL: ", `database "`+name+`" does not exist (SQLSTATE 3D000); `+
			`create it, as a role that may create databases, with CREATE DATABASE "`+name+`"; or name another database in the URL`+"\n"
		if !strings.HasPrefix(stderr, prefix) || !strings.HasSuffix(stderr, suffix) || code != 2 || stdout != "" {
			t.Errorf("exit status %d (want 2); stdout %q (want none); stderr:\n%s\nwant it to start with:\n%s\nand end with:\n%s",
				code, stdout, stderr, prefix, suffix)
		}
	})
}

// TestStartupHelp checks that -help exits 0 and prints, to stdout, the
// flags and the environment variables.
func TestStartupHelp(t *testing.T) {
	bin := buildServer(t)
	for _, arg := range []string{"-help", "-h", "--help"} {
		t.Run(arg, func(t *testing.T) {
			code, stdout, stderr := runToExit(t, bin, nil, arg)
			if code != 0 || stderr != "" {
				t.Errorf("exit status %d, want 0; stderr %q, want none", code, stderr)
			}
			// Every flag and variable is there: TestHelpMatchesDocs.
			for _, want := range []string{"Usage: petstore [flags]", "-postgres URL", "PETSTORE_API_KEYS\n"} {
				if !strings.Contains(stdout, want) {
					t.Errorf("the help does not say %q:\n%s", want, stdout)
				}
			}
		})
	}
}

func TestParseConfigLimits(t *testing.T) {
	defaults := limitFlags{readHeaderTimeout: 5 * time.Second, readTimeout: 30 * time.Second, writeTimeout: 30 * time.Second,
		idleTimeout: 2 * time.Minute, storeTimeout: 5 * time.Second, maxInFlight: 64}
	tests := []configCase[limitFlags]{
		{name: "defaults", want: defaults},
		{name: "flags", args: []string{"-store-timeout", "2s", "-write-timeout", "3s", "-max-in-flight", "0", "-read-timeout", "4s",
			"-read-header-timeout", "1s", "-idle-timeout", "9s"},
			want: limitFlags{readHeaderTimeout: time.Second, readTimeout: 4 * time.Second, writeTimeout: 3 * time.Second,
				idleTimeout: 9 * time.Second, storeTimeout: 2 * time.Second}},
		{name: "store timeout just below", args: []string{"-store-timeout", "2999ms", "-write-timeout", "3s"},
			want: limitFlags{readHeaderTimeout: 5 * time.Second, readTimeout: 30 * time.Second, writeTimeout: 3 * time.Second,
				idleTimeout: 2 * time.Minute, storeTimeout: 2999 * time.Millisecond, maxInFlight: 64}},
		{name: "negative write timeout", args: []string{"-write-timeout", "-1s"}, wantErr: "-write-timeout -1s: want more than 0"},
		{name: "no read timeout", args: []string{"-read-timeout", "0s"}, wantErr: "-read-timeout 0s: want more than 0"},
		{name: "negative store timeout", args: []string{"-store-timeout", "-1s"}, wantErr: "-store-timeout -1s: want more than 0"},
		{name: "store timeout equal", args: []string{"-store-timeout", "3s", "-write-timeout", "3s"},
			wantErr: "-store-timeout 3s is not below -write-timeout 3s: a client would be cut off before it hears " +
				"that the store timed out; lower -store-timeout or raise -write-timeout"},
		{name: "negative in flight", args: []string{"-max-in-flight", "-5"}, wantErr: "-max-in-flight -5: want 0 or more"},
		{name: "help", args: []string{"-help"}, wantErr: "flag: help requested"},
	}
	for name, instead := range removedFlags {
		tests = append(tests, configCase[limitFlags]{name: name, args: []string{"-" + name, "8"},
			wantErr: "-" + name + " is gone: " + instead})
	}
	checkConfigs(t, tests, func(c config) limitFlags { return c.limits }, cmp.AllowUnexported(limitFlags{}))
}

func TestParseAPIKeys(t *testing.T) {
	type k = petstore.APIKey
	tests := []struct {
		value   string
		want    []k
		wantErr string // in the error, "" for none
	}{
		{value: "", want: nil},
		{value: "a", want: []k{{Key: "a"}}},
		{value: " a , b ,", want: []k{{Key: "a"}, {Key: "b"}}},
		{value: "alice:KEY1,alice:KEY2,bob:KEY3", want: []k{{Principal: "alice", Key: "KEY1"}, {Principal: "alice", Key: "KEY2"}, {Principal: "bob", Key: "KEY3"}}},
		{value: " alice : KEY1 , KEY2 ", want: []k{{Principal: "alice", Key: "KEY1"}, {Key: "KEY2"}}},
		{value: ",", wantErr: "holds no usable key"},
		{value: " , ,  ", wantErr: "holds no usable key"},
		{value: "alice:KEY1,:SECRET", wantErr: `PETSTORE_API_KEYS: entry 2 has no name before its ":"; write NAME:KEY`},
		{value: " : SECRET", wantErr: `entry 1 has no name before its ":"`},
		{value: "KEY1,,bob:", wantErr: `PETSTORE_API_KEYS: entry 3 (bob:) has no key after its ":"; write NAME:KEY`},
		{value: "bob: ", wantErr: `entry 1 (bob:) has no key after its ":"`},
	}
	for _, tt := range tests {
		got, err := parseAPIKeys(tt.value)
		if (err != nil) != (tt.wantErr != "") || err != nil && !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("parseAPIKeys(%q) error = %v, want one with %q", tt.value, err, tt.wantErr)
		}
		if err != nil && (strings.Contains(err.Error(), "not set") || strings.Contains(err.Error(), "SECRET")) {
			t.Errorf("parseAPIKeys(%q) says the variable is not set, or shows a key: %v", tt.value, err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("parseAPIKeys(%q) (-want +got):\n%s", tt.value, diff)
		}
	}
}

// TestAPIKeysAuthenticator: the keys of PETSTORE_API_KEYS with one name
// share a principal, other names and unnamed keys do not (TestStartupRefuses
// has a name that cannot be a principal).
func TestAPIKeysAuthenticator(t *testing.T) {
	entries, err := parseAPIKeys("alice:KEY1, alice:KEY2, bob:KEY3, KEY4")
	if err != nil {
		t.Fatal(err)
	}
	auth := petstore.NamedAPIKeys(entries...)
	got := map[string]string{}
	for _, key := range []string{"KEY1", "KEY2", "KEY3", "KEY4"} {
		ctx, err := auth.Authenticate(t.Context(), petstore.OpCreatePet, key)
		if err != nil {
			t.Fatalf("Authenticate(%s): %v", key, err)
		}
		got[key] = petstore.Principal(ctx)
	}
	want := map[string]string{"KEY1": "alice", "KEY2": "alice", "KEY3": "bob", "KEY4": principalOf(t, "KEY4")}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("principals (-want +got):\n%s", diff)
	}
}

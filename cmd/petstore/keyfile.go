package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"syscall"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/sqlitestore"
)

// keyFile returns the file that keeps the API key made for dataFile.
func keyFile(dataFile string) string { return dataFile + ".key" }

// keptKey returns the API key kept in file, or makes one and keeps it
// there, owner-only; made says which.
func keptKey(file string) (key string, made bool, err error) {
	if key, err := readKeyFile(file); !errors.Is(err, fs.ErrNotExist) {
		return key, false, err
	}
	if key, err = randomKey(); err != nil {
		return "", false, err
	}
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if errors.Is(err, fs.ErrExist) {
		// Another server, starting at once, made it first.
		key, err := readKeyFile(file)
		return key, false, err
	}
	if err == nil {
		_, err = f.WriteString(key + "\n")
		if err = errors.Join(err, f.Sync(), f.Close()); err != nil {
			os.Remove(file)
		}
	}
	if err != nil {
		return "", false, fmt.Errorf("keeping the API key: %w", err)
	}
	return key, true, nil
}

// readKeyFile reads the key kept in file, refusing a file that another
// user could have written or may read.
func readKeyFile(file string) (string, error) {
	fi, err := os.Lstat(file)
	if err != nil {
		return "", err
	}
	if fi.Mode()&fs.ModeSymlink != 0 || !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s, which keeps the API key, is not a regular file; remove it to have a new key made", file)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return "", fmt.Errorf("%s, which keeps the API key, is owned by uid %d, not by this process's user (uid %d); remove it to have a new key made", file, st.Uid, os.Geteuid())
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return "", fmt.Errorf("%s, which keeps the API key, may be read or written by other users (mode %v); chmod 600 it, or remove it to have a new key made", file, perm)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	key := strings.TrimSpace(string(b))
	if len(key) < 32 || strings.ContainsAny(key, " \t,:") {
		return "", fmt.Errorf("%s does not hold an API key that petstore made; remove it to have a new key made", file)
	}
	return key, nil
}

// keptPrincipal returns the key file of dataFile and the principal of the
// key it keeps, or "" for none.
func keptPrincipal(ctx context.Context, dataFile string) (file, principal string) {
	file = keyFile(dataFile)
	if key, err := readKeyFile(file); err == nil {
		if ctx, err = petstore.APIKeys(key).Authenticate(ctx, petstore.OpNone, key); err == nil {
			principal = petstore.Principal(ctx)
		}
	}
	return file, principal
}

// madeKey returns and prints the API key of a run without
// PETSTORE_API_KEYS: on SQLite the one kept beside the data file, otherwise
// a new one.
func madeKey(store petstore.Store, stdout io.Writer) ([]string, error) {
	var key, note string
	var err error
	if s, ok := store.(*sqlitestore.Store); ok {
		file := keyFile(s.Path())
		var made bool
		if key, made, err = keptKey(file); err != nil {
			return nil, err
		}
		note = "the key was made on an earlier start and is kept in " + file + "\n"
		if made {
			note = "the key is kept in " + file + " (owner-only) and accepted again on the next start; set PETSTORE_API_KEYS to choose keys\n"
		}
	} else if key, err = randomKey(); err != nil {
		return nil, err
	}
	fmt.Fprintf(stdout, "PETSTORE_API_KEYS is not set; this run accepts the API key %s\n%s", key, note)
	return []string{key}, nil
}

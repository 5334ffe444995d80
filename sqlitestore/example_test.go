package sqlitestore_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/sqlitestore"
)

// Example keeps pets in a file, closes it, and finds them there again.
func Example() {
	dir, err := os.MkdirTemp("", "petstore")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "petstore.db")

	store, err := sqlitestore.Open(path) // creates the file
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	rex, _, err := store.Add(ctx, petstore.NewPet{Name: "Rex", CategoryID: 1, Status: petstore.StatusAvailable}, petstore.AddOptions{})
	if err != nil {
		log.Fatal(err)
	}
	if err := store.Close(); err != nil {
		log.Fatal(err)
	}

	store, err = sqlitestore.Open(path) // the same file, as after a restart
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	got, err := store.Get(ctx, rex.ID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d %s %d %s\n", got.ID, got.Name, got.CategoryID, got.Status)

	// A handler serves the API from it:
	// api, err := petstore.New(petstore.WithStore(store), petstore.WithAuthenticator(...))

	// Output:
	// 1 Rex 1 available
}

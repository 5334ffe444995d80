package options_test

import (
	"errors"
	"testing"

	"github.com/petstore-go/petstore/internal/options"
)

type option interface{ apply(*int) error }

type add int

func (a add) apply(n *int) error {
	if a < 0 {
		return errors.New("negative")
	}
	*n += int(a)
	return nil
}

// TestApply checks that Apply applies every option in turn and reports
// every mistake, a nil option among them.
func TestApply(t *testing.T) {
	var n int
	err := options.Apply(&n, []option{add(1), add(-1), nil, add(2)}, option.apply)
	if want := "negative\nan option is nil; remove it"; n != 3 || err == nil || err.Error() != want {
		t.Errorf("Apply = %d, %v; want 3, %q", n, err, want)
	}
}

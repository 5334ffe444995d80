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

func TestApply(t *testing.T) {
	tests := []struct {
		name    string
		opts    []option
		want    int
		wantErr string
	}{
		{"none", nil, 0, ""},
		{"in turn", []option{add(1), add(2)}, 3, ""},
		{"every mistake", []option{add(-1), nil, add(2)}, 2, "negative\nan option is nil; remove it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var n int
			err := options.Apply(&n, tt.opts, option.apply)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if n != tt.want || gotErr != tt.wantErr {
				t.Errorf("Apply = %d, %q; want %d, %q", n, gotErr, tt.want, tt.wantErr)
			}
		})
	}
}

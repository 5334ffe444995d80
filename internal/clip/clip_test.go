package clip_test

import (
	"strings"
	"testing"

	"github.com/petstore-go/petstore/internal/clip"
)

func TestString(t *testing.T) {
	long := strings.Repeat("G", 4000)
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", ""},
		{"short", "GET", "GET"},
		{"at the limit", strings.Repeat("a", 64), strings.Repeat("a", 64)},
		{"one over", strings.Repeat("a", 65), strings.Repeat("a", 64) + "…[65 bytes]"},
		{"4000-byte method", long, strings.Repeat("G", 64) + "…[4000 bytes]"},
		// "é" is two bytes; cutting at 64 would split the one that starts at 63.
		{"UTF-8 kept whole", strings.Repeat("a", 63) + strings.Repeat("é", 10), strings.Repeat("a", 63) + "…[83 bytes]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := clip.String(tt.in); got != tt.want {
				t.Errorf("String(%d bytes) = %q, want %q", len(tt.in), got, tt.want)
			}
		})
	}
}

func TestStringShortAllocatesNothing(t *testing.T) {
	s := strings.Repeat("a", clip.Max)
	if n := testing.AllocsPerRun(100, func() { _ = clip.String(s) }); n != 0 {
		t.Errorf("String of %d bytes: %v allocations, want 0", len(s), n)
	}
}

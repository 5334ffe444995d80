package pgtest_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/petstore-go/petstore/internal/testkit/pgtest"
)

// TestURL runs TestURLHelper in a subprocess under each environment: a
// missing URL skips the test, or fails it under CI=true.
func TestURL(t *testing.T) {
	tests := []struct {
		name, url, ci string
		wantFail      bool
		wantOut       string
	}{
		{"set", "postgres://db/x", "true", false, "URL postgres://db/x"},
		{"missing", "", "", false, "SKIP"},
		{"missing under CI", "", "true", true, pgtest.URLVar + " is not set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestURLHelper$", "-test.v")
			cmd.Env = append(os.Environ(), "PGTEST_HELPER=1", pgtest.URLVar+"="+tt.url, "CI="+tt.ci)
			out, err := cmd.CombinedOutput()
			if failed := err != nil; failed != tt.wantFail {
				t.Errorf("failed = %v, want %v; output:\n%s", failed, tt.wantFail, out)
			}
			if !strings.Contains(string(out), tt.wantOut) {
				t.Errorf("output does not contain %q:\n%s", tt.wantOut, out)
			}
		})
	}
}

func TestURLHelper(t *testing.T) {
	if os.Getenv("PGTEST_HELPER") != "1" {
		t.Skip("run by TestURL in a subprocess")
	}
	t.Log("URL", pgtest.URL(t))
}

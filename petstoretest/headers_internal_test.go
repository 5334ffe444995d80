package petstoretest

import (
	"net/http"
	"testing"
)

// TestHasBody checks the statuses whose responses have a body, and so
// must be JSON: all but a 1xx, a 204 and a 304.
func TestHasBody(t *testing.T) {
	tests := []struct {
		status int
		want   bool
	}{
		{http.StatusContinue, false},
		{http.StatusOK, true},
		{http.StatusCreated, true},
		{http.StatusNoContent, false},
		{http.StatusNotModified, false},
		{http.StatusNotFound, true},
		{http.StatusServiceUnavailable, true},
	}
	for _, tt := range tests {
		if got := hasBody(tt.status); got != tt.want {
			t.Errorf("hasBody(%d) = %v, want %v", tt.status, got, tt.want)
		}
	}
}

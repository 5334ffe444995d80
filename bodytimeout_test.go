package petstore_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/httpapi"
	"github.com/petstore-go/petstore/memstore"
)

// TestBodyTimeout: over a real connection to an http.Server without
// timeouts of its own, a client that sends half a body and stalls is
// answered 400 invalid_body once the body timeout has passed, and nothing
// is stored; the observer sees the 400, never a 499.
func TestBodyTimeout(t *testing.T) {
	store := memstore.New()
	observed := make(chan petstore.Observation, 1)
	srv := newServer(t, newHandler(t, store, petstore.WithBodyTimeout(100*time.Millisecond),
		petstore.WithObserver(func(_ context.Context, o petstore.Observation) { observed <- o })))

	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"name":"Rex","categoryId":1}`
	half := body[:len(body)/2]
	fmt.Fprintf(conn, "POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		testKey, len(body), half)
	// The rest never comes: the answer arrives when the body timeout passes.
	if err := conn.SetReadDeadline(time.Now().Add(30 * time.Second)); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a stalled body: %v", err)
	}
	defer resp.Body.Close()
	var got httpapi.Error
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatalf("decoding the answer: %v", err)
	}
	if resp.StatusCode != http.StatusBadRequest || got.Code != httpapi.CodeInvalidBody {
		t.Errorf("answer %d %s %q, want 400 invalid_body", resp.StatusCode, got.Code, got.Message)
	}
	if o := <-observed; o.Status != http.StatusBadRequest || o.Code != httpapi.CodeInvalidBody {
		t.Errorf("observed %d %s, want 400 invalid_body", o.Status, o.Code)
	}
	if pets := snapshot(t, store); len(pets) != 0 {
		t.Errorf("store holds %v, want nothing", pets)
	}
}

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/petstore-go/petstore"
)

const (
	adminAddrVar = "PETSTORE_ADMIN_ADDR" // the variable of -admin-addr
	readyTimeout = time.Second           // bounds the calls to the store that /readyz makes
)

// admin serves /metrics, /healthz and /readyz apart from the API
// (docs/operating.md). /readyz answers 503, with a JSON body that says why,
// when the store fails its check or a list of one pet within readyTimeout,
// when backups are failing, or when the server is shutting down.
type admin struct {
	metrics  http.Handler
	store    petstore.Store
	replicas func() []replicaProbe // the replicas' state, reported only; or nil
	redact   func(string) string   // removes secrets from a store's error
	backups  func() error          // the scheduled backups' state, or nil
	logger   *slog.Logger
	draining atomic.Bool // set when the server starts shutting down
}

// handler returns the handler of the admin endpoints.
func (a *admin) handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", a.metrics)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeStatus(w, http.StatusOK, probeBody{Status: "ok"})
	})
	mux.HandleFunc("GET /readyz", a.ready)
	return mux
}

// probeBody is the JSON body of /healthz and /readyz.
type probeBody struct {
	Status   string         `json:"status"`             // "ok" or "unavailable"
	Reason   string         `json:"reason,omitempty"`   // why it is unavailable
	Replicas []replicaProbe `json:"replicas,omitempty"` // the store's replicas, if any
}

// ready answers /readyz.
func (a *admin) ready(w http.ResponseWriter, r *http.Request) {
	if a.draining.Load() {
		writeStatus(w, http.StatusServiceUnavailable, probeBody{Status: "unavailable",
			Reason: "the server is shutting down and finishing the requests in flight"})
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
	defer cancel()
	start := time.Now()
	notReady := func(level slog.Level, reason string) {
		a.logger.Log(ctx, level, "petstore: not ready", "reason", reason, "took", time.Since(start).Round(time.Millisecond))
		writeStatus(w, http.StatusServiceUnavailable, probeBody{Status: "unavailable", Reason: reason})
	}
	if s, ok := a.store.(interface{ Check(context.Context) error }); ok { // its schema and privileges
		if err := s.Check(ctx); err != nil && (ctx.Err() == nil || !errors.Is(err, context.DeadlineExceeded)) {
			notReady(slog.LevelError, "the store cannot serve: "+a.redact(err.Error()))
			return
		}
	}
	if a.backups != nil {
		if err := a.backups(); err != nil {
			notReady(slog.LevelError, "scheduled backups are failing: "+err.Error())
			return
		}
	}
	_, err := a.store.List(ctx, petstore.ListOptions{Limit: 1})
	switch {
	case err == nil:
		body := probeBody{Status: "ok"}
		if a.replicas != nil {
			body.Replicas = a.replicas()
		}
		writeStatus(w, http.StatusOK, body)
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil:
		notReady(slog.LevelWarn, fmt.Sprintf("the store did not answer a list of one pet within %v", readyTimeout))
	default:
		notReady(slog.LevelWarn, "the store failed a list of one pet: "+a.redact(err.Error()))
	}
}

// writeStatus writes body as JSON with status, never to be cached.
func writeStatus(w http.ResponseWriter, status int, body probeBody) {
	b, _ := json.Marshal(body) // a struct of strings always encodes
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// serveAdmin serves a's endpoints on addr until stop, printing their URL;
// from when ctx is done, /readyz answers 503 while requests finish.
func serveAdmin(ctx context.Context, addr string, a *admin, stdout io.Writer) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("-admin-addr: %w", err)
	}
	srv := &http.Server{
		Handler:           a.handler(),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          slog.NewLogLogger(a.logger.Handler(), slog.LevelWarn),
	}
	stopDraining := context.AfterFunc(ctx, func() { a.draining.Store(true) })
	url := "http://" + ln.Addr().String()
	a.logger.Info("petstore: admin endpoints listening", "url", url)
	fmt.Fprintf(stdout, "admin endpoints at %s/metrics, /healthz and /readyz\n", url)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			a.logger.Error("petstore: admin endpoints stopped serving", "err", err)
		}
	}()
	return func() {
		stopDraining()
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(shutdownCtx); err != nil {
			a.logger.Warn("petstore: admin endpoints: shutdown", "err", err)
		}
		<-done
	}, nil
}

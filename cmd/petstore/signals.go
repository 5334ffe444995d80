package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

// exitAtOnce is the exit status of a process stopped by a second signal,
// with requests in flight abandoned.
const exitAtOnce = 1

// shutdownSignals returns a context done on the first SIGINT or SIGTERM; a
// second one logs to logOut and exits at once with status exitAtOnce.
func shutdownSignals(logOut io.Writer) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case <-sigs:
			cancel()
		case <-done:
			return
		}
		select {
		case sig := <-sigs:
			slog.New(slog.NewTextHandler(logOut, nil)).Error(
				"petstore: second signal during shutdown; exiting at once, abandoning requests in flight",
				"signal", sig.String())
			os.Exit(exitAtOnce)
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel()
	}
}

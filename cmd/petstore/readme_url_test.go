package main

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestREADMEIntroURL checks that the URL the README's introduction says the
// server prints is the one it prints, on the default address's host and
// with the default base path.
func TestREADMEIntroURL(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	intro, _, _ := strings.Cut(string(readme), "\n## ")
	m := regexp.MustCompile("The first command prints [^`]*`(serving http://[^`]+)`").FindStringSubmatch(intro)
	if m == nil {
		t.Fatal("the README's introduction does not say what the first command prints (`serving http://…`)")
	}
	want := strings.Replace(m[1], ":8080/", ":PORT/", 1)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stdout, stderr := &syncBuffer{}, &syncBuffer{}
	done := make(chan error, 1)
	getenv := func(string) string { return "" }
	// The default address's host, on a free port.
	go func() { done <- run(ctx, []string{"-addr", "localhost:0", "-store", "memory"}, getenv, stdout, stderr) }()
	line := regexp.MustCompile(`(?m)^serving http://[^\s]+$`)
	deadline := time.Now().Add(10 * time.Second)
	for line.FindString(stdout.String()) == "" {
		if time.Now().After(deadline) {
			t.Fatalf("the server printed no serving line within 10s; stdout:\n%s\nstderr:\n%s", stdout, stderr)
		}
		time.Sleep(10 * time.Millisecond)
	}
	got := regexp.MustCompile(`:\d+/`).ReplaceAllString(line.FindString(stdout.String()), ":PORT/")
	cancel()
	if err := <-done; err != nil {
		t.Errorf("run: %v", err)
	}
	if got != want {
		t.Errorf("the server prints %q; the README's introduction says %q", got, want)
	}
}

package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
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
	// The default address's host, on a free port.
	p := startServer(t, buildServer(t), "k", nil, "-addr", "localhost:0", "-store", "memory")
	got := regexp.MustCompile(`:\d+/`).ReplaceAllString(servingLine.FindString(p.stdout.String()), ":PORT/")
	if want := strings.Replace(m[1], ":8080/", ":PORT/", 1); got != want {
		t.Errorf("the server prints %q; the README's introduction says %q", got, want)
	}
}

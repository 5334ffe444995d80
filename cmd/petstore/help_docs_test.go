package main

import (
	"bytes"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestHelpMatchesDocs compares the flags and the environment variables
// that -help lists with the table of them in docs/operating.md, both ways.
func TestHelpMatchesDocs(t *testing.T) {
	var help bytes.Buffer
	if _, err := parseConfig([]string{"-help"}, func(string) string { return "" }, &help); err == nil {
		t.Fatal("parseConfig(-help) succeeded; want flag.ErrHelp")
	}
	flagsPart, envPart, ok := strings.Cut(help.String(), "\nEnvironment:\n")
	if !ok {
		t.Fatalf("-help has no Environment section:\n%s", help.String())
	}
	helpFlags := names(regexp.MustCompile(`(?m)^  (-[a-z0-9-]+)`), flagsPart)
	helpVars := names(regexp.MustCompile(`\b((?:PETSTORE|OTEL)_[A-Z0-9_]+)`), envPart)

	// The operating guide's table, and the one of the guide on backups.
	var flagCells, varCells strings.Builder
	for _, doc := range []string{"../../docs/operating.md", "../../docs/backup.md"} {
		text, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		_, table, ok := strings.Cut(string(text), "\n| flag | variable | default | |\n")
		if !ok {
			t.Fatalf("%s has no table of flags and variables (| flag | variable | default | |)", doc)
		}
		for line := range strings.Lines(table) {
			if !strings.HasPrefix(line, "|") {
				break
			}
			cells := strings.Split(line, "|")
			if len(cells) < 4 {
				continue
			}
			flagCells.WriteString(cells[1] + "\n")
			varCells.WriteString(cells[2] + "\n")
		}
	}
	readmeFlags := names(regexp.MustCompile("`(-[a-z0-9-]+)`"), flagCells.String())
	readmeVars := names(regexp.MustCompile("`((?:PETSTORE|OTEL)_[A-Z0-9_]+)`"), varCells.String())

	if diff := cmp.Diff(helpFlags, readmeFlags); diff != "" {
		t.Errorf("flags: -help (-) and docs/operating.md's table (+) differ:\n%s", diff)
	}
	if diff := cmp.Diff(helpVars, readmeVars); diff != "" {
		t.Errorf("environment variables: -help (-) and docs/operating.md's table (+) differ:\n%s", diff)
	}
	for _, v := range []string{adminAddrVar, otlpEndpointVar, apiKeysVar} {
		if !slices.Contains(helpVars, v) {
			t.Errorf("-help does not list %s", v)
		}
	}
}

// names returns the first submatches of re in text, sorted, without
// duplicates.
func names(re *regexp.Regexp, text string) []string {
	var out []string
	for _, m := range re.FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	slices.Sort(out)
	return slices.Compact(out)
}

package main

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// readmeStep is one command of the README's curl session and the answer
// that the README shows for it.
type readmeStep struct {
	command string   // the command line, continuation lines joined
	status  string   // such as "HTTP/1.1 201 Created"
	headers []string // "Name: value", in the order shown
	more    bool     // "..." follows the headers: others may be there
	body    string   // the body shown, or ""
}

// readmeSession returns the commands of the README's section "A session
// with curl" and what it shows of their answers, and the lines that the
// server prints.
func readmeSession(t *testing.T) (printed []string, steps []readmeStep) {
	t.Helper()
	_, section, ok := strings.Cut(readFile(t, "../../README.md"), "\n## A session with curl\n")
	if !ok {
		t.Fatal("README.md has no section \"A session with curl\"")
	}
	_, block, _ := strings.Cut(section, "```\n")
	block, _, _ = strings.Cut(block, "```\n")
	var cur *readmeStep
	inServer := false
	sc := bufio.NewScanner(strings.NewReader(block))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "$ "):
			command := strings.TrimPrefix(line, "$ ")
			for strings.HasSuffix(command, `\`) && sc.Scan() {
				command = strings.TrimSuffix(command, `\`) + strings.TrimSpace(sc.Text())
			}
			inServer = command == "go run ./cmd/petstore"
			cur = nil
			if strings.HasPrefix(command, "curl ") {
				steps = append(steps, readmeStep{command: command})
				cur = &steps[len(steps)-1]
			}
		case line == "":
		case inServer:
			printed = append(printed, line)
		case cur == nil:
			t.Fatalf("README session: output %q follows no curl command", line)
		case cur.status == "":
			cur.status = line
		case line == "...":
			cur.more = true
		case cur.body == "" && !cur.more && strings.Contains(line, ": ") && !strings.HasPrefix(line, "{") && !strings.HasPrefix(line, "["):
			cur.headers = append(cur.headers, line)
		default:
			cur.body = line
		}
	}
	return printed, steps
}

// curlRequest builds the request of a README curl command, with $KEY set
// to key and localhost:8080 replaced by addr. It knows the options that
// the session uses: -i, -H and -d.
func curlRequest(t *testing.T, command, key, addr string) *http.Request {
	t.Helper()
	var words []string
	for _, m := range regexp.MustCompile(`'([^']*)'|"([^"]*)"|(\S+)`).FindAllStringSubmatch(strings.TrimPrefix(command, "curl "), -1) {
		words = append(words, strings.ReplaceAll(m[1]+m[2]+m[3], "$KEY", key)) // a quoted word without its quotes
	}
	method, header, body, target := http.MethodGet, http.Header{}, "", ""
	for i := 0; i < len(words); i++ {
		switch words[i] {
		case "-i":
		case "-H":
			i++
			name, value, _ := strings.Cut(words[i], ": ")
			header.Add(name, value)
		case "-d":
			i++
			method, body = http.MethodPost, words[i]
		default:
			target = "http://" + strings.Replace(words[i], "localhost:8080", addr, 1)
		}
	}
	r, err := http.NewRequest(method, target, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	r.Header = header
	return r
}

// TestREADMESession runs the README's curl session against the server and
// compares every status, header and body shown; without "...", the headers
// are all there are, but Date and Content-Length. The server runs without
// PETSTORE_API_KEYS: it prints one random key, not in its log, and logs the
// data file's absolute path; started again, it accepts that key, kept
// owner-only beside the data file as are the data file's own files, and has
// the pets created before the SIGTERM.
func TestREADMESession(t *testing.T) {
	printed, steps := readmeSession(t)
	if len(steps) < 5 {
		t.Fatalf("found %d curl commands in the README's session; the parser is off", len(steps))
	}
	bin, dir := buildServer(t), t.TempDir()
	keyLine := regexp.MustCompile(`this run accepts the API key (\S+)\n`)
	p := startServerIn(t, dir, bin, "", nil)
	m := keyLine.FindStringSubmatch(p.stdout.String())
	if n := len(keyLine.FindAllString(p.stdout.String(), -1)); n != 1 || len(m[1]) < 40 || strings.Contains(p.stderr.String(), m[1]) {
		t.Fatalf("the first start printed %d keys, or one of fewer than 40 characters, or one that its log shows:\n%s\n%s", n, p.stdout, p.stderr)
	}
	key := m[1]
	if path := filepath.Join(dir, defaultDataFile); !strings.Contains(p.stderr.String(), "path="+path) {
		t.Errorf("the start-up log does not give the data file's absolute path %s:\n%s", path, p.stderr)
	}
	var got []string
	keyFile := regexp.MustCompile(`\S+/petstore\.db\.key`) // in the server's working directory
	for _, line := range strings.Split(strings.TrimSpace(p.stdout.String()), "\n") {
		line = keyFile.ReplaceAllLiteralString(line, "/home/you/petstore.db.key")
		got = append(got, strings.NewReplacer(key, "3hW2...Xk", p.addr, "127.0.0.1:8080").Replace(line))
	}
	if diff := cmp.Diff(printed, got); diff != "" {
		t.Errorf("what the server prints, against the README (-README +server):\n%s", diff)
	}
	for _, step := range steps {
		resp, err := http.DefaultClient.Do(curlRequest(t, step.command, key, p.addr))
		if err != nil {
			t.Fatalf("%s: %v", step.command, err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		answer := readmeStep{command: step.command, status: resp.Proto + " " + resp.Status, more: step.more}
		for name, values := range resp.Header {
			if name == "Date" || name == "Content-Length" {
				continue
			}
			for _, v := range values {
				line := name + ": " + v
				if !step.more || slices.Contains(step.headers, line) {
					answer.headers = append(answer.headers, line)
				}
			}
		}
		slices.Sort(answer.headers)
		want := step
		want.headers = slices.Sorted(slices.Values(step.headers))
		if step.body != "" {
			// curl shows the body's final newline as the end of its line.
			answer.body, _ = strings.CutSuffix(string(body), "\n")
			if !strings.HasSuffix(string(body), "\n") {
				answer.body += " (no final newline)"
			}
		}
		if diff := cmp.Diff(want, answer, cmp.AllowUnexported(readmeStep{})); diff != "" {
			t.Errorf("the README against the server (-README +server):\n%s", diff)
		}
	}

	for _, name := range []string{defaultDataFile, defaultDataFile + "-wal", defaultDataFile + "-shm", defaultDataFile + ".key"} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s: %v; want a file of mode 0600", name, err)
		} else if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v; want 0600", name, fi.Mode())
		}
	}
	pets := allPets(t.Context(), t, p, key)
	p.stop(t)
	again := startServerIn(t, dir, bin, "", nil)
	if m2 := keyLine.FindStringSubmatch(again.stdout.String()); m2 == nil || m2[1] != key {
		t.Errorf("the second start printed %q; want the first start's key again", again.stdout)
	}
	if diff := cmp.Diff(pets, allPets(t.Context(), t, again, key)); diff != "" || len(pets) == 0 {
		t.Errorf("after a restart, the pets (-before +after):\n%s", diff)
	}
}

// TestREADMEIntroURL checks that the URL the README's introduction says the
// server prints is the one it prints, on the default address's host and
// with the default base path.
func TestREADMEIntroURL(t *testing.T) {
	intro, _, _ := strings.Cut(readFile(t, "../../README.md"), "\n## ")
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

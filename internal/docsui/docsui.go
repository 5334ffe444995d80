// Package docsui holds the files of the interactive documentation page that
// the handler serves at {base}/docs: a page of its own, its start-up script,
// and Swagger UI 5.35.0 as the swagger-ui-dist package distributes it
// (Apache License 2.0; see assets/LICENSE and assets/NOTICE), with the
// stylesheet's source map comment removed because the map is not shipped.
//
// The page has no inline script or style, so it runs under
// ContentSecurityPolicy, which allows only the page's own origin. It refers
// to everything relatively: the page at {base}/docs loads docs/... and reads
// openapi.json, so it works under any base path and behind any prefix that
// a host router adds.
package docsui

import (
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"io/fs"
	"path"
)

// ContentSecurityPolicy is the Content-Security-Policy that every file of
// the page is served under: scripts, styles, fetches and images from the
// page's own origin only (and images from data: URLs, which Swagger UI uses
// for its icons), no <base> element, and no framing by another page.
const ContentSecurityPolicy = "default-src 'self'; img-src 'self' data:; base-uri 'none'; frame-ancestors 'none'"

//go:embed assets
var assets embed.FS

// A File is one file of the page.
type File struct {
	// Name is the file's path below the page's own path: "" for the page
	// itself, "swagger-ui.css" for {base}/docs/swagger-ui.css.
	Name string
	// ContentType is the value of the file's Content-Type header.
	ContentType string
	// Data is the file's content. It must not be modified.
	Data []byte
	// ETag is a strong entity tag of Data, quoted as the header carries it.
	ETag string
}

// contentType returns the Content-Type of a file that is served, and false
// for the licence files, which are kept beside them but not served.
func contentType(name string) (string, bool) {
	switch path.Ext(name) {
	case ".html":
		return "text/html; charset=utf-8", true
	case ".js":
		return "text/javascript; charset=utf-8", true
	case ".css":
		return "text/css; charset=utf-8", true
	case ".png":
		return "image/png", true
	}
	return "", false
}

// Files returns the files of the page, each with its entity tag, in the
// order of their names with the page first. Each call hashes them afresh.
func Files() []File {
	names, err := fs.Glob(assets, "assets/*")
	if err != nil {
		panic(err) // the pattern is constant and valid
	}
	files := []File{}
	for _, name := range names {
		base := path.Base(name)
		ct, ok := contentType(base)
		if !ok {
			continue
		}
		data, err := assets.ReadFile(name)
		if err != nil {
			panic(err) // embedded files are always readable
		}
		sum := sha256.Sum256(data)
		f := File{Name: base, ContentType: ct, Data: data,
			ETag: `"` + base64.RawURLEncoding.EncodeToString(sum[:18]) + `"`}
		if base == "index.html" {
			f.Name = ""
			files = append([]File{f}, files...)
			continue
		}
		files = append(files, f)
	}
	return files
}

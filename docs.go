package petstore

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/petstore-go/petstore/internal/wire"
)

// docsContentTypes maps the extension of each kind of file of a page to its
// Content-Type.
var docsContentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".png":  "image/png",
}

// docsRoutes reads the files of a page from fsys and returns a public row of
// the route table for each: index.html at wire.DocsPath, every other file
// below it.
func docsRoutes(fsys fs.FS) ([]route, error) {
	var routes []route
	hasIndex := false
	err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		contentType, ok := docsContentTypes[path.Ext(name)]
		if !ok {
			return fmt.Errorf("%s has no known Content-Type; a page holds only .html, .js, .css and .png files", name)
		}
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		pattern := wire.DocsPath + "/" + name
		if name == "index.html" {
			pattern, hasIndex = wire.DocsPath, true
		}
		routes = append(routes, route{method: http.MethodGet, pattern: pattern, serve: serveDocsFile(contentType, data), public: true})
		return nil
	})
	if err == nil && !hasIndex {
		err = errors.New("the page has no index.html")
	}
	if err != nil {
		return nil, fmt.Errorf("WithDocs: %w", err)
	}
	return routes, nil
}

// serveDocsFile returns the serve function of one file of the page. It
// answers under the page's Content-Security-Policy, with a strong ETag that
// a browser revalidates, as http.ServeContent does. A file that gzip makes
// much smaller (Swagger UI's script, to a sixth) is compressed once, here,
// and served so, with an ETag of its own, to a client that takes gzip.
func serveDocsFile(contentType string, data []byte) serveFunc {
	sum := sha256.Sum256(data)
	ct := []string{contentType}
	etag := []string{`"` + base64.RawURLEncoding.EncodeToString(sum[:18]) + `"`}
	gz := gzipped(data)
	gzTag := []string{`"` + base64.RawURLEncoding.EncodeToString(sum[:18]) + `-gzip"`}
	return func(_ *handler, _ context.Context, w http.ResponseWriter, r *http.Request, _ pathParams) error {
		h := w.Header()
		h["Content-Type"] = ct
		h["Etag"] = etag
		h.Set("Cache-Control", "no-cache")
		// Scripts, styles, fetches and images from the page's own origin
		// only (and images from data: URLs, which Swagger UI uses for its
		// icons), no <base> element, and no framing by another page.
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; base-uri 'none'; frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		body := data
		if gz != nil {
			h.Set("Vary", "Accept-Encoding")
			if accepts(r.Header["Accept-Encoding"], "gzip", "*") {
				h["Etag"] = gzTag
				h.Set("Content-Encoding", "gzip")
				body = gz
			}
		}
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
		return nil
	}
}

// gzipped returns data compressed with gzip, or nil when that saves less
// than a quarter of it.
func gzipped(data []byte) []byte {
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression) // the level is valid
	if _, err := zw.Write(data); err != nil || zw.Close() != nil || b.Len() > len(data)*3/4 {
		return nil
	}
	return b.Bytes()
}

// accepts reports whether values, those of a header such as Accept or
// Accept-Encoding, name one of names, without regard to case, and without
// q=0.
func accepts(values []string, names ...string) bool {
	for _, v := range values {
		for part := range strings.SplitSeq(v, ",") {
			name, params, _ := strings.Cut(part, ";")
			name = strings.TrimSpace(name)
			if !slices.ContainsFunc(names, func(n string) bool { return strings.EqualFold(n, name) }) {
				continue
			}
			q := strings.ReplaceAll(strings.ToLower(params), " ", "")
			return !strings.HasPrefix(q, "q=0") || strings.Trim(q[2:], "0.") != ""
		}
	}
	return false
}

package petstore

import (
	"bytes"
	"context"
	"net/http"
	"time"

	"github.com/petstore-go/petstore/internal/docsui"
)

// DocsPath is the path, under the base path, of the interactive
// documentation page that WithDocs turns on: "/v1/docs" by default. The
// page's own files are served below it, as in "/v1/docs/swagger-ui.css".
const DocsPath = "/docs"

// docsRoutes returns a row of the route table for the page and for each of
// its files, all served without authentication like the OpenAPI document
// that the page reads.
func docsRoutes() []route {
	files := docsui.Files()
	routes := make([]route, 0, len(files))
	for _, f := range files {
		pattern := DocsPath
		if f.Name != "" {
			pattern += "/" + f.Name
		}
		routes = append(routes, route{method: http.MethodGet, pattern: pattern, serve: serveDocsFile(f), public: true})
	}
	return routes
}

// serveDocsFile returns the serve function of one file of the page. It
// answers under the page's Content-Security-Policy, with a strong ETag that
// a browser revalidates (If-None-Match gets 304), HEAD and ranges as
// http.ServeContent does.
func serveDocsFile(f docsui.File) serveFunc {
	contentType := []string{f.ContentType}
	etag := []string{f.ETag}
	return func(_ *handler, _ context.Context, w http.ResponseWriter, r *http.Request, _ pathParams) error {
		h := w.Header()
		h["Content-Type"] = contentType
		h["Etag"] = etag
		h["Cache-Control"] = docsCacheControl
		h["Content-Security-Policy"] = docsCSP
		h["X-Content-Type-Options"] = docsNoSniff
		h["Referrer-Policy"] = docsReferrer
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(f.Data))
		return nil
	}
}

// Header values of the page's files. They are never modified.
var (
	docsCacheControl = []string{"no-cache"}
	docsCSP          = []string{docsui.ContentSecurityPolicy}
	docsNoSniff      = []string{"nosniff"}
	docsReferrer     = []string{"no-referrer"}
)

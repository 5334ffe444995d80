// Package docspage holds the files of an interactive documentation page for
// the handler's OpenAPI document: Swagger UI 5.35.0 as the swagger-ui-dist
// package distributes it (Apache License 2.0; see assets/LICENSE and
// assets/NOTICE), with the stylesheet's source map comment removed because
// the map is not shipped, and a page and start-up script of its own.
//
// A host that serves the page passes its files to petstore.WithDocs:
//
//	h, err := petstore.New(petstore.WithStore(store), petstore.WithAuthenticator(auth),
//		petstore.WithDocs(docspage.Files()))
//
// The package petstore does not import this one, so a host that does not
// serve the page does not carry Swagger UI's 1.9 MB in its binary.
//
// The page has no inline script or style, so it runs under the handler's
// Content-Security-Policy, which allows only the page's own origin. It
// refers to everything relatively: the page at {base}/docs loads docs/...
// and reads openapi.json, so it works under any base path and behind any
// prefix that a host router adds.
package docspage

import (
	"embed"
	"io/fs"
)

//go:embed assets/index.html assets/init.js assets/swagger-ui-bundle.js assets/swagger-ui.css assets/favicon-32x32.png
var assets embed.FS

// Files returns the files of the page: index.html, the page itself, and the
// files it loads, each at the top of the returned fs.FS.
func Files() fs.FS {
	files, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err) // the directory name is constant and valid
	}
	return files
}

package petstore

import (
	"bytes"
	"cmp"
	_ "embed" // for the OpenAPI document
	"encoding/json"
	"strings"
)

// openAPIDocument is the OpenAPI 3.0.3 document of the API as the default
// handler serves it, with the server URL DefaultBasePath.
//
//go:embed openapi.json
var openAPIDocument []byte

// openAPIServerURL is the member of openAPIDocument that names its one
// server, which openAPIDocumentFor replaces (TestOpenAPIServed checks it).
const openAPIServerURL = `"url": "` + DefaultBasePath + `"`

// openAPIDocumentFor returns the embedded document with the URL of its one
// server set to basePath, or "/" when it is empty. Everything else is left
// byte for byte as it is. The result must not be modified.
func openAPIDocumentFor(basePath string) []byte {
	if basePath == DefaultBasePath {
		return openAPIDocument // serve the file as it is
	}
	// Braces would make a server URL template of the path. A string
	// always marshals.
	url, _ := json.Marshal(strings.NewReplacer("{", "%7B", "}", "%7D").Replace(cmp.Or(basePath, "/")))
	return bytes.Replace(openAPIDocument, []byte(openAPIServerURL), append([]byte(`"url": `), url...), 1)
}

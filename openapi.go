package petstore

import (
	"bytes"
	_ "embed" // for the OpenAPI document
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// openAPIDocument is the OpenAPI 3.0.3 document of the API as the default
// handler serves it, with the server URL DefaultBasePath.
//
//go:embed openapi.json
var openAPIDocument []byte

// openAPIDocumentFor returns the embedded document with its servers set to
// the one server whose URL is basePath, or "/" when it is empty. Everything
// else is left byte for byte as it is. The result must not be modified.
func openAPIDocumentFor(basePath string) ([]byte, error) {
	serverURL := basePath
	if serverURL == "" {
		serverURL = "/"
	}
	// Braces would make a server URL template of the path.
	serverURL = strings.NewReplacer("{", "%7B", "}", "%7D").Replace(serverURL)
	servers, err := json.Marshal([]struct {
		URL string `json:"url"`
	}{{URL: serverURL}})
	if err != nil {
		return nil, err
	}
	start, end, err := topLevelMember(openAPIDocument, "servers")
	if err != nil {
		return nil, fmt.Errorf("the embedded OpenAPI document: %w", err)
	}
	var current bytes.Buffer
	if json.Compact(&current, openAPIDocument[start:end]) == nil && bytes.Equal(current.Bytes(), servers) {
		return openAPIDocument, nil // the default: serve the file as it is
	}
	doc := make([]byte, 0, len(openAPIDocument)-(end-start)+len(servers))
	doc = append(doc, openAPIDocument[:start]...)
	doc = append(doc, servers...)
	return append(doc, openAPIDocument[end:]...), nil
}

// topLevelMember returns the offsets in doc, a JSON object, of the value of
// its member name.
func topLevelMember(doc []byte, name string) (start, end int, err error) {
	d := json.NewDecoder(bytes.NewReader(doc))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return 0, 0, errors.New("not a JSON object")
	}
	for d.More() {
		key, err := d.Token()
		if err != nil {
			return 0, 0, err
		}
		var value json.RawMessage
		if err := d.Decode(&value); err != nil {
			return 0, 0, err
		}
		if key == name {
			end := int(d.InputOffset())
			return end - len(value), end, nil
		}
	}
	return 0, 0, fmt.Errorf("no member %q", name)
}

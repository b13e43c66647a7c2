// Package openapi holds guidepub's OpenAPI 3.1 document: the Portal API, the
// View API, the autofill API, private documents, the sidecar's health checks
// and the ready-event webhook. The sidecar serves it at /api/v1/openapi.json;
// the tests of cmd/guidepub validate real responses against it, so it cannot
// drift from the code.
package openapi

import (
	_ "embed"
)

//go:embed openapi.json
var document []byte

// Path is where the sidecar serves the document.
const Path = "/api/v1/openapi.json"

// Document returns the OpenAPI document as JSON. The caller gets its own
// copy and may change it.
func Document() []byte {
	return append([]byte(nil), document...)
}

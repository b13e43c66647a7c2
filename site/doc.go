// Package site describes the published site: the documents guidepub renders
// (view status, measurement summary, autofill, ready event), where each one
// lives in the public and private trees, the precompressed encodings stored
// beside it, and the HTTP headers every file is served with.
//
// Package site imports no other guidepub package: the exporter writes what it
// describes, the sidecar and the static server read it.
package site

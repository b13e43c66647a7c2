// Package site describes the published site: the documents guidepub renders
// (view status, measurement summary, autofill, ready event), where each one
// lives in the public and private trees, the precompressed encodings stored
// beside it, and the HTTP headers every file is served with.
//
// It is the home of the hide table (PublicFiles): every kind of public
// file, where it goes and which hidden features remove it, the one rule
// the exporter, the view pages and publishing read (Shows, Publishes,
// PublicFileOf).
//
// Package site imports no other guidepub package: the exporter writes what it
// describes, the sidecar and the static server read it.
//
// It is also the one home of the encodings (Encoding: Brotli, Zstd, Gzip
// and Identity). Each value knows its Content-Encoding token, its sibling
// file's suffix and its codec: Encode with the exporter's settings,
// NewReader with pooled decoders, ParseList and ParseEncoding for the
// commands' flags. The exporter writes siblings with it, its repair and
// the static server check them with it, and publish uploads them or
// compresses what the export left out with it; one definition means one
// set of compression settings and pools, and no part can read a sibling
// with other rules than the part that wrote it.
package site

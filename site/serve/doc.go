// Package serve serves guidepub's exported public tree over HTTP the way a
// CDN would, and writes the same rules as configuration for nginx, Caddy and
// hosts that read a _headers file.
//
// For each request the Server picks the representation by Accept-Encoding
// (the .br, .zst or .gz sibling of a document, or the identity file), and
// sets Content-Type, Content-Encoding, Vary, a strong ETag per
// representation, Cache-Control and X-Content-Type-Options as package site
// says. Nothing is read at start; documents and small files are cached, up
// to a byte budget, as they are asked for, larger media stream from disk,
// and a watcher drops from the cache what a change of the tree touched.
// See docs/serving.md.
package serve

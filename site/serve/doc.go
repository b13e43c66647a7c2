// Package serve serves guidepub's exported public tree over HTTP the way a
// CDN would, and writes the same rules as configuration for nginx, Caddy and
// hosts that read a _headers file.
//
// For each request the Server picks the representation by Accept-Encoding
// (the .br, .zst or .gz sibling of a document, or the identity file), and
// sets Content-Type, Content-Encoding, Vary, a strong ETag per
// representation, Cache-Control and X-Content-Type-Options as package site
// says. Documents come from an in-memory snapshot of the tree that is
// rebuilt when the tree changes; large media files stream from disk.
package serve

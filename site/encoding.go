package site

import "strings"

// Encoding is one precompressed representation of a document, stored as a
// sibling file with Ext appended.
type Encoding struct {
	Name string // Content-Encoding token
	Ext  string // file name suffix
}

// The encodings guidepub can write, in the order servers prefer them when
// a client accepts several with the same q-value.
var (
	Brotli = Encoding{Name: "br", Ext: ".br"}
	Zstd   = Encoding{Name: "zstd", Ext: ".zst"}
	Gzip   = Encoding{Name: "gzip", Ext: ".gz"}
)

// Encodings lists every supported encoding, most preferred first.
var Encodings = []Encoding{Brotli, Zstd, Gzip}

// EncodingByName returns the encoding whose Content-Encoding token is name.
func EncodingByName(name string) (Encoding, bool) {
	for _, e := range Encodings {
		if e.Name == name {
			return e, true
		}
	}
	return Encoding{}, false
}

// SplitEncoded splits a path of a compressed sibling into the document path
// and its encoding. ok is false for a path that is not a compressed sibling
// of a document.
func SplitEncoded(p string) (doc string, enc Encoding, ok bool) {
	for _, e := range Encodings {
		if base, found := strings.CutSuffix(p, e.Ext); found && IsDocument(base) {
			return base, e, true
		}
	}
	return "", Encoding{}, false
}

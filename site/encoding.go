package site

import (
	"fmt"
	"slices"
	"strings"
)

// Encoding is one content coding of a document: its Content-Encoding
// token, the suffix of the precompressed sibling file that holds the
// document in it, and its codec (Encode, NewReader). Encodings are
// compared with ==; the values to use are Brotli, Zstd, Gzip and
// Identity, or those EncodingByName, ParseList and ParseEncoding return.
// A value made any other way has no codec: its Encode and NewReader
// return an error.
//
// Encoding is the one home of the encodings (see the package doc): no
// other package keeps codec code.
type Encoding struct {
	Name string // Content-Encoding token
	Ext  string // file name suffix of the sibling; empty for Identity
	c    codec  // nil for a value not made by this package
}

// The encodings guidepub can write, in the order servers prefer them when
// a client accepts several with the same q-value.
var (
	Brotli = Encoding{Name: "br", Ext: ".br", c: brotliCodec}
	Zstd   = Encoding{Name: "zstd", Ext: ".zst", c: zstdCodec}
	Gzip   = Encoding{Name: "gzip", Ext: ".gz", c: gzipCodec}
)

// Identity is the absence of a content coding: no sibling file, and a
// codec that copies its input. It is not one of Encodings.
var Identity = Encoding{Name: "identity", c: identityCodec{}}

// Encodings lists every supported encoding, most preferred first.
var Encodings = []Encoding{Brotli, Zstd, Gzip}

// NoEncodings is the ParseList value that names an empty list.
const NoEncodings = "none"

// String returns the Content-Encoding token.
func (e Encoding) String() string { return e.Name }

// EncodingByName returns the encoding of Encodings whose Content-Encoding
// token is name.
func EncodingByName(name string) (Encoding, bool) {
	for _, e := range Encodings {
		if e.Name == name {
			return e, true
		}
	}
	return Encoding{}, false
}

// ParseEncoding returns the encoding among choices whose Content-Encoding
// token is name, or an error naming the choices.
func ParseEncoding(name string, choices ...Encoding) (Encoding, error) {
	names := make([]string, len(choices))
	for i, e := range choices {
		if e.Name == name {
			return e, nil
		}
		names[i] = e.Name
	}
	return Encoding{}, fmt.Errorf("unknown encoding %q: use %s", name, orList(names))
}

// ParseList parses a comma-separated list of Content-Encoding tokens of
// Encodings ("br,zstd,gzip"), or NoEncodings for none, as the export's
// --encodings flag takes it. Spaces around tokens are ignored and a
// repeated token counts once. The result is never nil.
func ParseList(s string) ([]Encoding, error) {
	s = strings.TrimSpace(s)
	out := []Encoding{}
	if s == NoEncodings {
		return out, nil
	}
	for name := range strings.SplitSeq(s, ",") {
		e, ok := EncodingByName(strings.TrimSpace(name))
		if !ok {
			names := make([]string, 0, len(Encodings)+1)
			for _, e := range Encodings {
				names = append(names, e.Name)
			}
			return nil, fmt.Errorf("unknown encoding %q: use %s", strings.TrimSpace(name), orList(append(names, NoEncodings)))
		}
		if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	return out, nil
}

// FormatList is the ParseList form of encs: the tokens joined with commas,
// or NoEncodings for an empty list.
func FormatList(encs []Encoding) string {
	if len(encs) == 0 {
		return NoEncodings
	}
	names := make([]string, len(encs))
	for i, e := range encs {
		names[i] = e.Name
	}
	return strings.Join(names, ",")
}

// orList joins names as "a, b or c".
func orList(names []string) string {
	if len(names) <= 1 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
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

package serve

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/guidepub/guidepub/site"
)

// representation is one servable variant of a file: the identity bytes or
// one precompressed sibling. It is never modified once made.
type representation struct {
	data     []byte   // nil when the file streams from disk
	size     int64    // length of the stored bytes
	etag     []string // strong ETag header value, ready to assign
	length   []string // Content-Length of the whole representation
	encoding []string // Content-Encoding header value; nil for identity
}

// entry is one servable public path: a document (identity plus its
// siblings) or a media file.
//
// An entry records which files it stands for when it is made, but reads
// the bytes of a representation only when a client asks for it: most
// clients take brotli, and a document cached as brotli alone takes a
// fraction of the memory of all four. A sibling is checked against the
// identity's content hash when it is read; one that does not match is
// dropped (see docs/serving.md).
type entry struct {
	name        string // slash-separated path relative to the root
	document    bool
	contentType []string
	// cacheHeaders are Cache-Control and, with an edge TTL, the edge's
	// own (site.FileHeaders); keyHeaders the surrogate key headers, nil
	// for a file of no public id.
	cacheHeaders, keyHeaders http.Header
	// pageHeaders are the extra headers of a view page (its policy and
	// frame rules), nil for any other file.
	pageHeaders http.Header
	// stamps are the stamps of the identity file and of each sibling
	// (site.Encodings order) when the entry was made, zero for an absent
	// one: the files a check compares.
	stamps [1 + numEncodings]fileStamp
	// sum is the SHA-256 of the identity bytes, which every sibling must
	// decode to.
	sum [sha256.Size]byte
	// reps are the representations read so far: [0] identity, [1+i]
	// sibling i in site.Encodings order.
	reps [1 + numEncodings]atomic.Pointer[representation]
	// present tells which siblings exist and are not known to mismatch.
	present [numEncodings]atomic.Bool

	// Validity; see cache.go.
	marks   atomic.Uint64 // 0 while no change was seen since the entry was made or checked
	epoch   atomic.Uint64 // the Server's epoch when made or checked
	checked atomic.Int64  // Server.now when made or checked
}

// entryOverhead is what the cache counts for an entry beyond its bytes:
// the struct, its header slices and the cache's own node, rounded up.
const entryOverhead = 768

// newEntry returns an entry for name with the headers its path and the
// edge TTL decide.
func newEntry(name string, document bool, edgeTTL time.Duration) *entry {
	e := &entry{
		name:         name,
		document:     document,
		contentType:  []string{site.ContentType(name)},
		cacheHeaders: http.Header{},
		pageHeaders:  pageHeadersOf(name),
	}
	for _, f := range site.FileHeaders(name, edgeTTL) {
		h := e.cacheHeaders
		if slices.Contains(site.SurrogateKeyHeaders, f.Name) {
			if e.keyHeaders == nil {
				e.keyHeaders = http.Header{}
			}
			h = e.keyHeaders
		}
		h[http.CanonicalHeaderKey(f.Name)] = []string{f.Value}
	}
	return e
}

// available returns which siblings may be chosen now.
func (e *entry) available() (a [numEncodings]bool) {
	for i := range a {
		a[i] = e.present[i].Load()
	}
	return a
}

// weight is the number of bytes the cache counts for e.
func (e *entry) weight() uint32 {
	w := int64(entryOverhead + len(e.name))
	for i := range e.reps {
		if r := e.reps[i].Load(); r != nil {
			w += int64(cap(r.data)) + 96
		}
	}
	return uint32(min(w, 1<<32-1))
}

// etagOf returns the strong ETag header value of bytes whose SHA-256 is
// sum.
func etagOf(sum *[sha256.Size]byte) []string {
	return []string{`"` + hex.EncodeToString(sum[:16]) + `"`}
}

// heldRepresentation returns the representation of data, held in memory,
// whose SHA-256 is sum.
func heldRepresentation(data []byte, sum *[sha256.Size]byte) *representation {
	return &representation{
		data:   data,
		size:   int64(len(data)),
		etag:   etagOf(sum),
		length: []string{strconv.Itoa(len(data))},
	}
}

// streamedRepresentation returns the representation of a file that
// streams from disk. Its ETag comes from the stamp, as nginx's and
// Caddy's do, so that serving it needs no read of the whole file; the
// inode makes a file renamed into place a new version even within one
// tick of the file clock.
func streamedRepresentation(st fileStamp) *representation {
	return &representation{
		size: st.size,
		etag: []string{`"` + strconv.FormatInt(st.size, 16) + "-" + strconv.FormatInt(st.modTime, 16) +
			"-" + strconv.FormatUint(st.ino, 16) + `"`},
		length: []string{strconv.FormatInt(st.size, 10)},
	}
}

package serve

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/guidepub/guidepub/site"
)

// maxHeld is the size above which a document is not read into memory to
// be served: larger ones stream from disk. Documents that big do not come
// from the exporter, whose limits keep them far smaller.
const maxHeld = 64 << 20

var (
	// errNotAcceptable: the file has no representation the client accepts.
	errNotAcceptable = errors.New("no acceptable representation")
	// errStale: a file changed since its entry was made; make it again.
	errStale = errors.New("file changed since its entry was made")
	// errMismatch: a sibling does not decode to its document.
	errMismatch = errors.New("compressed sibling does not match its document")
)

// load makes the entry of the public file name from the tree, reads the
// representation acc chooses, and caches the entry when it fits. For a
// file that streams from disk it also returns the open file, which the
// caller serves and closes. A missing file, a folder or anything but a
// regular file gives an error wrapping fs.ErrNotExist; a file with no
// representation acc accepts gives the entry and errNotAcceptable.
func (s *Server) load(name string, acc *acceptance) (*entry, *representation, file, error) {
	at := s.mark()
	f, st, err := s.src.open(name)
	if err != nil {
		return nil, nil, nil, err
	}
	doc := site.IsDocument(name)
	e := newEntry(name, doc, s.cfg.EdgeTTL)
	e.stamps[0] = st
	if st.size > maxHeld || (!doc && (s.cache == nil || st.size > s.cfg.SmallFileLimit)) {
		rep := streamedRepresentation(st)
		e.reps[0].Store(rep)
		if _, ok := acc.choose(&[numEncodings]bool{}); !ok {
			f.Close()
			return e, nil, nil, errNotAcceptable
		}
		return e, rep, f, nil
	}
	data, err := readFile(f, st)
	f.Close()
	if errors.Is(err, errChanged) {
		return e, nil, nil, errStale // being rewritten in place: read it again
	}
	if err != nil {
		return nil, nil, nil, fmt.Errorf("serve: read %s: %w", name, err)
	}
	e.sum = sha256.Sum256(data)
	var rep *representation
	if doc {
		s.statSiblings(e)
		rep, err = s.choose(e, acc, data)
	} else {
		e.reps[0].Store(heldRepresentation(data, &e.sum))
		rep, err = s.choose(e, acc, nil)
	}
	if err == nil || errors.Is(err, errNotAcceptable) {
		s.remember(e, at)
	}
	return e, rep, nil, err
}

// statSiblings records which precompressed siblings of document e exist.
func (s *Server) statSiblings(e *entry) {
	for i, enc := range site.Encodings {
		st, err := s.src.stat(e.name + enc.Ext)
		if err != nil {
			s.logger.Warn("serve: look for compressed sibling; serving without it", "path", e.name, "encoding", enc.Name, "err", err)
		}
		e.stamps[1+i] = st
		e.present[i].Store(st != fileStamp{})
	}
}

// choose returns the representation of e that acc prefers among those
// available, reading it if no request has yet. identity, when not nil, is
// the identity bytes just read. It returns errNotAcceptable when acc
// accepts none, and errStale when a file changed since e was made.
func (s *Server) choose(e *entry, acc *acceptance, identity []byte) (*representation, error) {
	for {
		avail := e.available()
		idx, ok := acc.choose(&avail)
		if !ok {
			return nil, errNotAcceptable
		}
		k := idx + 1 // reps index: 0 is the identity
		if r := e.reps[k].Load(); r != nil {
			return r, nil
		}
		r, err := s.readRepresentation(e, k, identity)
		if errors.Is(err, errMismatch) {
			continue // the sibling is no longer available: choose again
		}
		if err != nil {
			return nil, err
		}
		if !e.reps[k].CompareAndSwap(nil, r) {
			r = e.reps[k].Load()
		}
		s.reweigh(e)
		return r, nil
	}
}

// readRepresentation reads representation k of e (0 the identity, 1+i
// sibling i) and checks it against e.
func (s *Server) readRepresentation(e *entry, k int, identity []byte) (*representation, error) {
	if k == 0 && identity != nil {
		return heldRepresentation(identity, &e.sum), nil
	}
	name := e.name
	var enc site.Encoding
	if k > 0 {
		enc = site.Encodings[k-1]
		name += enc.Ext
	}
	f, st, err := s.src.open(name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, errStale
		}
		return nil, err
	}
	defer f.Close()
	if st != e.stamps[k] {
		return nil, errStale
	}
	data, err := readFile(f, st)
	if err != nil {
		return nil, errStale
	}
	sum := sha256.Sum256(data)
	if k == 0 {
		if sum != e.sum {
			return nil, errStale
		}
		return heldRepresentation(data, &sum), nil
	}
	if err := decodesTo(enc, data, e.stamps[0].size, &e.sum); err != nil {
		s.logger.Warn("serve: compressed sibling does not match its document; serving without it",
			"path", e.name, "encoding", enc.Name, "err", err)
		e.present[k-1].Store(false)
		return nil, errMismatch
	}
	r := heldRepresentation(data, &sum)
	r.encoding = []string{enc.Name}
	return r, nil
}

// errChanged reports a file whose size changed while it was read.
var errChanged = errors.New("file changed while it was read")

// readFile reads the whole of f, whose stamp says how long it is, into a
// slice of exactly that length.
func readFile(f file, st fileStamp) ([]byte, error) {
	data := make([]byte, st.size)
	if _, err := io.ReadFull(f, data); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			err = errChanged
		}
		return nil, err
	}
	var one [1]byte
	if n, _ := f.Read(one[:]); n != 0 {
		return nil, errChanged
	}
	return data, nil
}

// decodesTo returns nil when data, compressed with enc, decodes to size
// bytes whose SHA-256 is sum. It decodes at most size+1 bytes, so a
// sibling that would expand without end costs no more than its document.
// enc's decoders are pooled, since a cold cache makes one check per
// document served.
func decodesTo(enc site.Encoding, data []byte, size int64, sum *[sha256.Size]byte) error {
	r, put, err := enc.NewReader(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("decode %s: %w", enc.Name, err)
	}
	defer put()
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(r, size+1))
	if err != nil {
		return fmt.Errorf("decode %s: %w", enc.Name, err)
	}
	if n != size || !bytes.Equal(h.Sum(nil), sum[:]) {
		return fmt.Errorf("decodes to %d bytes that differ from the %d of the document", n, size)
	}
	return nil
}

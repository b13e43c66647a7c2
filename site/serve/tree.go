package serve

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/site"
)

// representation is one servable variant of a file: the identity bytes or
// one precompressed sibling.
type representation struct {
	data     []byte   // nil when the file streams from disk
	size     int64    // length of the stored bytes
	etag     []string // strong ETag header value, ready to assign
	length   []string // Content-Length of the whole representation
	encoding []string // Content-Encoding header value; nil for identity
	// source identifies the file the bytes came from, so an unchanged file
	// is not read again on reload.
	source fileStamp
	// matches is, for a compressed sibling, the ETag of the identity
	// document its decoded bytes were found equal to; a reload that keeps
	// both files need not decode it again.
	matches string
}

// fileStamp is what a reload compares to tell whether a file changed.
// File times are coarse (a few milliseconds on Linux), so the inode number
// is compared too: the exporter renames a new file into place, which gives
// a new inode even when size and time are equal.
type fileStamp struct {
	size    int64
	modTime time.Time
	ino     uint64
}

// same reports whether a and b describe the same file contents.
func (a fileStamp) same(b fileStamp) bool {
	return a.size == b.size && a.modTime.Equal(b.modTime) && a.ino == b.ino
}

// entry is one servable public path: a document (identity plus its
// siblings) or a media file.
type entry struct {
	name         string // slash-separated path relative to the root
	document     bool
	contentType  []string
	cacheControl []string
	identity     representation
	encoded      [numEncodings]*representation // nil when the sibling is absent
	available    [numEncodings]bool
	// pageHeaders are the extra headers of a view page (its policy and
	// frame rules), nil for any other file; decided once, at load.
	pageHeaders http.Header
}

// snapshot is an immutable view of the served tree. Requests read it
// without locks; a reload builds a new one and swaps it in.
type snapshot struct {
	entries map[string]*entry
	byTop   map[string][]string // top-level folder -> names of its entries
	memory  int64               // bytes held in memory
	files   int                 // files indexed (documents, siblings and media)
}

// loader builds snapshots of one tree, reusing what the previous snapshot
// read for files that did not change.
type loader struct {
	fsys        afero.Fs
	root        string
	memoryLimit int64
	logger      *slog.Logger // nil discards
}

// load walks the tree and returns a new snapshot. Hidden paths, symbolic
// links, directories and anything that is not a regular file are skipped.
// prev may be nil. It returns an error only when the root cannot be read;
// a file that vanishes during the walk is skipped.
func (l *loader) load(prev *snapshot) (*snapshot, error) {
	type found struct {
		name  string
		stamp fileStamp
	}
	var files []found
	err := site.WalkFiles(l.fsys, l.root, func(rel string, info fs.FileInfo) error {
		files = append(files, found{rel, fileStamp{info.Size(), info.ModTime(), inode(info)}})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("serve: walk %s: %w", l.root, err)
	}

	snap := &snapshot{entries: make(map[string]*entry, len(files))}
	var siblings []found
	for _, f := range files {
		if _, _, ok := site.SplitEncoded(f.name); ok {
			siblings = append(siblings, f)
			continue
		}
		var old *representation
		if prev != nil {
			if e := prev.entries[f.name]; e != nil {
				old = &e.identity
			}
		}
		doc := site.IsDocument(f.name)
		rep, err := l.represent(f.name, f.stamp, doc, old)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return nil, err
		}
		snap.entries[f.name] = &entry{
			name:         f.name,
			document:     doc,
			contentType:  []string{site.ContentType(f.name)},
			cacheControl: []string{site.CacheControl(f.name)},
			identity:     rep,
			pageHeaders:  pageHeadersOf(f.name),
		}
	}
	for _, f := range siblings {
		docName, enc, _ := site.SplitEncoded(f.name)
		e := snap.entries[docName]
		if e == nil {
			continue // a sibling without its identity document is not served
		}
		i := codingIndex(enc.Name)
		var old *representation
		if prev != nil {
			if pe := prev.entries[docName]; pe != nil {
				old = pe.encoded[i]
			}
		}
		rep, err := l.represent(f.name, f.stamp, true, old)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return nil, err
		}
		rep.encoding = []string{enc.Name}
		if !l.matches(e, &rep, enc) {
			continue
		}
		e.encoded[i] = &rep
		e.available[i] = true
	}
	snap.byTop = map[string][]string{}
	for name, e := range snap.entries {
		mem, n := e.held()
		snap.memory += mem
		snap.files += n
		top, _, _ := strings.Cut(name, "/")
		snap.byTop[top] = append(snap.byTop[top], name)
	}
	return snap, nil
}

// matches reports whether the sibling rep of document e decodes to the
// document's identity bytes, and remembers a match in rep. A sibling that
// does not (an export killed between writing a document's files leaves new
// and old encodings side by side) is logged and must not be served, so that
// every client gets the same content whatever encoding it accepts; see
// docs/serving.md.
func (l *loader) matches(e *entry, rep *representation, enc site.Encoding) bool {
	id := &e.identity
	if id.data == nil {
		return true // not held, nothing to compare with cheaply
	}
	if rep.matches != "" && rep.matches == id.etag[0] {
		return true
	}
	err := sameDecoded(enc, rep.data, id.data)
	if err != nil {
		if l.logger != nil {
			l.logger.Warn("serve: compressed sibling does not match its document; serving without it",
				"path", e.name, "encoding", enc.Name, "err", err)
		}
		return false
	}
	rep.matches = id.etag[0]
	return true
}

// sameDecoded returns nil when data, compressed with enc, decodes to want.
func sameDecoded(enc site.Encoding, data, want []byte) error {
	var r io.Reader
	switch enc.Name {
	case "br":
		r = brotli.NewReader(bytes.NewReader(data))
	case "zstd":
		d, err := zstd.NewReader(bytes.NewReader(data), zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true))
		if err != nil {
			return fmt.Errorf("decode %s: %w", enc.Name, err)
		}
		defer d.Close()
		r = d
	case "gzip":
		g, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return fmt.Errorf("decode %s: %w", enc.Name, err)
		}
		r = g
	default:
		return fmt.Errorf("unknown encoding %q", enc.Name)
	}
	got, err := io.ReadAll(io.LimitReader(r, int64(len(want))+1))
	if err != nil {
		return fmt.Errorf("decode %s: %w", enc.Name, err)
	}
	if !bytes.Equal(got, want) {
		return fmt.Errorf("decodes to %d bytes that differ from the %d of the document", len(got), len(want))
	}
	return nil
}

// represent returns the representation of the file name: its bytes in
// memory (documents always, media up to the memory limit) and its ETag.
// old, when it has the same stamp, is reused without reading the file.
func (l *loader) represent(name string, stamp fileStamp, document bool, old *representation) (representation, error) {
	inMemory := document || stamp.size <= l.memoryLimit
	if old != nil && old.source.same(stamp) && (old.data != nil) == inMemory {
		return *old, nil
	}
	f, err := l.fsys.Open(filepath.Join(l.root, filepath.FromSlash(name)))
	if err != nil {
		return representation{}, err
	}
	defer f.Close()
	h := sha256.New()
	var data []byte
	var n int64
	if inMemory {
		data, err = io.ReadAll(f)
		n = int64(len(data))
		h.Write(data)
	} else {
		n, err = io.Copy(h, f)
	}
	if err != nil {
		return representation{}, fmt.Errorf("serve: read %s: %w", name, err)
	}
	if data == nil && inMemory {
		data = []byte{}
	}
	sum := h.Sum(nil)
	return representation{
		data:   data,
		size:   n,
		etag:   []string{`"` + hex.EncodeToString(sum[:16]) + `"`},
		length: []string{strconv.FormatInt(n, 10)},
		source: fileStamp{n, stamp.modTime, stamp.ino},
	}, nil
}

// cleanRequestPath maps the escaped URL path of a request to the
// slash-separated path of a public file, or ok false when the path can
// never name one: it must be absolute and clean, and may not contain
// encoded slashes or backslashes, backslashes, NUL or other control
// characters, or a hidden element.
func cleanRequestPath(escaped string) (string, bool) {
	if len(escaped) < 2 || escaped[0] != '/' {
		return "", false
	}
	lower := strings.ToLower(escaped)
	if strings.Contains(lower, "%2f") || strings.Contains(lower, "%5c") || strings.Contains(lower, "%00") {
		return "", false
	}
	p := escaped[1:]
	if strings.IndexByte(p, '%') >= 0 {
		var err error
		// Unescape only what names a file; every separator is already known
		// to be a real one.
		if p, err = url.PathUnescape(p); err != nil {
			return "", false
		}
	}
	for i := 0; i < len(p); i++ {
		if c := p[i]; c < 0x20 || c == 0x7f || c == '\\' {
			return "", false
		}
	}
	if path.Clean("/"+p) != "/"+p || site.IsHidden(p) {
		return "", false
	}
	return p, true
}

// osRoot returns the operating-system directory behind root of fsys, when
// fsys reads the real file system; ok is false otherwise (a memory file
// system, say), and then the tree is not watched.
func osRoot(fsys afero.Fs, root string) (string, bool) {
	switch f := fsys.(type) {
	case *afero.OsFs:
		abs, err := filepath.Abs(root)
		return abs, err == nil
	case *afero.BasePathFs:
		real, err := f.RealPath(root)
		if err != nil {
			return "", false
		}
		if _, err := os.Stat(real); err != nil {
			return "", false
		}
		abs, err := filepath.Abs(real)
		return abs, err == nil
	}
	return "", false
}

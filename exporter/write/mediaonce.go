package write

import (
	"crypto/md5"
	"crypto/sha256"
	"errors"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/exporter/ledger"
	"github.com/guidepub/guidepub/exporter/media"
	"github.com/guidepub/guidepub/exporter/render"
)

// Media work done once (see docs/robustness.md#media-made-once). A media file
// is a function of its source's bytes and its transformation (a copy, a
// strip of its format, a rendition of a width, under the media rules of
// media.Version): so
//
//   - within one guide's export, the first file of a source and
//     transformation makes the product; every other destination of it (the
//     same PDF in five languages' folders) becomes another name of the
//     first one's file (a hard link: no bytes written or flushed again)
//     when it is in the same tree and the first file is still as made,
//     unless it holds the product already; otherwise it is copied from
//     there, its SHA-256 checked against the product's (productShare,
//     linkProduct, copyProduct);
//   - across exports, a destination is left alone, without reading its
//     source or itself, when the guide's ledger (what its last export
//     recorded, package ledger) says it was made from this source and
//     transformation, the source still shows the stamp (size, modification
//     and change times) it had then and the destination the stamp it had
//     once written (heldByLedger). Anything else (a source changed or
//     replaced, a destination rewritten, touched or deleted, a guide
//     without a ledger) makes the file again the ordinary way, which reads
//     the source, re-checks it did not change while read, and compares
//     with what is there.
//
// The ledger is kept in the guide's record, so a new process leaves the
// media files alone as the process that wrote them would.

// mediaKey is one source and transformation.
type mediaKey struct {
	src    string // the bundle file, as opened (folder and path)
	format media.Format
	width  int
}

// keyOf returns the source and transformation of the media file f of b.
func keyOf(b *bundle.Bundle, f render.File) mediaKey {
	return mediaKey{src: filepath.Join(b.Dir, filepath.FromSlash(f.Src)), format: f.Format, width: f.Width}
}

// sourceOf returns what the media file f is made from, its bundle file
// showing stamp st.
func sourceOf(f render.File, st ledger.Stamp) ledger.Source {
	return ledger.Source{Path: f.Src, Made: ledger.Made(string(f.Format), f.Width, media.Version), Stamp: st}
}

// made is a product: its source and transformation, the source's stamp
// when it was made, and its SHA-256.
type made struct {
	key mediaKey
	src ledger.Stamp
	sum [sha256.Size]byte
}

// sourceStamp returns the stamp of the bundle file of f, opened as the
// copy opens it (no symbolic link, no other hard link).
func sourceStamp(b *bundle.Bundle, f render.File) (ledger.Stamp, error) {
	src, err := b.Open(f.Src)
	if err != nil {
		return ledger.Stamp{}, err
	}
	defer src.Close()
	fi, err := src.Stat()
	if err != nil {
		return ledger.Stamp{}, err
	}
	return ledger.StampOf(fi), nil
}

// destStamp returns the stamp of p in t, false when it is not a regular
// file.
func destStamp(t Tree, p string) (ledger.Stamp, bool) {
	if checkPath(p) != nil {
		return ledger.Stamp{}, false
	}
	fi, err := t.FS.Stat(t.Abs(p))
	if err != nil || !fi.Mode().IsRegular() {
		return ledger.Stamp{}, false
	}
	return ledger.StampOf(fi), true
}

// heldByLedger reports whether the guide's ledger shows the media file f
// at f.Path of t as the product of its source, which shows stamp src now,
// and returns its SHA-256.
func (w *guideWriter) heldByLedger(t Tree, f render.File, src ledger.Stamp) ([sha256.Size]byte, bool) {
	l := w.prior.Private
	if w.isPublic(t) {
		l = w.prior.Public
	}
	e, ok := l.Find(f.Path)
	if !ok || !e.MadeFrom(sourceOf(f, src)) || checkPath(f.Path) != nil {
		return [sha256.Size]byte{}, false
	}
	fi, err := t.FS.Stat(t.Abs(f.Path))
	if err != nil || !e.Holds(fi) {
		return [sha256.Size]byte{}, false
	}
	return e.Sum()
}

// madeFrom records that the media file f now holds the product of its
// source of stamp src, for the guide's ledger.
func (w *guideWriter) madeFrom(f render.File, src ledger.Stamp) {
	if w.sources == nil {
		w.sources = map[string]ledger.Source{}
	}
	w.sources[f.Path] = sourceOf(f, src)
}

// productShare is what the files of one guide's export made, by source
// and transformation: the first file of a key makes it, the others wait
// for it and link or copy its file.
type productShare struct {
	mu sync.Mutex
	m  map[mediaKey]*product
}

// product is the outcome of the first file of a key; done is closed once
// it is known.
type product struct {
	done chan struct{}
	ok   bool
	t    Tree
	path string
	made made
	// digest is the Digest of the file at path as this export wrote it,
	// zero when it was found in place (then other destinations are
	// copied, not linked); dst is that file's stamp then.
	digest Digest
	dst    ledger.Stamp
}

// claim returns the product of k and whether the caller is the first
// file of k, which must call finish.
func (ps *productShare) claim(k mediaKey) (*product, bool) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if p, ok := ps.m[k]; ok {
		return p, false
	}
	if ps.m == nil {
		ps.m = map[mediaKey]*product{}
	}
	p := &product{done: make(chan struct{})}
	ps.m[k] = p
	return p, true
}

// putMedia publishes the media file f of b at f.Path of t (putSource)
// unless the guide's ledger shows it done (heldByLedger), or another file
// of this export made the same product (copied from there); it records
// what f is now made from (madeFrom).
func (w *guideWriter) putMedia(t Tree, b *bundle.Bundle, f render.File) ([sha256.Size]byte, error) {
	k := keyOf(b, f)
	srcNow, err := sourceStamp(b, f)
	if err != nil {
		return [sha256.Size]byte{}, err
	}
	if !w.e.Verifying() {
		if sum, ok := w.heldByLedger(t, f, srcNow); ok {
			w.res.Unchanged++
			w.madeFrom(f, srcNow)
			if w.share != nil {
				// Other destinations of k copy it from here.
				if p, first := w.share.claim(k); first {
					p.ok, p.t, p.path, p.made = true, t, f.Path, made{key: k, src: srcNow, sum: sum}
					close(p.done)
				}
			}
			return sum, nil
		}
	}
	var p *product
	first := true
	if w.share != nil {
		p, first = w.share.claim(k)
	}
	if !first {
		<-p.done
		if p.ok && p.made.src == srcNow {
			if sum, ok := w.linkProduct(t, f.Path, p); ok {
				w.madeFrom(f, srcNow)
				return sum, nil
			}
			sum, ok, err := w.copyProduct(t, f.Path, p)
			if err != nil {
				return sum, err
			}
			if ok {
				w.madeFrom(f, srcNow)
				return sum, nil
			}
		}
	}
	w.srcMade = ledger.Stamp{}
	sum, err := w.putSource(t, b, f)
	if err == nil && w.srcMade != (ledger.Stamp{}) {
		w.madeFrom(f, w.srcMade)
		if first && p != nil {
			p.ok, p.t, p.path, p.made = true, t, f.Path, made{key: k, src: w.srcMade, sum: sum}
			if d, ok := w.digests[f.Path]; ok && d.SHA256 == sum {
				p.digest = d
				p.dst, _ = destStamp(t, f.Path)
			}
		}
	}
	if first && p != nil {
		close(p.done)
	}
	return sum, err
}

// linkProduct makes p of t, which does not exist, another name of the
// file of prod when it can (linkable), and reports whether it did. A path
// that exists may hold the product already: copyProduct compares first,
// so that an unchanged file is not replaced.
func (w *guideWriter) linkProduct(t Tree, p string, prod *product) ([sha256.Size]byte, bool) {
	if !w.linkable(t, p, prod) {
		return prod.made.sum, false
	}
	dst := t.Abs(p)
	if _, err := os.Lstat(dst); !errors.Is(err, fs.ErrNotExist) {
		return prod.made.sum, false
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return prod.made.sum, false
	}
	if err := os.Link(prod.t.Abs(prod.path), dst); err != nil {
		return prod.made.sum, false // copied instead
	}
	w.linked(t, p, prod)
	return prod.made.sum, true
}

// linkable reports whether p of t can be another name of prod's file: p
// is in the same tree (same file system and mode), this export wrote that
// file (its digests are known) and it still has the stamp it had then. A
// new name needs no flush of its own: the file's bytes were flushed
// before its first name, and the guide's folders are flushed before its
// record.
func (w *guideWriter) linkable(t Tree, p string, prod *product) bool {
	if _, ok := t.FS.(*afero.OsFs); !ok || prod.t.Root != t.Root || prod.digest.SHA256 != prod.made.sum || checkPath(p) != nil {
		return false
	}
	now, ok := destStamp(prod.t, prod.path)
	return ok && now.Size == prod.dst.Size && now.ModTime == prod.dst.ModTime
}

// replaceByLink replaces p of t, which exists and differs, by another name
// of prod's file: a link at a temporary name renamed over p (atomic, as
// every replacement). It reports false, with p as it was, when it cannot.
func (w *guideWriter) replaceByLink(t Tree, p string, prod *product) bool {
	dst := t.Abs(p)
	tmp := tempName(filepath.Dir(dst))
	if err := os.Link(prod.t.Abs(prod.path), tmp); err != nil {
		return false
	}
	if err := os.Rename(tmp, dst); err != nil {
		os.Remove(tmp)
		return false
	}
	w.linked(t, p, prod)
	return true
}

// linked records that p of t became another name of prod's file.
func (w *guideWriter) linked(t Tree, p string, prod *product) {
	syncStep("hardlink", t.Abs(p))
	w.written(t, p, prod.dst.Size, prod.digest)
}

// copyProduct publishes at p of t the product of prod (whose SHA-256 is
// want) from prod's file, unless p holds it already: as another name of
// that file when it can (linkable), else as a copy. It returns false,
// with nothing written, when prod's file does not hold the product (any
// more): the caller makes it from the source.
func (w *guideWriter) copyProduct(t Tree, p string, prod *product) ([sha256.Size]byte, bool, error) {
	ft, from, want := prod.t, prod.path, prod.made.sum
	src, err := ft.FS.Open(ft.Abs(from))
	if err != nil {
		return want, false, nil
	}
	defer src.Close()
	fi, err := src.Stat()
	if err != nil {
		return want, false, nil
	}
	buf := make([]byte, CopyBufSize)
	h := sha256.New()
	same, _, err := sameContent(t, p, src, fi.Size(), h, buf)
	if err != nil {
		return want, false, nil
	}
	if same && sumOf(h) == want {
		w.res.Unchanged++
		return want, true, nil
	}
	if w.linkable(t, p, prod) && w.replaceByLink(t, p, prod) {
		return want, true, nil
	}
	var m hash.Hash
	hw := io.Writer(h)
	if w.isPublic(t) {
		m = md5.New()
		hw = io.MultiWriter(h, m)
	}
	var n int64
	err = t.writeFunc(p, func(out io.Writer) error {
		if _, err := src.Seek(0, io.SeekStart); err != nil {
			return err
		}
		h.Reset()
		if m != nil {
			m.Reset()
		}
		var err error
		if n, err = copyHashing(out, src, hw, buf, func() {}); err != nil {
			return err
		}
		if sumOf(h) != want {
			return errDiffers
		}
		return nil
	})
	if errors.Is(err, errDiffers) {
		return want, false, nil
	}
	if err != nil {
		return want, false, err
	}
	d := Digest{SHA256: want}
	if m != nil {
		m.Sum(d.MD5[:0])
	}
	w.written(t, p, n, d)
	return want, true, nil
}

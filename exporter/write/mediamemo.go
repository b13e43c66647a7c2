package write

import (
	"crypto/md5"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/exporter/media"
	"github.com/guidepub/guidepub/exporter/render"
)

// Media work done once (see docs/robustness.md#media-made-once). A media file
// is a function of its source's bytes and its transformation (a copy, a
// strip of its format, a rendition of a width, under the media rules of
// media.Version, fixed for a process): so
//
//   - within one export, the first file of a source and transformation
//     makes the product; every other destination of it (the same PDF in
//     five languages' folders) becomes another name of the first one's
//     file (a hard link: no bytes written or flushed again) when it is in
//     the same tree and the first file is still as made, unless it holds
//     the product already; otherwise it is copied from there, its SHA-256
//     checked against the product's (productShare, linkProduct,
//     copyProduct);
//   - across the exports of one Writer, a destination is left alone,
//     without reading its source or itself, when its source has the stamp
//     (size, modification and change times) it had when the product was
//     made and the destination the stamp it had once written or found
//     holding the product (mediaMemo). Anything else (a source changed or
//     replaced, a destination rewritten, touched or deleted) makes the
//     file again the ordinary way, which reads the source, re-checks it
//     did not change while read, and compares with what is there.
//
// The memo lives in memory: the first export of a process checks every
// file once, as before.

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

// made is a product: its source and transformation, the source's stamp
// when it was made, and its SHA-256.
type made struct {
	key mediaKey
	src stamp
	sum [sha256.Size]byte
}

// memoCap is how many files a mediaMemo remembers before it starts
// forgetting the least recently used half: about 100 bytes each, a few
// megabytes in all, whatever the number of guides a watcher serves.
const memoCap = 1 << 15

// mediaMemo is what a Writer made, by tree and path: for each file, a
// check of the product's source, transformation and stamps and of the
// file's stamp, and the product's SHA-256. It keeps two generations:
// when the current one is full it becomes the previous one, and a file
// found in the previous one moves to the current one.
type mediaMemo struct {
	mu        sync.Mutex
	cur, prev map[[16]byte]memoEntry
}

// memoEntry is what a mediaMemo keeps of one file.
type memoEntry struct {
	check [16]byte // memoCheck of the product and the file's stamp
	sum   [sha256.Size]byte
}

// memoPath names p of t in a mediaMemo.
func memoPath(t Tree, p string) [16]byte {
	h := sha256.Sum256([]byte(t.Root + "\x00" + p))
	return [16]byte(h[:16])
}

// memoCheck is what identifies the product m in a file of stamp dst.
func memoCheck(m made, dst stamp) [16]byte {
	b := []byte(m.key.src + "\x00" + string(m.key.format) + "\x00")
	b = binary.LittleEndian.AppendUint64(b, uint64(m.key.width))
	for _, s := range []stamp{m.src, dst} {
		b = binary.LittleEndian.AppendUint64(b, uint64(s.size))
		b = binary.LittleEndian.AppendUint64(b, uint64(s.mtime.UnixNano()))
		b = binary.LittleEndian.AppendUint64(b, uint64(s.ctime.UnixNano()))
	}
	b = append(b, m.sum[:]...)
	h := sha256.Sum256(b)
	return [16]byte(h[:16])
}

// holds reports whether p of t, of stamp dst, is known to hold the
// product of k made from a source of stamp src, and returns its SHA-256.
func (mm *mediaMemo) holds(t Tree, p string, k mediaKey, src, dst stamp) ([sha256.Size]byte, bool) {
	mm.mu.Lock()
	defer mm.mu.Unlock()
	id := memoPath(t, p)
	e, ok := mm.cur[id]
	if !ok {
		if e, ok = mm.prev[id]; ok {
			delete(mm.prev, id)
			mm.put(id, e)
		}
	}
	if !ok || memoCheck(made{key: k, src: src, sum: e.sum}, dst) != e.check {
		return [sha256.Size]byte{}, false
	}
	return e.sum, true
}

// set records that p of t, of stamp dst, holds the product m, or forgets
// p when m.key is zero.
func (mm *mediaMemo) set(t Tree, p string, m made, dst stamp) {
	mm.mu.Lock()
	defer mm.mu.Unlock()
	id := memoPath(t, p)
	delete(mm.prev, id)
	if m.key == (mediaKey{}) {
		delete(mm.cur, id)
		return
	}
	mm.put(id, memoEntry{check: memoCheck(m, dst), sum: m.sum})
}

// put adds e to the current generation, which becomes the previous one
// when full.
func (mm *mediaMemo) put(id [16]byte, e memoEntry) {
	if len(mm.cur) >= memoCap/2 {
		mm.prev, mm.cur = mm.cur, nil
	}
	if mm.cur == nil {
		mm.cur = map[[16]byte]memoEntry{}
	}
	mm.cur[id] = e
}

// sourceStamp returns the stamp of the bundle file of f, opened as the
// copy opens it (no symbolic link, no other hard link).
func sourceStamp(b *bundle.Bundle, f render.File) (stamp, error) {
	src, err := b.Open(f.Src)
	if err != nil {
		return stamp{}, err
	}
	defer src.Close()
	fi, err := src.Stat()
	if err != nil {
		return stamp{}, err
	}
	return stampOf(fi), nil
}

// destStamp returns the stamp of p in t, false when it is not a regular
// file.
func destStamp(t Tree, p string) (stamp, bool) {
	if checkPath(p) != nil {
		return stamp{}, false
	}
	fi, err := t.FS.Stat(t.Abs(p))
	if err != nil || !fi.Mode().IsRegular() {
		return stamp{}, false
	}
	return stampOf(fi), true
}

// productShare is what the files of one export made, by source and
// transformation: the first file of a key makes it, the others wait for
// it and link or copy its file.
type productShare struct {
	mu     sync.Mutex
	m      map[mediaKey]*product
	linked map[*product]bool // products given a name since the last restamp
}

// linkedTo records that name became another name of p's file.
func (ps *productShare) linkedTo(p *product, name string) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.linked == nil {
		ps.linked = map[*product]bool{}
	}
	ps.linked[p] = true
	p.names = append(p.names, name)
}

// restamp records again, in w's memo, every name of the products linked
// since the last call. A link changes the change time of the file, which
// every name shares, so the stamps recorded before it no longer match; it
// runs once the writes that could add names (a group of files) are done.
func (ps *productShare) restamp(w *guideWriter) {
	ps.mu.Lock()
	linked := ps.linked
	ps.linked = nil
	ps.mu.Unlock()
	for p := range linked {
		w.rememberMade(p.t, p.path, p.made)
		for _, name := range p.names {
			w.rememberMade(p.t, name, p.made)
		}
	}
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
	dst    stamp
	// names are the other names linked to path (under productShare.mu).
	names []string
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
// unless the memo shows it done, or another file of this export made the
// same product (copied from there); it records what p now holds.
func (w *guideWriter) putMedia(t Tree, b *bundle.Bundle, f render.File) ([sha256.Size]byte, error) {
	k := keyOf(b, f)
	srcNow, err := sourceStamp(b, f)
	if err != nil {
		return [sha256.Size]byte{}, err
	}
	memo := &w.e.memo
	if !w.e.Verifying() {
		if dst, ok := destStamp(t, f.Path); ok {
			if sum, ok := memo.holds(t, f.Path, k, srcNow, dst); ok {
				w.res.Unchanged++
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
	}
	memo.set(t, f.Path, made{}, stamp{}) // until it is known again
	var p *product
	first := true
	if w.share != nil {
		p, first = w.share.claim(k)
	}
	if !first {
		<-p.done
		if p.ok && p.made.src == srcNow {
			if sum, ok := w.linkProduct(t, f.Path, p); ok {
				return sum, nil
			}
			sum, ok, err := w.copyProduct(t, f.Path, p)
			if err != nil {
				return sum, err
			}
			if ok {
				w.rememberMade(t, f.Path, p.made)
				return sum, nil
			}
		}
	}
	w.srcMade = stamp{}
	sum, err := w.putSource(t, b, f)
	if err == nil && w.srcMade != (stamp{}) {
		m := made{key: k, src: w.srcMade, sum: sum}
		w.rememberMade(t, f.Path, m)
		if first && p != nil {
			p.ok, p.t, p.path, p.made = true, t, f.Path, m
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

// rememberMade records that p of t holds the product m, with p's stamp now.
func (w *guideWriter) rememberMade(t Tree, p string, m made) {
	dst, ok := destStamp(t, p)
	if !ok {
		return
	}
	w.e.memo.set(t, p, m, dst)
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
	return ok && now.size == prod.dst.size && now.mtime.Equal(prod.dst.mtime)
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
	w.share.linkedTo(prod, p)
	w.rememberMade(t, p, prod.made)
	w.written(t, p, prod.dst.size, prod.digest)
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

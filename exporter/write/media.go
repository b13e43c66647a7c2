package write

import (
	"bytes"
	"crypto/md5"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/exporter/ledger"
	"github.com/guidepub/guidepub/exporter/media"
	"github.com/guidepub/guidepub/exporter/render"
	"github.com/guidepub/guidepub/site"
)

// CopyBufSize is the size of the buffer a media copy streams through: the
// memory a copy needs, whatever the size of the file (see
// docs/robustness.md).
const CopyBufSize = 256 << 10

// errChanged is returned by a copy whose source changed while it was read.
var errChanged = errors.New("changed while being exported")

// MsgChanged is the problem of a media file that kept changing while it was
// exported: the bundle is rejected rather than publishing a file made of
// old and new bytes.
const MsgChanged = "changed while being exported (twice); export again once it is completely written"

// CopyHook, when set (by tests), runs after the first chunk of each media
// copy attempt has been read, so that a test can change the source file
// in the middle of a copy.
var CopyHook func(src string, attempt int)

// putSource publishes the bundle file f.Src at f.Path of t by streaming it
// (memory does not grow with the file's size) and returns the SHA-256 of
// what it published: a copy, or for a public image or PDF a copy without
// its private metadata, or a rendition (imagewrite.go). A destination that already holds the same bytes is
// left alone. When the source changes during the copy (its size, times or
// length read differ), the copy is discarded and tried once more; a second
// change rejects the bundle with a *bundle.Error (MsgChanged). Nothing
// partial or mixed is ever published. On success w.srcMade is the stamp of
// the source the file was made from.
func (w *guideWriter) putSource(t Tree, b *bundle.Bundle, f render.File) ([sha256.Size]byte, error) {
	var sum [sha256.Size]byte
	for attempt := range 2 {
		var (
			s   [sha256.Size]byte
			err error
		)
		switch {
		case f.Width > 0:
			s, err = w.renderMedia(t, b, f)
		case f.Format == media.PDF:
			s, err = w.rebuildPDF(t, b, f, attempt)
		case f.Format != "":
			s, err = w.stripMedia(t, b, f, attempt)
		default:
			s, err = w.copyMedia(t, b, f, attempt)
		}
		if errors.Is(err, errChanged) {
			continue
		}
		return s, err
	}
	return sum, &bundle.Error{Folder: b.Folder, Problems: []bundle.Problem{{File: b.Folder + "/" + f.Src, Message: MsgChanged}}}
}

// copyMedia is one attempt of putSource; it returns errChanged when the
// source changed while it was read.
func (w *guideWriter) copyMedia(t Tree, b *bundle.Bundle, f render.File, attempt int) ([sha256.Size]byte, error) {
	var sum [sha256.Size]byte
	src, err := b.Open(f.Src)
	if err != nil {
		return sum, err
	}
	defer src.Close()
	fi, err := src.Stat()
	if err != nil {
		return sum, fmt.Errorf("bundle %s: file %q: %w", b.Folder, f.Src, err)
	}
	before := ledger.StampOf(fi)
	buf := make([]byte, CopyBufSize)
	h := sha256.New()
	same, n, err := sameContent(t, f.Path, src, before.Size, h, buf)
	if err != nil {
		return sum, fmt.Errorf("bundle %s: file %q: %w", b.Folder, f.Src, err)
	}
	if CopyHook != nil {
		CopyHook(f.Src, attempt)
	}
	if same {
		if err := checkSame(src, before, n); err != nil {
			return sum, err
		}
		w.res.Unchanged++
		w.srcMade = before
		h.Sum(sum[:0])
		return sum, nil
	}
	var written int64
	// A public file's MD5, for the record, in the same pass as the SHA-256.
	var m hash.Hash
	hw := io.Writer(h)
	if w.isPublic(t) {
		m = md5.New()
		hw = io.MultiWriter(h, m)
	}
	err = t.writeFunc(f.Path, func(out io.Writer) error {
		if _, err := src.Seek(0, io.SeekStart); err != nil {
			return err
		}
		h.Reset()
		if m != nil {
			m.Reset()
		}
		n, err := copyHashing(out, src, hw, buf, func() {
			if CopyHook != nil {
				CopyHook(f.Src, attempt)
			}
		})
		if err != nil {
			return err
		}
		written = n
		return checkSame(src, before, n)
	})
	if err != nil {
		if errors.Is(err, errChanged) {
			return sum, errChanged
		}
		return sum, err
	}
	d := Digest{SHA256: sumOf(h)}
	if m != nil {
		m.Sum(d.MD5[:0])
	}
	w.written(t, f.Path, written, d)
	w.srcMade = before
	return d.SHA256, nil
}

// sumOf returns the SHA-256 h has computed.
func sumOf(h hash.Hash) [sha256.Size]byte {
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}

// checkSame returns errChanged unless src still has stamp before and n
// bytes were read of it.
func checkSame(src afero.File, before ledger.Stamp, n int64) error {
	fi, err := src.Stat()
	if err != nil {
		return err
	}
	if after := ledger.StampOf(fi); after != before || n != before.Size {
		return errChanged
	}
	return nil
}

// sameContent reports whether the file p of t holds exactly what src (of
// size bytes) holds, reading both in step and hashing src into h. It
// reads src only when p has the same size; n is how much of src it read.
func sameContent(t Tree, p string, src io.Reader, size int64, h hash.Hash, buf []byte) (same bool, n int64, err error) {
	if checkPath(p) != nil {
		return false, 0, nil
	}
	fi, err := t.FS.Stat(t.Abs(p))
	if err != nil || !fi.Mode().IsRegular() || fi.Size() != size {
		return false, 0, nil
	}
	dst, err := t.FS.Open(t.Abs(p))
	if err != nil {
		return false, 0, nil
	}
	defer dst.Close()
	half := len(buf) / 2
	a, d := buf[:half], buf[half:]
	for {
		k, rerr := io.ReadFull(src, a)
		if k > 0 {
			h.Write(a[:k])
			n += int64(k)
			if _, err := io.ReadFull(dst, d[:k]); err != nil || !bytes.Equal(a[:k], d[:k]) {
				return false, n, nil
			}
		}
		if rerr == io.EOF || rerr == io.ErrUnexpectedEOF {
			// dst must end here too.
			m, _ := dst.Read(d[:1])
			return m == 0, n, nil
		}
		if rerr != nil {
			return false, n, rerr
		}
	}
}

// copyHashing copies src to out through buf, hashing what it copies into
// h, and calls after once the first chunk is written.
func copyHashing(out io.Writer, src io.Reader, h io.Writer, buf []byte, after func()) (int64, error) {
	var n int64
	first := true
	for {
		k, rerr := src.Read(buf)
		if k > 0 {
			h.Write(buf[:k])
			if _, err := out.Write(buf[:k]); err != nil {
				return n, err
			}
			n += int64(k)
			if first {
				first = false
				after()
			}
		}
		if rerr == io.EOF {
			return n, nil
		}
		if rerr != nil {
			return n, rerr
		}
	}
}

// writeFunc replaces p with what fill writes, atomically as write does:
// the bytes go to an unnamed or temporary file that replaces p only when
// fill returns nil. fill may be called more than once (it must start over
// each time); its error is returned as is (wrapped).
func (t Tree) writeFunc(p string, fill func(io.Writer) error) error {
	if err := checkPath(p); err != nil {
		return err
	}
	dst := t.Abs(p)
	dir := filepath.Dir(dst)
	if err := t.FS.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create folder %s: %w", dir, err)
	}
	if _, ok := t.FS.(*afero.OsFs); ok {
		if _, err := os.Lstat(dst); errors.Is(err, fs.ErrNotExist) {
			done, err := createNewFunc(dst, t.Perm, fill)
			if err != nil {
				return fmt.Errorf("write %s: %w", dst, err)
			}
			if done {
				return nil
			}
		}
	}
	var (
		f   afero.File
		tmp string
		err error
	)
	for range 10 {
		tmp = tempName(dir)
		f, err = t.FS.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, t.Perm)
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", dst, err)
	}
	err = fill(f)
	if err == nil {
		err = syncFile(f, dst) // before the rename: see durable.go
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = t.FS.Rename(tmp, dst)
	}
	if err != nil {
		_ = t.FS.Remove(tmp)
		return fmt.Errorf("write %s: %w", dst, err)
	}
	syncStep("rename", dst)
	return nil
}

// tempName returns a new random temporary name in folder dir: a hidden
// name with site.TempPrefix, which RemoveStaleTemps removes after a kill.
func tempName(dir string) string {
	return filepath.Join(dir, site.TempPrefix+strconv.FormatUint(rand.Uint64(), 36))
}

package write

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"errors"
	"io"
	"sync/atomic"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/exporter/ledger"
	"github.com/guidepub/guidepub/exporter/media"
	"github.com/guidepub/guidepub/exporter/render"
)

// imageWork counts the images decoded to make renditions, for tests (an
// export of unchanged images decodes none).
var imageWork atomic.Int64

// ImagesDecoded returns how many images this process decoded to make
// renditions: an export of unchanged images adds none.
func ImagesDecoded() int64 { return imageWork.Load() }

// imageCache is what one guide's export keeps of the renditions it made:
// the renditions of the last source decoded (a photo's widths are
// published one after the other) and, by key, where each was published
// (another view publishing the same image copies it from there).
type imageCache struct {
	src        string
	renditions map[int][]byte
	published  map[string]string
}

// errDiffers stops a comparison at the first difference.
var errDiffers = errors.New("differs")

// compareWriter compares what is written to it with the content of a
// file, read in step.
type compareWriter struct {
	r   io.Reader
	buf []byte
}

func (c *compareWriter) Write(p []byte) (int, error) {
	if cap(c.buf) < len(p) {
		c.buf = make([]byte, len(p))
	}
	b := c.buf[:len(p)]
	if _, err := io.ReadFull(c.r, b); err != nil || !bytes.Equal(b, p) {
		return 0, errDiffers
	}
	return len(p), nil
}

// atEnd reports whether the compared file has nothing left.
func (c *compareWriter) atEnd() bool {
	var one [1]byte
	n, _ := c.r.Read(one[:])
	return n == 0
}

// produces reports whether the file p of t holds exactly what fill
// writes, and returns fill's error when fill fails for another reason than
// a difference. h gets what fill wrote up to the first difference.
func produces(t Tree, p string, h io.Writer, fill func(io.Writer) error) (bool, error) {
	if checkPath(p) != nil {
		return false, nil
	}
	dst, err := t.FS.Open(t.Abs(p))
	if err != nil {
		// Nothing to compare with: fill runs once, to write p.
		return false, nil
	}
	defer dst.Close()
	cw := &compareWriter{r: dst}
	err = fill(io.MultiWriter(cw, h))
	if errors.Is(err, errDiffers) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return cw.atEnd(), nil
}

// rejectFile returns the *bundle.Error of the bundle file rel whose
// content is broken: err's message follows "the file is ".
func rejectFile(b *bundle.Bundle, rel string, err error) error {
	return &bundle.Error{Folder: b.Folder, Problems: []bundle.Problem{{File: b.Folder + "/" + rel, Message: "the file is " + err.Error()}}}
}

// stripMedia is putSource for a public image: it publishes the bundle
// image f.Src without its private metadata (media.Strip), unless f.Path
// already holds exactly that. A source that changes while it is read is
// errChanged; one that is not a well-formed image rejects the bundle.
func (w *guideWriter) stripMedia(t Tree, b *bundle.Bundle, f render.File, attempt int) ([sha256.Size]byte, error) {
	var sum [sha256.Size]byte
	src, before, err := w.openSource(b, f)
	if err != nil {
		return sum, err
	}
	defer src.Close()
	h := sha256.New()
	strip := func(out io.Writer) error {
		if _, err := src.Seek(0, io.SeekStart); err != nil {
			return err
		}
		h.Reset()
		in := &hookReader{r: src, after: func() {
			if CopyHook != nil {
				CopyHook(f.Src, attempt)
			}
		}}
		if _, err := media.Strip(io.MultiWriter(out, h), in, f.Format); err != nil {
			if errors.Is(err, errDiffers) {
				return err
			}
			if cerr := checkSame(src, before, before.Size); cerr != nil {
				return cerr
			}
			return rejectFile(b, f.Src, err)
		}
		return checkSame(src, before, before.Size)
	}
	same, err := produces(t, f.Path, io.Discard, strip)
	if err != nil {
		return sum, err
	}
	if same {
		w.res.Unchanged++
		w.srcMade = before
		h.Sum(sum[:0])
		return sum, nil
	}
	var cw countWriter
	m := md5.New() // for the record (a public image), in the same pass as the SHA-256
	if err := t.writeFunc(f.Path, func(out io.Writer) error {
		cw = countWriter{w: out}
		m.Reset()
		return strip(io.MultiWriter(&cw, m))
	}); err != nil {
		var be *bundle.Error
		if errors.Is(err, errChanged) {
			return sum, errChanged
		}
		if errors.As(err, &be) {
			return sum, be
		}
		return sum, err
	}
	d := Digest{SHA256: sumOf(h)}
	m.Sum(d.MD5[:0])
	w.written(t, f.Path, cw.n, d)
	w.srcMade = before
	return d.SHA256, nil
}

// rebuildPDF is putSource for a public PDF: it publishes the bundle PDF
// f.Src rebuilt from what its pages draw (media.RebuildPDF). The document
// is read and rebuilt in memory (the parser holds all of it anyway) and written like
// a document, so that it is parsed once; the rewrite is a decode
// (decodes.go): it takes its share of the memory budget and one of the
// Jobs slots, and is recorded. A source that changes while it is read is
// errChanged; one that does not parse rejects the bundle.
func (w *guideWriter) rebuildPDF(t Tree, b *bundle.Bundle, f render.File, attempt int) ([sha256.Size]byte, error) {
	var sum [sha256.Size]byte
	src, before, err := w.openSource(b, f)
	if err != nil {
		return sum, err
	}
	defer src.Close()
	in := &hookReader{r: src, after: func() {
		if CopyHook != nil {
			CopyHook(f.Src, attempt)
		}
	}}
	data, err := io.ReadAll(io.LimitReader(in, before.Size+1))
	if err != nil {
		return sum, err
	}
	if err := checkSame(src, before, int64(len(data))); err != nil {
		return sum, err
	}
	var out bytes.Buffer
	err = w.decode(context.Background(), b, f.Src, sha256.Sum256(data), b.Media[f.Src].Decode, func() error {
		w.e.cpu <- struct{}{}
		defer func() { <-w.e.cpu }()
		if err := media.RebuildPDF(&out, data, b.Media[f.Src].Decode.Bytes); err != nil {
			return rejectFile(b, f.Src, err)
		}
		return nil
	})
	if err != nil {
		return sum, err
	}
	if err := w.write(t, f.Path, out.Bytes()); err != nil {
		return sum, err
	}
	w.srcMade = before
	return sha256.Sum256(out.Bytes()), nil
}

// openSource opens the bundle file of f and returns its stamp.
func (w *guideWriter) openSource(b *bundle.Bundle, f render.File) (afero.File, ledger.Stamp, error) {
	src, err := b.Open(f.Src)
	if err != nil {
		return nil, ledger.Stamp{}, err
	}
	fi, err := src.Stat()
	if err != nil {
		src.Close()
		return nil, ledger.Stamp{}, err
	}
	return src, ledger.StampOf(fi), nil
}

// renderMedia is putSource for a rendition: the published file is up to
// date when it carries the key of the source's content and width
// (media.RenditionKey); otherwise it is copied from the same rendition
// published earlier in this export, or made.
func (w *guideWriter) renderMedia(t Tree, b *bundle.Bundle, f render.File) ([sha256.Size]byte, error) {
	var sum [sha256.Size]byte
	src, before, err := w.openSource(b, f)
	if err != nil {
		return sum, err
	}
	defer src.Close()
	h := sha256.New()
	if _, err := io.Copy(h, src); err != nil {
		return sum, err
	}
	if err := checkSame(src, before, before.Size); err != nil {
		return sum, err
	}
	var srcSum [sha256.Size]byte
	h.Sum(srcSum[:0])
	key := media.RenditionKey(srcSum, f.Width)
	if old, err := t.Read(f.Path); err == nil && media.KeyOf(old) == key {
		w.res.Unchanged++
		w.remember(key, f.Path)
		w.srcMade = before
		return sha256.Sum256(old), nil
	}
	c := w.cache()
	data := c.renditions[f.Width]
	if c.src != f.Src || data == nil || media.KeyOf(data) != key {
		data = nil
		if p, ok := c.published[key]; ok {
			if d, err := t.Read(p); err == nil && media.KeyOf(d) == key {
				data = d
			}
		}
	}
	if data == nil {
		if data, err = w.makeRenditions(b, f, src, srcSum, key); err != nil {
			return sum, err
		}
	}
	if err := w.write(t, f.Path, data); err != nil {
		return sum, err
	}
	w.remember(key, f.Path)
	w.srcMade = before
	return sha256.Sum256(data), nil
}

func (w *guideWriter) cache() *imageCache {
	if w.images == nil {
		w.images = &imageCache{published: map[string]string{}}
	}
	return w.images
}

func (w *guideWriter) remember(key, p string) { w.cache().published[key] = p }

// makeRenditions decodes the source of f once and makes every rendition
// width of it, keeping them for the next files; it returns f's. Decoding
// is a decode (decodes.go): it waits for its share of the memory budget,
// takes one of the Jobs slots and is recorded.
func (w *guideWriter) makeRenditions(b *bundle.Bundle, f render.File, src afero.File, srcSum [sha256.Size]byte, key string) ([]byte, error) {
	info := b.Media[f.Src]
	widths := media.RenditionWidths(info.Width)
	desc := make([]int, len(widths))
	for i, wd := range widths {
		desc[len(widths)-1-i] = wd
	}
	// What the stripped original keeps for display, the renditions keep.
	kept, err := media.Strip(io.Discard, seekStart(src), info.Format)
	if err != nil {
		return nil, rejectFile(b, f.Src, err)
	}
	if _, err := src.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	out := map[int][]byte{}
	err = w.decode(context.Background(), b, f.Src, srcSum, info.Decode, func() error {
		w.e.cpu <- struct{}{}
		defer func() { <-w.e.cpu }()
		imageWork.Add(1)
		err := media.Renditions(src, info.Format, srcSum, kept, desc, w.e.limits.ImagePixels, func(width, _ int, data []byte) error {
			out[width] = data
			return nil
		})
		if err != nil {
			return rejectFile(b, f.Src, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	c := w.cache()
	c.src, c.renditions = f.Src, out
	data := out[f.Width]
	if media.KeyOf(data) != key {
		return nil, rejectFile(b, f.Src, errors.New("an image whose rendition could not be made"))
	}
	return data, nil
}

// seekStart returns r read from its start.
func seekStart(r io.ReadSeeker) io.Reader {
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return bytes.NewReader(nil)
	}
	return r
}

// hookReader calls after once, after its first read that returned data.
type hookReader struct {
	r     io.Reader
	after func()
	done  bool
}

func (h *hookReader) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	if n > 0 && !h.done {
		h.done = true
		h.after()
	}
	return n, err
}

// countWriter counts what it passes on.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

package site

import (
	"bytes"
	"fmt"
	"io"
	"sync"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// Encode appends src compressed with e to dst and returns the result.
// Compression uses the smallest output each format offers, since a
// document is compressed once and served many times: brotli quality 11
// with the smallest window that holds src, gzip level 9, zstd's best
// level. Encoders are pooled; Encode is safe for concurrent use. Identity
// appends src unchanged. It returns an error for a value without a codec.
func (e Encoding) Encode(dst, src []byte) ([]byte, error) {
	if e.c == nil {
		return nil, fmt.Errorf("unknown encoding %q", e.Name)
	}
	return e.c.encode(dst, src, final)
}

// EncodeQuick is Encode at each format's fast setting (brotli quality
// 4, gzip level 1, zstd's fastest level): a few times less CPU for output
// a few percent larger, decoded by every client the same way. The
// exporter publishes a changed document's siblings with it first and
// replaces them with Encode's bytes soon after (docs/output.md, "Quick
// siblings"), so that an upload is served before its slowest work is
// done.
func (e Encoding) EncodeQuick(dst, src []byte) ([]byte, error) {
	if e.c == nil {
		return nil, fmt.Errorf("unknown encoding %q", e.Name)
	}
	return e.c.encode(dst, src, quick)
}

// effort is how hard a codec compresses: final (the smallest output) or
// quick (the fastest).
type effort int

const (
	final effort = iota
	quick
	efforts
)

// NewReader returns a reader of r decoded with e, and the function that
// gives its decoder back to the pool once the reader is no longer used
// (call it exactly once, after the last Read). Decoders are pooled: a
// brotli or zstd decoder allocates its window, and the server checks a
// sibling per document it loads. Identity returns r itself. It returns an
// error (and no function) for a value without a codec or a stream whose
// header does not decode.
func (e Encoding) NewReader(r io.Reader) (io.Reader, func(), error) {
	if e.c == nil {
		return nil, nil, fmt.Errorf("unknown encoding %q", e.Name)
	}
	return e.c.newReader(r)
}

// codec compresses and decompresses one encoding.
type codec interface {
	encode(dst, src []byte, e effort) ([]byte, error)
	newReader(r io.Reader) (io.Reader, func(), error)
}

var (
	brotliCodec = &brotliPools{}
	gzipCodec   = &gzipPools{}
	zstdCodec   = &zstdPools{}
)

// identityCodec is Identity's codec: bytes pass unchanged.
type identityCodec struct{}

func (identityCodec) encode(dst, src []byte, _ effort) ([]byte, error) {
	return append(dst, src...), nil
}

func (identityCodec) newReader(r io.Reader) (io.Reader, func(), error) { return r, func() {}, nil }

// Brotli quality by effort: the highest, and a fast one.
var brotliQuality = [efforts]int{final: 11, quick: 4}

// Brotli window bits: a window just large enough for the document gives
// the same compression as the largest one, and a quality-11 encoder's
// memory grows with its window (8 bytes per window byte), so each document
// gets the smallest window that holds it.
const (
	minBrotliWindow = 16
	maxBrotliWindow = 22
)

// brotliWindow returns the window bits for a document of n bytes.
func brotliWindow(n int) int {
	lg := minBrotliWindow
	for lg < maxBrotliWindow && (1<<lg)-16 < n {
		lg++
	}
	return lg
}

type brotliPools struct {
	writers [efforts][maxBrotliWindow + 1]sync.Pool // *brotli.Writer by effort and window bits
	readers sync.Pool                               // *brotli.Reader
}

func (p *brotliPools) encode(dst, src []byte, e effort) ([]byte, error) {
	buf := bytes.NewBuffer(dst)
	lg := brotliWindow(len(src))
	pool := &p.writers[e][lg]
	w, _ := pool.Get().(*brotli.Writer)
	if w == nil {
		w = brotli.NewWriterOptions(buf, brotli.WriterOptions{Quality: brotliQuality[e], LGWin: lg})
	} else {
		w.Reset(buf)
	}
	defer pool.Put(w)
	if _, err := w.Write(src); err != nil {
		return nil, fmt.Errorf("brotli: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("brotli: %w", err)
	}
	return buf.Bytes(), nil
}

func (p *brotliPools) newReader(r io.Reader) (io.Reader, func(), error) {
	br, _ := p.readers.Get().(*brotli.Reader)
	if br == nil {
		br = brotli.NewReader(r)
	} else if err := br.Reset(r); err != nil {
		return nil, nil, err
	}
	return br, func() { p.readers.Put(br) }, nil
}

// gzip level by effort: the highest, and the fastest.
var gzipLevel = [efforts]int{final: gzip.BestCompression, quick: gzip.BestSpeed}

type gzipPools struct {
	writers [efforts]sync.Pool // *gzip.Writer by effort
	readers sync.Pool          // *gzip.Reader
}

func (p *gzipPools) encode(dst, src []byte, e effort) ([]byte, error) {
	buf := bytes.NewBuffer(dst)
	pool := &p.writers[e]
	w, _ := pool.Get().(*gzip.Writer)
	if w == nil {
		var err error
		if w, err = gzip.NewWriterLevel(buf, gzipLevel[e]); err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
	} else {
		w.Reset(buf)
	}
	defer pool.Put(w)
	if _, err := w.Write(src); err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	return buf.Bytes(), nil
}

func (p *gzipPools) newReader(r io.Reader) (io.Reader, func(), error) {
	g, _ := p.readers.Get().(*gzip.Reader)
	var err error
	if g == nil {
		g, err = gzip.NewReader(r)
	} else {
		err = g.Reset(r)
	}
	if err != nil {
		return nil, nil, err
	}
	return g, func() { p.readers.Put(g) }, nil
}

// Zstd level by effort: the best, and the fastest.
var zstdLevel = [efforts]zstd.EncoderLevel{final: zstd.SpeedBestCompression, quick: zstd.SpeedFastest}

type zstdPools struct {
	// encoders, by effort, one encode at a time each. An encoder at the
	// best level holds about 34 MB of match tables (their size is the
	// library's), so they are pooled as the other codecs' writers are:
	// the garbage collector drops those left unused, and a process at
	// rest does not keep them (it kept 100 MB of them for good before).
	encoders [efforts]sync.Pool // *zstd.Encoder
	readers  sync.Pool          // *zstd.Decoder, one stream at a time, low memory
}

func (p *zstdPools) encode(dst, src []byte, e effort) ([]byte, error) {
	enc, _ := p.encoders[e].Get().(*zstd.Encoder)
	if enc == nil {
		var err error
		if enc, err = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstdLevel[e]), zstd.WithEncoderConcurrency(1)); err != nil {
			return nil, fmt.Errorf("zstd encoder: %w", err)
		}
	}
	defer p.encoders[e].Put(enc)
	return enc.EncodeAll(src, dst), nil
}

// maxZstdWindow is the largest window a zstd frame may ask of a decoder.
const maxZstdWindow = 64 << 20

func (p *zstdPools) newReader(r io.Reader) (io.Reader, func(), error) {
	d, _ := p.readers.Get().(*zstd.Decoder)
	if d == nil {
		var err error
		// A frame asking for a window larger than any our encoder writes
		// (8 MiB at its best level) is refused, not allocated.
		if d, err = zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true), zstd.WithDecoderMaxWindow(maxZstdWindow)); err != nil {
			return nil, nil, err
		}
	} else if err := d.Reset(r); err != nil {
		return nil, nil, err
	}
	return d, func() { d.Reset(nil); p.readers.Put(d) }, nil
}

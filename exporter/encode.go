package exporter

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"runtime"
	"sync"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/guidepub/guidepub/site"
)

// Compression settings: the smallest output each format offers, since a
// document is compressed once and served many times.
const (
	brotliQuality = 11
	gzipLevel     = gzip.BestCompression
)

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

// smallDoc is the size up to which compressed documents are kept for the
// life of a Compressor: such documents ({"status":"ready"} and the like)
// repeat across guides, larger ones rarely do.
const (
	smallDoc      = 1024
	maxSmallCache = 4096
)

// Compressor precompresses documents in the supported encodings. Encoders
// are reused; identical small documents are compressed once. It is safe
// for concurrent use.
type Compressor struct {
	br   [maxBrotliWindow + 1]sync.Pool // *brotli.Writer by window bits
	gz   sync.Pool                      // *gzip.Writer
	zstd *zstd.Encoder

	mu    sync.Mutex
	cache map[cacheKey][]byte
}

type cacheKey struct {
	sum [sha256.Size]byte
	enc string
}

// NewCompressor returns a Compressor. It returns an error only when the
// zstd encoder cannot be built.
func NewCompressor() (*Compressor, error) {
	z, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBestCompression), zstd.WithEncoderConcurrency(runtime.GOMAXPROCS(0)))
	if err != nil {
		return nil, fmt.Errorf("zstd encoder: %w", err)
	}
	return &Compressor{zstd: z, cache: map[cacheKey][]byte{}}, nil
}

// Compress returns data compressed with enc. The result must not be
// modified. It returns an error for an unknown encoding.
func (c *Compressor) Compress(enc site.Encoding, data []byte) ([]byte, error) {
	var key cacheKey
	small := len(data) <= smallDoc
	if small {
		key = cacheKey{sha256.Sum256(data), enc.Name}
		c.mu.Lock()
		out, ok := c.cache[key]
		c.mu.Unlock()
		if ok {
			return out, nil
		}
	}
	out, err := c.compress(enc, data)
	if err != nil {
		return nil, err
	}
	if small {
		c.mu.Lock()
		if len(c.cache) < maxSmallCache {
			c.cache[key] = out
		}
		c.mu.Unlock()
	}
	return out, nil
}

func (c *Compressor) compress(enc site.Encoding, data []byte) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(len(data)/3 + 64)
	switch enc.Name {
	case site.Brotli.Name:
		lg := brotliWindow(len(data))
		w, _ := c.br[lg].Get().(*brotli.Writer)
		if w == nil {
			w = brotli.NewWriterOptions(&buf, brotli.WriterOptions{Quality: brotliQuality, LGWin: lg})
		} else {
			w.Reset(&buf)
		}
		defer c.br[lg].Put(w)
		if _, err := w.Write(data); err != nil {
			return nil, fmt.Errorf("brotli: %w", err)
		}
		if err := w.Close(); err != nil {
			return nil, fmt.Errorf("brotli: %w", err)
		}
	case site.Gzip.Name:
		w, _ := c.gz.Get().(*gzip.Writer)
		if w == nil {
			var err error
			if w, err = gzip.NewWriterLevel(&buf, gzipLevel); err != nil {
				return nil, fmt.Errorf("gzip: %w", err)
			}
		} else {
			w.Reset(&buf)
		}
		defer c.gz.Put(w)
		if _, err := w.Write(data); err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		if err := w.Close(); err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
	case site.Zstd.Name:
		return c.zstd.EncodeAll(data, make([]byte, 0, len(data)/3+64)), nil
	default:
		return nil, fmt.Errorf("unknown encoding %q", enc.Name)
	}
	return buf.Bytes(), nil
}

package write

import (
	"crypto/sha256"
	"sync"

	"github.com/guidepub/guidepub/site"
)

// SmallDoc is the size up to which compressed documents are kept for the
// life of a Compressor: such documents ({"status":"ready"} and the like)
// repeat across guides, larger ones rarely do.
const (
	SmallDoc      = 1024
	maxSmallCache = 4096
)

// Compressor precompresses documents in the supported encodings with
// site.Encoding.Encode (whose settings and pooled encoders are the only
// ones guidepub uses), and compresses identical small documents once. It
// is safe for concurrent use.
type Compressor struct {
	mu    sync.Mutex
	cache map[cacheKey][]byte
}

type cacheKey struct {
	sum   [sha256.Size]byte
	enc   string
	quick bool
}

// NewCompressor returns a Compressor with an empty cache.
func NewCompressor() *Compressor {
	return &Compressor{cache: map[cacheKey][]byte{}}
}

// Compress returns data compressed with enc: with enc.EncodeQuick when
// quick, else enc.Encode. The result must not be modified. It returns an
// error for an unknown encoding.
func (c *Compressor) Compress(enc site.Encoding, data []byte, quick bool) ([]byte, error) {
	var key cacheKey
	small := len(data) <= SmallDoc
	if small {
		key = cacheKey{sha256.Sum256(data), enc.Name, quick}
		c.mu.Lock()
		out, ok := c.cache[key]
		c.mu.Unlock()
		if ok {
			return out, nil
		}
	}
	encode := enc.Encode
	if quick {
		encode = enc.EncodeQuick
	}
	out, err := encode(make([]byte, 0, len(data)/3+64), data)
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

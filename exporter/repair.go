package exporter

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/site"
)

// processStart is when this process started, as the file system's clock
// sees it: a temporary file last written before it belongs to no write in
// progress of this process (see docs/robustness.md).
var processStart = time.Now()

// RemoveStaleTemps deletes the temporary files an exporter killed in the
// middle of a write left behind in the public and private trees: regular
// files whose name starts with site.TempPrefix, last modified before this
// process started. Files of writes in progress (by this process, or
// another one writing right now) are newer and stay. It returns how many
// it deleted, and an error when a tree cannot be walked or a file deleted.
// ExportAll calls it first.
func (e *Exporter) RemoveStaleTemps() (int, error) {
	n := 0
	var errs []error
	for _, t := range []tree{e.pub, e.priv} {
		k, err := t.removeStaleTemps(processStart)
		n += k
		if err != nil {
			errs = append(errs, err)
		}
	}
	return n, errors.Join(errs...)
}

// removeStaleTemps deletes the temporary files of t last modified before
// cutoff, and returns how many.
func (t tree) removeStaleTemps(cutoff time.Time) (int, error) {
	if _, err := t.fs.Stat(t.root); errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	n := 0
	err := afero.Walk(t.fs, t.root, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // deleted meanwhile
			}
			return err
		}
		if !fi.Mode().IsRegular() || !strings.HasPrefix(fi.Name(), site.TempPrefix) || !fi.ModTime().Before(cutoff) {
			return nil
		}
		if err := t.fs.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		n++
		return nil
	})
	if err != nil {
		return n, fmt.Errorf("remove stale temporary files under %s: %w", t.root, err)
	}
	return n, nil
}

// encodingsAgree reports whether every published document of mg has
// compressed siblings that decode to exactly the document: a write killed
// between a document's siblings and the document itself leaves some
// siblings holding other content, which a client accepting that encoding
// would get (see docs/robustness.md).
func (e *Exporter) encodingsAgree(mg *site.ManifestGuide) bool {
	for _, p := range mg.Files {
		if !site.IsDocument(p) {
			continue
		}
		data, err := e.pub.read(p)
		if err != nil {
			return false
		}
		for _, enc := range e.cfg.Encodings {
			if !e.pub.siblingAgrees(p, enc, data) {
				return false
			}
		}
	}
	return true
}

// siblingAgrees reports whether the compressed sibling of document p in
// encoding enc exists and decodes to data.
func (t tree) siblingAgrees(p string, enc site.Encoding, data []byte) bool {
	z, err := t.read(p + enc.Ext)
	if err != nil {
		return false
	}
	got, err := decodeSibling(enc, z, len(data))
	return err == nil && bytes.Equal(got, data)
}

// zstdDecoder is shared by every decodeSibling call (DecodeAll is safe
// for concurrent use).
var zstdDecoder = sync.OnceValues(func() (*zstd.Decoder, error) {
	return zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(1<<30))
})

// decodeSibling returns z decoded from enc, reading at most limit+1 bytes
// so that a sibling larger than its document is caught without decoding
// it all.
func decodeSibling(enc site.Encoding, z []byte, limit int) ([]byte, error) {
	var r io.Reader
	switch enc.Name {
	case site.Brotli.Name:
		r = brotli.NewReader(bytes.NewReader(z))
	case site.Gzip.Name:
		zr, err := gzip.NewReader(bytes.NewReader(z))
		if err != nil {
			return nil, err
		}
		r = zr
	case site.Zstd.Name:
		d, err := zstdDecoder()
		if err != nil {
			return nil, err
		}
		out, err := d.DecodeAll(z, make([]byte, 0, limit+1))
		if err != nil {
			return nil, err
		}
		return out, nil
	default:
		return nil, fmt.Errorf("unknown encoding %q", enc.Name)
	}
	return io.ReadAll(io.LimitReader(r, int64(limit)+1))
}

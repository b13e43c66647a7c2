package serve

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"
	kgzip "github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/site"
)

// compress returns data compressed with enc, using the same libraries and
// settings the exporter uses.
func compress(t testing.TB, enc site.Encoding, data []byte) []byte {
	t.Helper()
	out, err := compressLevel(enc, data, false)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// compressLevel compresses data with enc at the exporter's best levels, or
// at middle ones when fast: generated benchmark trees need realistic
// sizes, not the best compression.
func compressLevel(enc site.Encoding, data []byte, fast bool) ([]byte, error) {
	var buf bytes.Buffer
	var w io.WriteCloser
	var err error
	switch {
	case enc == site.Brotli && fast:
		w = brotli.NewWriterLevel(&buf, 6)
	case enc == site.Brotli:
		w = brotli.NewWriterLevel(&buf, 9)
	case enc == site.Zstd && fast:
		w, err = zstd.NewWriter(&buf)
	case enc == site.Zstd:
		w, err = zstd.NewWriter(&buf, zstd.WithEncoderLevel(zstd.SpeedBestCompression))
	case enc == site.Gzip && fast:
		w, err = kgzip.NewWriterLevel(&buf, 6)
	case enc == site.Gzip:
		w, err = kgzip.NewWriterLevel(&buf, kgzip.BestCompression)
	default:
		return nil, fmt.Errorf("unknown encoding %v", enc)
	}
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(data); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// decompress undoes compress for the Content-Encoding token name ("" for
// identity), with decoders independent of the ones compress uses where the
// standard library has one.
func decompress(t testing.TB, name string, data []byte) []byte {
	t.Helper()
	out, err := tryDecompress(name, data)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// tryDecompress is decompress for goroutines other than the test's, which
// may not call t.Fatal.
func tryDecompress(name string, data []byte) ([]byte, error) {
	var r io.Reader
	switch name {
	case "":
		return data, nil
	case "br":
		r = brotli.NewReader(bytes.NewReader(data))
	case "zstd":
		d, err := zstd.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, err
		}
		defer d.Close()
		r = d
	case "gzip":
		g, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, err
		}
		r = g
	default:
		return nil, fmt.Errorf("unexpected Content-Encoding %q", name)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("decompress %s: %w", name, err)
	}
	return out, nil
}

// testTree describes the files writeTree makes.
type testTree struct {
	docs  map[string][]byte // document path → identity JSON
	media map[string][]byte
}

// summaryJSON returns a summary document of about n bytes.
func summaryJSON(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"status":"ready","summary":{"measurementStandard":"ansi","buildings":[`)
	for i := 0; b.Len() < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":%d,"name":"Building %d","finishedAreaTotal":%d.5,"isMainBuilding":%t,"floors":[]}`, i, i, 100000+i*37, i == 0)
	}
	b.WriteString(`]}}`)
	return []byte(b.String())
}

// mediaBytes returns n deterministic bytes that do not compress.
func mediaBytes(n int) []byte {
	out := make([]byte, n)
	x := uint32(2463534242)
	for i := range out {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		out[i] = byte(x)
	}
	return out
}

// newTestTree returns the tree most tests serve: view v1 with every
// document and all three siblings, except reso/autofill which has only a
// .gz sibling; a small and a large media file; and files that must never
// be served (a temp file, dot-files, a stray sibling without a document).
func newTestTree() testTree {
	return testTree{
		docs: map[string][]byte{
			"v1/data/status":    []byte(`{"status":"ready"}`),
			"v1/data/summary":   summaryJSON(20000),
			"v1/reso/autofill":  []byte(`{"@reso.context":"urn:reso:metadata:1.7:resource:property","value":[{"City":"Toronto"}]}`),
			"alias/data/status": []byte(`{"status":"ready"}`),
		},
		media: map[string][]byte{
			"v1/doc/plan.pdf":  mediaBytes(3000),
			"v1/doc/photo.jpg": mediaBytes(200 << 10),
			"v1/doc/file.gz":   mediaBytes(100), // a media file may end in .gz
		},
	}
}

// write writes the tree under root of fsys: documents with their siblings
// (reso/autofill gets only .gz), media, and files that must not be served.
func (tt testTree) write(t testing.TB, fsys afero.Fs, root string) {
	t.Helper()
	put := func(name string, data []byte) {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := fsys.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := afero.WriteFile(fsys, p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, data := range tt.docs {
		put(name, data)
		for _, enc := range site.Encodings {
			if strings.HasSuffix(name, site.AutofillFile) && enc != site.Gzip {
				continue
			}
			put(name+enc.Ext, compress(t, enc, data))
		}
	}
	for name, data := range tt.media {
		put(name, data)
	}
	put("v1/data/.tmp-x", []byte(`{"status":"half-written"}`))
	put(".hidden", []byte("secret"))
	put("v1/.git/config", []byte("secret"))
	put("v2/data/status.br", compress(t, site.Brotli, []byte(`{"status":"orphan"}`)))
}

// osTree writes tt to a fresh temp dir and returns the root; next to root
// it leaves a file "secret" that a path escaping the root would reach, and
// inside it a symbolic link v1/doc/link.jpg pointing at that file.
func osTree(t testing.TB, tt testTree) string {
	t.Helper()
	dir := t.TempDir()
	root := filepath.Join(dir, "public")
	tt.write(t, afero.NewOsFs(), root)
	secret := filepath.Join(dir, "secret")
	if err := os.WriteFile(secret, []byte("outside the root"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(root, "v1", "doc", "link.jpg")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir), filepath.Join(root, "v1", "up")); err != nil {
		t.Fatal(err)
	}
	return root
}

// testConfig returns DefaultConfig changed by each of mods in turn.
func testConfig(mods ...func(*Config)) Config {
	c := DefaultConfig()
	for _, m := range mods {
		m(&c)
	}
	return c
}

// noWatch is a testConfig modifier: the tree is not watched.
func noWatch(c *Config) { c.NoWatch = true }

// smallFileLimit is a testConfig modifier setting Config.SmallFileLimit.
func smallFileLimit(n int64) func(*Config) { return func(c *Config) { c.SmallFileLimit = n } }

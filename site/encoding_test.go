package site

import (
	"bytes"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// encodingInputs are documents of several sizes: empty, small, and past
// the smallest brotli window.
func encodingInputs() [][]byte {
	big := []byte(strings.Repeat(`{"room":"Living room","area":23.5,"level":1},`, 3000))
	return [][]byte{{}, []byte(`{"status":"ready"}`), big}
}

func TestEncodeRoundTrip(t *testing.T) {
	for _, enc := range append(slices.Clone(Encodings), Identity) {
		for _, in := range encodingInputs() {
			prefix := []byte("prefix")
			z, err := enc.Encode(slices.Clone(prefix), in)
			if err != nil {
				t.Fatalf("%s: Encode: %v", enc.Name, err)
			}
			if !bytes.HasPrefix(z, prefix) {
				t.Fatalf("%s: Encode lost dst", enc.Name)
			}
			// Twice: the second read takes its decoder from the pool.
			for range 2 {
				r, release, err := enc.NewReader(bytes.NewReader(z[len(prefix):]))
				if err != nil {
					t.Fatalf("%s: NewReader: %v", enc.Name, err)
				}
				got, err := io.ReadAll(r)
				release()
				if err != nil || !bytes.Equal(got, in) {
					t.Fatalf("%s: decoded %d bytes, %v; want %d", enc.Name, len(got), err, len(in))
				}
			}
		}
	}
}

// TestEncodeSettings pins the compression settings: the exporter's output
// (and its golden files) depend on every byte.
func TestEncodeSettings(t *testing.T) {
	for _, in := range encodingInputs() {
		var br bytes.Buffer
		w := brotli.NewWriterOptions(&br, brotli.WriterOptions{Quality: 11, LGWin: brotliWindow(len(in))})
		w.Write(in)
		w.Close()
		var gz bytes.Buffer
		g, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
		g.Write(in)
		g.Close()
		zw, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBestCompression))
		if err != nil {
			t.Fatal(err)
		}
		for enc, want := range map[Encoding][]byte{Brotli: br.Bytes(), Gzip: gz.Bytes(), Zstd: zw.EncodeAll(in, nil)} {
			got, err := enc.Encode(nil, in)
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("%s of %d bytes: %d bytes, %v; want the %d of the documented settings", enc.Name, len(in), len(got), err, len(want))
			}
		}
	}
	for _, tc := range []struct{ n, lg int }{{0, 16}, {1 << 16, 17}, {1<<16 - 16, 16}, {1 << 22, 22}, {1 << 30, 22}} {
		if got := brotliWindow(tc.n); got != tc.lg {
			t.Errorf("brotliWindow(%d) = %d, want %d", tc.n, got, tc.lg)
		}
	}
}

func TestEncodeConcurrent(t *testing.T) {
	in := encodingInputs()[2]
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			enc := Encodings[i%len(Encodings)]
			z, err := enc.Encode(nil, in)
			if err != nil {
				t.Error(err)
				return
			}
			r, release, err := enc.NewReader(bytes.NewReader(z))
			if err != nil {
				t.Error(err)
				return
			}
			defer release()
			if got, err := io.ReadAll(r); err != nil || !bytes.Equal(got, in) {
				t.Errorf("%s: round trip failed: %v", enc.Name, err)
			}
		})
	}
	wg.Wait()
}

func TestEncodingWithoutCodec(t *testing.T) {
	lzma := Encoding{Name: "lzma", Ext: ".xz"}
	if _, err := lzma.Encode(nil, []byte("x")); err == nil {
		t.Error("Encode of an unknown encoding succeeded")
	}
	if _, _, err := lzma.NewReader(strings.NewReader("x")); err == nil {
		t.Error("NewReader of an unknown encoding succeeded")
	}
	if _, _, err := Gzip.NewReader(strings.NewReader("not gzip")); err == nil {
		t.Error("NewReader accepted a stream that is not gzip")
	}
}

func TestParseList(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []Encoding
		err  string
	}{
		{"br,zstd,gzip", []Encoding{Brotli, Zstd, Gzip}, ""},
		{" gzip , br,gzip", []Encoding{Gzip, Brotli}, ""},
		{"none", []Encoding{}, ""},
		{" none ", []Encoding{}, ""},
		{"br,lzma", nil, `unknown encoding "lzma": use br, zstd, gzip or none`},
		{"", nil, `unknown encoding ""`},
		{"br,none", nil, `unknown encoding "none"`},
		{"identity", nil, `unknown encoding "identity"`},
	} {
		got, err := ParseList(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseList(%q) = %v, %v; want error %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got == nil || !slices.Equal(got, tc.want) {
			t.Errorf("ParseList(%q) = %v, %v", tc.in, got, err)
		}
		if back, err := ParseList(FormatList(got)); err != nil || !slices.Equal(back, got) {
			t.Errorf("ParseList(FormatList(%q)) = %v, %v", tc.in, back, err)
		}
	}
	if got := FormatList(Encodings); got != "br,zstd,gzip" {
		t.Errorf("FormatList(Encodings) = %q", got)
	}
}

func TestParseEncoding(t *testing.T) {
	choices := []Encoding{Identity, Gzip, Brotli}
	for _, name := range []string{"identity", "gzip", "br"} {
		if got, err := ParseEncoding(name, choices...); err != nil || got.Name != name {
			t.Errorf("ParseEncoding(%q) = %v, %v", name, got, err)
		}
	}
	_, err := ParseEncoding("zstd", choices...)
	if want := `unknown encoding "zstd": use identity, gzip or br`; err == nil || err.Error() != want {
		t.Errorf("ParseEncoding(zstd) error %v, want %q", err, want)
	}
	if e, ok := EncodingByName("identity"); ok {
		t.Errorf("EncodingByName(identity) = %v: identity is no sibling", e)
	}
}

// A zstd frame that asks for a window larger than maxZstdWindow is
// refused rather than given the memory; one within it decodes.
func TestZstdWindowLimit(t *testing.T) {
	// frame is a zstd frame with no content size, a window of 1<<log
	// bytes and one raw block holding "hello" (RFC 8878, 3.1.1).
	frame := func(log int) []byte {
		return []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, byte(log-10) << 3, 5<<3 | 1, 0, 0, 'h', 'e', 'l', 'l', 'o'}
	}
	for _, tt := range []struct {
		log int
		ok  bool
	}{{23, true}, {27, false}} {
		r, release, err := Zstd.NewReader(bytes.NewReader(frame(tt.log)))
		var got []byte
		if err == nil {
			got, err = io.ReadAll(r)
			release()
		}
		if (err == nil) != tt.ok || (tt.ok && string(got) != "hello") {
			t.Errorf("window 1<<%d: got %q, err = %v, want ok %v", tt.log, got, err, tt.ok)
		}
	}
}

// TestEncodeQuick: a quick encoding decodes to its input like a final one,
// is made with the documented fast settings, and (for a page-sized
// document) differs from the final bytes, which is what the exporter's
// finishing export replaces.
func TestEncodeQuick(t *testing.T) {
	for _, enc := range Encodings {
		for _, in := range encodingInputs() {
			z, err := enc.EncodeQuick(nil, in)
			if err != nil {
				t.Fatalf("%s: EncodeQuick: %v", enc.Name, err)
			}
			r, release, err := enc.NewReader(bytes.NewReader(z))
			if err != nil {
				t.Fatalf("%s: NewReader: %v", enc.Name, err)
			}
			got, err := io.ReadAll(r)
			release()
			if err != nil || !bytes.Equal(got, in) {
				t.Fatalf("%s quick: decoded %d bytes, %v; want %d", enc.Name, len(got), err, len(in))
			}
		}
	}
	big := encodingInputs()[2]
	var br bytes.Buffer
	w := brotli.NewWriterOptions(&br, brotli.WriterOptions{Quality: 4, LGWin: brotliWindow(len(big))})
	w.Write(big)
	w.Close()
	var gz bytes.Buffer
	g, _ := gzip.NewWriterLevel(&gz, gzip.BestSpeed)
	g.Write(big)
	g.Close()
	zw, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest))
	if err != nil {
		t.Fatal(err)
	}
	for enc, want := range map[Encoding][]byte{Brotli: br.Bytes(), Gzip: gz.Bytes(), Zstd: zw.EncodeAll(big, nil)} {
		got, _ := enc.EncodeQuick(nil, big)
		if !bytes.Equal(got, want) {
			t.Errorf("%s quick: %d bytes; want the %d of the documented settings", enc.Name, len(got), len(want))
		}
		final, _ := enc.Encode(nil, big)
		if bytes.Equal(got, final) {
			t.Errorf("%s: quick and final bytes are the same", enc.Name)
		}
	}
}

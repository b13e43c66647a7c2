package media_test

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"image/jpeg"
	"image/png"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/guidepub/guidepub/exporter/media"
	"github.com/guidepub/guidepub/exporter/media/mediatest"
	"github.com/guidepub/guidepub/fixtures"
)

// encoded returns what a libjpeg-turbo tool made, or skips (fails under
// GUIDEPUB_TEST_REQUIRE=1) when it is not installed.
func encoded(t testing.TB) func(data []byte, err error) []byte {
	return func(data []byte, err error) []byte {
		t.Helper()
		if err != nil {
			if strings.Contains(err.Error(), "not installed") {
				fixtures.Missing(t, "jpegtran and cjpeg", "install Debian's libjpeg-turbo-progs")
			}
			t.Fatal(err)
		}
		return data
	}
}

// manyScans returns a w×h flat progressive JPEG whose last scan is
// repeated n times: a valid file that Go's decoder takes n passes over.
func manyScans(t testing.TB, w, h, n int) []byte {
	t.Helper()
	prog := encoded(t)(mediatest.Jpegtran(mediatest.JPEG(mediatest.Flat(w, h)), "-progressive"))
	return mediatest.RepeatLastScan(prog, n)
}

// TestDecodeCostRefuses: files whose headers say their decode costs more
// than the limits are refused by Check with a message saying why and
// which limit to raise, before anything decodes them; the same kinds of
// file within the limits pass.
func TestDecodeCostRefuses(t *testing.T) {
	lim := media.Limits{Memory: 70 << 20}
	scans := manyScans(t, 1600, 1200, 1000)
	if img, err := jpeg.Decode(bytes.NewReader(scans)); err != nil || img.Bounds().Dx() != 1600 {
		t.Fatalf("the many-scans JPEG does not decode: %v", err)
	}
	var png16 bytes.Buffer
	if err := mediatest.InterlacedPNG16(&png16, 3000, 2000); err != nil {
		t.Fatal(err)
	}
	if cfg, err := png.DecodeConfig(bytes.NewReader(png16.Bytes())); err != nil || cfg.Width != 3000 {
		t.Fatalf("the interlaced PNG: %+v, %v", cfg, err)
	}
	var png8 bytes.Buffer
	if err := png.Encode(&png8, mediatest.Flat(3000, 2000)); err != nil {
		t.Fatal(err)
	}
	full := encoded(t)(mediatest.Cjpeg(mediatest.Flat(3000, 2000), "-progressive", "-sample", "1x1"))
	for _, c := range []struct {
		name string
		data []byte
		want []string // none for accepted
	}{
		{"1,000 refinement scans", scans, []string{"a JPEG image (progressive, 1.9 megapixels, 3 components (1 at full resolution), 1010 scans): decoding it takes about ",
			" million pixel passes, more than the limit of 1000 million for one image (raise it with --max-image-work)"}},
		{"progressive, full-resolution colour", full, []string{"a JPEG image (progressive, 6.0 megapixels, 3 components (3 at full resolution), 10 scans): decoding it takes about ",
			" MiB, more than the 70 MiB all decodes may take together (raise it with --max-decode-memory)"}},
		{"16-bit interlaced PNG", png16.Bytes(), []string{"a PNG image (6.0 megapixels, 16 bits per sample, interlaced): decoding it takes about ",
			" MiB, more than the 70 MiB all decodes may take together (raise it with --max-decode-memory)"}},
		{"baseline JPEG of the same size", mediatest.JPEG(mediatest.Flat(3000, 2000)), nil},
		{"8-bit PNG of the same size", png8.Bytes(), nil},
		{"progressive JPEG of 10 scans", encoded(t)(mediatest.Jpegtran(mediatest.JPEG(mediatest.Flat(3000, 2000)), "-progressive")), nil},
	} {
		info, err := media.Check(bytes.NewReader(c.data), int64(len(c.data)), lim)
		var be *media.BudgetError
		switch {
		case c.want == nil && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case c.want != nil && !errors.As(err, &be):
			t.Errorf("%s: error %v, want a *BudgetError", c.name, err)
		}
		for _, w := range c.want {
			if err != nil && !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %v, want one with %q", c.name, err, w)
			}
		}
		t.Logf("%s: %d KiB, %+v", c.name, len(c.data)>>10, info.Decode)
	}
}

// TestDecodeCostScaled: a JPEG decoded at reduced size for its renditions
// costs what the reduced decode takes: a 50-megapixel baseline JPEG
// (which needed 173 MiB decoded whole) fits in 64 MiB; a progressive one
// still needs 2 bytes for each coefficient of the image, at full size,
// whatever its scale; a PNG of the same size is decoded whole.
func TestDecodeCostScaled(t *testing.T) {
	const w, h = 8160, 6120
	s420 := []byte{0x22, 0x11, 0x11}
	s444 := []byte{0x11, 0x11, 0x11}
	pixels := int64(w * h)
	for _, c := range []struct {
		name     string
		data     []byte
		min, max int64 // bounds of the estimate
		shape    string
	}{
		{"baseline 4:2:0", mediatest.JPEGDeclaring(w, h, false, s420, 1), 0, 64 << 20, "baseline, 49.9 megapixels, 3 components (1 at full resolution), 1 scan, decoded at 1/4"},
		{"baseline gray", mediatest.JPEGDeclaring(w, h, false, []byte{0x11}, 1), 0, 48 << 20, "decoded at 1/4"},
		{"baseline CMYK", mediatest.JPEGDeclaring(w, h, false, []byte{0x11, 0x11, 0x11, 0x11}, 1), 0, 96 << 20, "decoded at 1/4"},
		// Coefficients: 2 bytes for each of 1.5 samples a pixel (4:2:0),
		// 3 (4:4:4).
		{"progressive 4:2:0", mediatest.JPEGDeclaring(w, h, true, s420, 10), 3 * pixels, 3*pixels*11/10 + 64<<20, "progressive, 49.9 megapixels, 3 components (1 at full resolution), 10 scans, decoded at 1/4"},
		{"progressive 4:4:4", mediatest.JPEGDeclaring(w, h, true, s444, 10), 6 * pixels, 6*pixels*11/10 + 64<<20, "decoded at 1/4"},
		{"PNG", mediatest.PNGDeclaring(w, h, 8, 2, 0), 4 * pixels, 1 << 40, "49.9 megapixels, 8 bits per sample"},
	} {
		info, err := media.Check(bytes.NewReader(c.data), int64(len(c.data)), media.Limits{Memory: 1 << 40})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		d := info.Decode
		if d.Bytes < c.min || d.Bytes > c.max || !strings.Contains(d.Shape, c.shape) {
			t.Errorf("%s: %d MiB (%s), want %d to %d MiB and %q", c.name, d.Bytes>>20, d.Shape, c.min>>20, c.max>>20, c.shape)
		}
		t.Logf("%s: %d MiB (%s)", c.name, d.Bytes>>20, d.Shape)
	}
	// At the default budget, two baseline 50-megapixel photos decode at
	// once, many times over; the progressive 4:4:4 one, refused whole
	// before, now fits.
	for _, data := range [][]byte{mediatest.JPEGDeclaring(w, h, false, s420, 1), mediatest.JPEGDeclaring(w, h, true, s444, 10)} {
		if _, err := media.Check(bytes.NewReader(data), int64(len(data)), media.Limits{}); err != nil {
			t.Error(err)
		}
	}
}

// TestDecodeCostCoversDecode: what making the renditions of a file
// allocates in all (an upper bound of what it holds at once) is within
// what Check estimates, for each kind of image and at each decode scale.
func TestDecodeCostCoversDecode(t *testing.T) {
	photo := mediatest.Scene(4000, 3000)
	page := mediatest.Scene(2400, 1800)
	var png8 bytes.Buffer
	if err := png.Encode(&png8, page); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		format media.Format
		data   []byte
	}{
		{"baseline 4:2:0 12 MP (1/2)", media.JPEG, mediatest.JPEG(photo)},
		{"baseline 4:2:0 4.3 MP (1/1)", media.JPEG, mediatest.JPEG(page)},
		{"progressive 4:2:0 12 MP (1/2)", media.JPEG, encoded(t)(mediatest.Jpegtran(mediatest.JPEG(photo), "-progressive"))},
		{"progressive 4:4:4 12 MP (1/2)", media.JPEG, encoded(t)(mediatest.Cjpeg(photo, "-progressive", "-sample", "1x1"))},
		{"gray 12 MP (1/2)", media.JPEG, encoded(t)(mediatest.Cjpeg(photo, "-grayscale"))},
		{"PNG 4.3 MP", media.PNG, png8.Bytes()},
	} {
		info, err := media.Check(bytes.NewReader(c.data), int64(len(c.data)), media.Limits{})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		widths := media.RenditionWidths(info.Width)
		slices.Reverse(widths)
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		err = media.Renditions(bytes.NewReader(c.data), c.format, sha256.Sum256(c.data), media.Kept{}, widths, 0, func(int, int, []byte) error { return nil })
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		alloc := int64(after.TotalAlloc - before.TotalAlloc)
		if alloc > info.Decode.Bytes {
			t.Errorf("%s: the renditions allocated %d MiB, more than the %d MiB estimated (%s)", c.name, alloc>>20, info.Decode.Bytes>>20, info.Decode.Shape)
		}
		t.Logf("%s: allocated %.1f MiB, estimated %.1f MiB", c.name, float64(alloc)/(1<<20), float64(info.Decode.Bytes)/(1<<20))
	}
}

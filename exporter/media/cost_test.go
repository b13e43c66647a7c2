package media_test

import (
	"bytes"
	"errors"
	"image/jpeg"
	"image/png"
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
	lim := media.Limits{Memory: 100 << 20}
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
			" MiB, more than the 100 MiB all decodes may take together (raise it with --max-decode-memory)"}},
		{"16-bit interlaced PNG", png16.Bytes(), []string{"a PNG image (6.0 megapixels, 16 bits per sample, interlaced): decoding it takes about ",
			" MiB, more than the 100 MiB all decodes may take together (raise it with --max-decode-memory)"}},
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

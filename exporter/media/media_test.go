package media_test

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"strings"
	"testing"
	"time"

	"github.com/guidepub/guidepub/exporter/media"
	"github.com/guidepub/guidepub/exporter/media/mediatest"
)

func check(t *testing.T, data []byte, maxPixels int) (media.Info, error) {
	t.Helper()
	return media.Check(bytes.NewReader(data), int64(len(data)), media.Limits{Pixels: maxPixels})
}

func TestCheckFormats(t *testing.T) {
	var gifBuf, pngBuf bytes.Buffer
	pic := mediatest.Picture(40, 30)
	if err := png.Encode(&pngBuf, pic); err != nil {
		t.Fatal(err)
	}
	if err := gif.Encode(&gifBuf, pic, nil); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		data []byte
		want media.Info
	}{
		{"jpeg", mediatest.PhotoWithGPS(40, 30), media.Info{Format: media.JPEG, Width: 40, Height: 30}},
		{"png", pngBuf.Bytes(), media.Info{Format: media.PNG, Width: 40, Height: 30}},
		{"gif", gifBuf.Bytes(), media.Info{Format: media.GIF, Width: 40, Height: 30}},
		{"pdf", mediatest.PDF(), media.Info{Format: media.PDF}},
		{"zip", mediatest.ZIP("a.svg", "dir/b.svg"), media.Info{Format: media.ZIP}},
	} {
		got, err := check(t, c.data, 0)
		cost := got.Decode
		got.Decode = media.DecodeCost{}
		if err != nil || got != c.want {
			t.Errorf("%s: got %+v, %v; want %+v", c.name, got, err, c.want)
		}
		if (cost.Bytes == 0) != (c.want.Format == media.ZIP) || (cost.Work == 0) != !c.want.Format.IsImage() {
			t.Errorf("%s: decode cost %+v", c.name, cost)
		}
	}
}

// TestCheckBadInput: each bad file is rejected with a message saying what
// is wrong, quickly and without decoding pixels.
func TestCheckBadInput(t *testing.T) {
	photo := mediatest.PhotoWithGPS(64, 48)
	for _, c := range []struct {
		name, want string
		data       []byte
	}{
		{"decompression bomb", "100000×100000 pixels (10000.0 megapixels), more than the limit of 50.0 megapixels for one image (raise it with --max-image-pixels)", mediatest.PNGBomb(100000, 100000)},
		{"truncated jpeg", "a JPEG image that is truncated", photo[:len(photo)/2]},
		{"jpeg without end", "truncated", photo[:len(photo)-2]},
		{"html pdf", "not a JPEG, PNG, GIF, PDF or ZIP file (it starts like HTML or XML)", []byte("<!DOCTYPE html><html><body>Not found</body></html>")},
		{"truncated pdf", "no end-of-file marker", mediatest.PDF()[:60]},
		{"zip slip", `entry "../../etc/passwd", which leaves the folder it unpacks into`, mediatest.ZIP("ok.txt", "../../etc/passwd")},
		{"zip absolute", "is an absolute path", mediatest.ZIP("/etc/passwd")},
		{"zip backslash", "leaves the folder", mediatest.ZIP(`a\..\..\b`)},
		{"broken zip", "does not open", []byte("PK\x03\x04 not really")},
		{"text", "(it starts like text)", []byte("just some text")},
		{"empty", "(it is empty)", nil},
		{"png bad crc", "fails its checksum", corruptPNG(t)},
	} {
		start := time.Now()
		_, err := check(t, c.data, 0)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s: took %v", c.name, d)
		}
	}
	var pe *media.PixelLimitError
	if _, err := check(t, mediatest.PNGBomb(100000, 100000), 0); !errors.As(err, &pe) {
		t.Errorf("bomb: %v is not a PixelLimitError", err)
	}
	if _, err := check(t, photo, 64*48-1); !errors.As(err, &pe) {
		t.Errorf("limit: %v is not a PixelLimitError", err)
	}
}

func corruptPNG(t *testing.T) []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, mediatest.Picture(8, 8)); err != nil {
		t.Fatal(err)
	}
	d := b.Bytes()
	d[len(d)-20] ^= 0xff // inside IDAT
	return d
}

// TestStripJPEG: nothing private survives, the image data is byte for byte
// the same (so the pixels are), orientation is kept.
func TestStripJPEG(t *testing.T) {
	src := mediatest.PhotoWithGPS(64, 48)
	var out bytes.Buffer
	kept, err := media.Strip(&out, bytes.NewReader(src), media.JPEG)
	if err != nil {
		t.Fatal(err)
	}
	got := out.Bytes()
	for _, s := range mediatest.Secrets {
		if bytes.Contains(got, []byte(s)) {
			t.Errorf("stripped JPEG still holds %q", s)
		}
	}
	for _, c := range [][]byte{mediatest.GPSLatitude, mediatest.GPSLongitude} {
		if bytes.Contains(got, c) {
			t.Errorf("stripped JPEG still holds the coordinates % x", c)
		}
	}
	if kept.Orientation != 6 {
		t.Errorf("orientation %d, want 6", kept.Orientation)
	}
	if !bytes.Contains(got, []byte("Exif\x00\x00MM")) {
		t.Error("no orientation block")
	}
	// The scan data is untouched: the stripped file ends with the same
	// bytes as the plain encoding.
	plain := mediatest.JPEG(mediatest.Picture(64, 48))
	if !bytes.HasSuffix(got, plain[2:]) {
		t.Error("the image data changed")
	}
	a, _ := jpeg.Decode(bytes.NewReader(src))
	b, err := jpeg.Decode(bytes.NewReader(got))
	if err != nil || !sameImage(a, b) {
		t.Errorf("stripped JPEG decodes differently (%v)", err)
	}
	// Stripping is idempotent and deterministic.
	var again bytes.Buffer
	if _, err := media.Strip(&again, bytes.NewReader(got), media.JPEG); err != nil || !bytes.Equal(again.Bytes(), got) {
		t.Errorf("stripping twice changed the bytes (%v)", err)
	}
	// Data after the end marker is dropped.
	var tail bytes.Buffer
	if _, err := media.Strip(&tail, bytes.NewReader(append(append([]byte{}, src...), "appended video"...)), media.JPEG); err != nil || !bytes.Equal(tail.Bytes(), got) {
		t.Errorf("trailing data kept (%v)", err)
	}
}

func TestStripPNGAndGIF(t *testing.T) {
	var b bytes.Buffer
	pic := mediatest.Picture(16, 16)
	if err := png.Encode(&b, pic); err != nil {
		t.Fatal(err)
	}
	raw := b.Bytes()
	// Insert a text chunk and an eXIf with GPS after IHDR (8 + 25 bytes).
	var withText []byte
	withText = append(withText, raw[:33]...)
	withText = append(withText, mediatest.Chunk("tEXt", []byte("Author\x00"+mediatest.Secrets[1]))...)
	withText = append(withText, mediatest.Chunk("tIME", []byte{7, 234, 11, 24, 9, 41, 0})...)
	withText = append(withText, raw[33:]...)
	var out bytes.Buffer
	if _, err := media.Strip(&out, bytes.NewReader(withText), media.PNG); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), raw) {
		t.Error("stripped PNG is not the PNG without its text and time chunks")
	}

	var g bytes.Buffer
	if err := gif.Encode(&g, pic, nil); err != nil {
		t.Fatal(err)
	}
	gd := g.Bytes()
	// A comment extension before the trailer.
	comment := append([]byte{0x21, 0xFE, byte(len(mediatest.Secrets[5]))}, mediatest.Secrets[5]...)
	comment = append(comment, 0)
	withComment := append(append(append([]byte{}, gd[:len(gd)-1]...), comment...), 0x3B)
	out.Reset()
	if _, err := media.Strip(&out, bytes.NewReader(withComment), media.GIF); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), gd) {
		t.Error("stripped GIF is not the GIF without its comment")
	}
}

func sameImage(a, b image.Image) bool {
	if a == nil || b == nil || a.Bounds() != b.Bounds() {
		return false
	}
	r := a.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if a.At(x, y) != b.At(x, y) {
				return false
			}
		}
	}
	return true
}

// TestRenditions: widths below the original only, deterministic bytes
// carrying the key and the orientation, and nothing private.
func TestRenditions(t *testing.T) {
	src := mediatest.PhotoWithGPS(1000, 750)
	if got := media.RenditionWidths(1000); len(got) != 2 || got[0] != 480 || got[1] != 960 {
		t.Fatalf("widths %v", got)
	}
	var stripped bytes.Buffer
	kept, err := media.Strip(&stripped, bytes.NewReader(src), media.JPEG)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(src)
	run := func() map[int][]byte {
		out := map[int][]byte{}
		err := media.Renditions(bytes.NewReader(src), media.JPEG, sum, kept, []int{960, 480}, 0, func(w, h int, data []byte) error {
			if h != media.RenditionHeight(1000, 750, w) {
				t.Errorf("width %d: height %d", w, h)
			}
			out[w] = data
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	a, b := run(), run()
	for _, w := range []int{480, 960} {
		if !bytes.Equal(a[w], b[w]) {
			t.Errorf("width %d: bytes differ between runs", w)
		}
		cfg, err := jpeg.DecodeConfig(bytes.NewReader(a[w]))
		if err != nil || cfg.Width != w {
			t.Errorf("width %d: decodes as %+v, %v", w, cfg, err)
		}
		if media.KeyOf(a[w]) != media.RenditionKey(sum, w) {
			t.Errorf("width %d: key %q", w, media.KeyOf(a[w]))
		}
		if !bytes.Contains(a[w], []byte("Exif\x00\x00MM")) {
			t.Errorf("width %d: no orientation", w)
		}
		for _, s := range mediatest.Secrets {
			if bytes.Contains(a[w], []byte(s)) {
				t.Errorf("width %d holds %q", w, s)
			}
		}
	}
	if err := media.Renditions(bytes.NewReader(src), media.JPEG, sum, kept, []int{480}, 1000*750-1, func(int, int, []byte) error { return nil }); err == nil {
		t.Error("pixel limit not applied")
	}
}

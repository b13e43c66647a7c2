package media

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"strconv"

	"golang.org/x/image/draw"
)

// Widths are the widths of an image's renditions: those narrower than the
// image are made (see docs/output.md#images).
var Widths = []int{480, 960, 1600}

// Quality is the JPEG quality of renditions.
const Quality = 80

// RenditionWidths returns the widths of the renditions of an image w
// pixels wide: the entries of Widths below w, ascending.
func RenditionWidths(w int) []int {
	var out []int
	for _, rw := range Widths {
		if rw < w {
			out = append(out, rw)
		}
	}
	return out
}

// RenditionHeight returns the height of the rendition width wide of an
// image w×h: h scaled, rounded, at least 1.
func RenditionHeight(w, h, width int) int {
	return max(1, (h*width+w/2)/w)
}

// scaler is the interpolator renditions are made with: ApproxBiLinear,
// in steps that at most halve the width (a halving step averages 2×2
// pixels, so nothing aliases). Catmull-Rom in one step measured about 3
// times slower (see docs/benchmarks.md) for no visible gain at these
// sizes.
var scaler draw.Interpolator = draw.ApproxBiLinear

// renditionVersion changes whenever the bytes of a rendition would: the
// encoder settings and the interpolator.
const renditionVersion = "guidepub rendition v2 bilinear-halving q80"

// Version changes whenever what is published of an image changes (what
// Strip and StripPDF keep, the renditions' widths and bytes): the exporter counts it
// among its settings, so that a new version re-exports every guide.
const Version = "strip-v3 pdf-v2 " + renditionVersion + " 480,960,1600"

// RenditionKey returns the key that identifies the rendition width wide
// of the source image whose content has the SHA-256 source: a rendition
// carries it (see Renditions), so that a published rendition is known to
// be up to date without decoding anything.
func RenditionKey(source [sha256.Size]byte, width int) string {
	h := sha256.New()
	h.Write([]byte(renditionVersion + "\x00" + strconv.Itoa(width) + "\x00"))
	h.Write(source[:])
	return hex.EncodeToString(h.Sum(nil))
}

// keyPrefix starts the comment segment that carries a rendition's key.
const keyPrefix = "guidepub:"

// KeyOf returns the key a rendition carries (see RenditionKey), "" when
// data is not a rendition.
func KeyOf(data []byte) string {
	// SOI, then the COM segment Renditions writes first.
	const at = 2 + 4
	if len(data) < at+len(keyPrefix)+64 || data[2] != 0xFF || data[3] != mCOM {
		return ""
	}
	p := data[at:]
	if !bytes.HasPrefix(p, []byte(keyPrefix)) {
		return ""
	}
	return string(p[len(keyPrefix) : len(keyPrefix)+64])
}

// Renditions decodes the image src (of format f, at most maxPixels
// pixels: 0 is DefaultMaxPixels) and calls emit with the JPEG rendition of
// each width of widths (descending order is fastest: each is scaled from
// the previous one), in the order given. source is the SHA-256 of src's
// content, for the key each rendition carries; kept is what the stripped
// original kept for display (orientation, colour profile), which every
// rendition carries too. The bytes depend only on the pixels, the widths
// and kept. Memory is one decoded image and the current rendition.
func Renditions(src io.Reader, f Format, source [sha256.Size]byte, kept Kept, widths []int, maxPixels int, emit func(width, height int, data []byte) error) error {
	if maxPixels <= 0 {
		maxPixels = DefaultMaxPixels
	}
	var buf bytes.Buffer
	cfg, err := decodeConfig(f, io.TeeReader(src, &buf))
	if err != nil {
		return fmt.Errorf("%s whose header does not decode: %v", f.Name(), err)
	}
	if err := checkPixels(cfg.Width, cfg.Height, maxPixels); err != nil {
		return err
	}
	img, err := decode(f, io.MultiReader(&buf, src))
	if err != nil {
		return fmt.Errorf("%s that does not decode: %v", f.Name(), err)
	}
	from := img
	iw, ih := img.Bounds().Dx(), img.Bounds().Dy()
	scale := func(w int) *image.RGBA {
		dst := image.NewRGBA(image.Rect(0, 0, w, RenditionHeight(iw, ih, w)))
		// Renditions are opaque: JPEG has no transparency, so an image
		// that may have some is drawn over white. Src, for an opaque
		// source, takes x/image/draw's fast paths.
		op := draw.Src
		if f != JPEG && from == img {
			draw.Draw(dst, dst.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
			op = draw.Over
		}
		scaler.Scale(dst, dst.Bounds(), from, from.Bounds(), op, nil)
		return dst
	}
	for _, w := range widths {
		for from.Bounds().Dx() > 2*w {
			from = scale((from.Bounds().Dx() + 1) / 2)
		}
		dst := scale(w)
		h := dst.Bounds().Dy()
		var out bytes.Buffer
		if err := jpeg.Encode(&out, dst, &jpeg.Options{Quality: Quality}); err != nil {
			return err
		}
		if err := emit(w, h, withSegments(out.Bytes(), RenditionKey(source, w), kept)); err != nil {
			return err
		}
		from = dst
	}
	return nil
}

func decode(f Format, r io.Reader) (image.Image, error) {
	switch f {
	case JPEG:
		return jpeg.Decode(r)
	case PNG:
		return png.Decode(r)
	case GIF:
		return gif.Decode(r)
	}
	return nil, fmt.Errorf("%s is not an image", f)
}

// withSegments inserts after the SOI of the JPEG data the comment with
// the rendition's key, and what kept holds for display.
func withSegments(data []byte, key string, kept Kept) []byte {
	var b bytes.Buffer
	b.Grow(len(data) + 128 + len(kept.ICC))
	b.Write(data[:2])
	b.Write(jpegSegment(mCOM, []byte(keyPrefix+key)))
	if kept.Orientation > 1 {
		b.Write(jpegSegment(mAPP1, append(append([]byte{}, exifHeader...), orientationTIFF(kept.Orientation)...)))
	}
	b.Write(iccSegments(kept.ICC))
	b.Write(data[2:])
	return b.Bytes()
}

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

	"github.com/guidepub/guidepub/exporter/media/jpegscale"
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
// encoder settings, the interpolator, the decoder (v3: JPEGs decoded at
// reduced size, DecodeScale).
const renditionVersion = "guidepub rendition v3 dct-scaled bilinear-halving q80"

// Version changes whenever what is published of an image or a PDF changes
// (what Strip and RebuildPDF keep, the renditions' widths and bytes): the
// exporter counts it among its settings, so that a new version re-exports every guide.
const Version = "strip-v3 pdf-v4-rebuilt " + renditionVersion + " 480,960,1600"

// DecodeScale returns the scale (1, 2, 4 or 8: each dimension divided by
// it) at which Renditions decodes an image of format f, width pixels
// wide, for renditions of widths: for a JPEG, the halvings the rendition
// steps would make of the full image (while it is more than twice as
// wide as the widest rendition), done by the decoder instead
// (jpegscale's reduced inverse DCTs average the same 2×2, 4×4 or 8×8
// pixels a halving step does); 1 for other formats. See
// docs/output.md#images.
func DecodeScale(f Format, width int, widths []int) int {
	if f != JPEG {
		return 1
	}
	widest := 0
	for _, w := range widths {
		widest = max(widest, w)
	}
	s := 1
	for s < 8 && (width+s-1)/s > 2*widest {
		s *= 2
	}
	return s
}

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
// and kept. A JPEG is decoded at reduced size (DecodeScale); memory is
// the decoded image (and, for a progressive JPEG, its coefficients while
// it decodes) and two renditions (see docs/robustness.md#decoding-budget).
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
	img, err := decode(f, io.MultiReader(&buf, src), DecodeScale(f, cfg.Width, widths))
	if err != nil {
		return fmt.Errorf("%s that does not decode: %v", f.Name(), err)
	}
	return scaleAll(img, f == JPEG, cfg.Width, cfg.Height, widths, func(w, h int, dst *image.RGBA) error {
		var out bytes.Buffer
		if err := jpeg.Encode(&out, dst, &jpeg.Options{Quality: Quality}); err != nil {
			return err
		}
		return emit(w, h, withSegments(out.Bytes(), RenditionKey(source, w), kept))
	})
}

// scaleAll scales the decoded image from, of an image width×height (from
// may be smaller: decoded at reduced size), to each width of widths in
// turn, each from the previous one, and calls emit with each. An image
// that is not opaque is drawn over white.
func scaleAll(from image.Image, opaque bool, width, height int, widths []int, emit func(w, h int, dst *image.RGBA) error) error {
	scale := func(w int) *image.RGBA {
		// The height is the full image's, scaled: the same whatever
		// size it was decoded at.
		dst := image.NewRGBA(image.Rect(0, 0, w, RenditionHeight(width, height, w)))
		// Src, for an opaque source, takes x/image/draw's fast paths.
		op := draw.Src
		if !opaque {
			// Once, at the first step: JPEG has no transparency.
			draw.Draw(dst, dst.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
			op, opaque = draw.Over, true
		}
		scaler.Scale(dst, dst.Bounds(), from, from.Bounds(), op, nil)
		return dst
	}
	for _, w := range widths {
		for from.Bounds().Dx() > 2*w {
			from = scale((from.Bounds().Dx() + 1) / 2)
		}
		dst := scale(w)
		if err := emit(w, dst.Bounds().Dy(), dst); err != nil {
			return err
		}
		from = dst
	}
	return nil
}

// decode decodes r, a JPEG at 1/scale of its size (jpegscale), a PNG or
// GIF at full size.
func decode(f Format, r io.Reader, scale int) (image.Image, error) {
	switch f {
	case JPEG:
		return jpegscale.Decode(r, scale)
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

package media

import (
	"fmt"
	"strings"

	"github.com/guidepub/guidepub/exporter/media/jpegscale"
)

// Decoding an image for its renditions, or parsing a PDF to rebuild it,
// costs memory and CPU time that a small file can make huge: a 135 KB
// progressive JPEG of 2,000 scans takes 24 s to decode, a 50-megapixel
// progressive one with full-resolution colour close to 1 GB. Check reads
// what that cost will be from the file's headers (DecodeCost), before
// anything is decoded, and refuses a file over Limits; the exporter makes
// every decode wait for its share of a memory budget shared by all of
// them (see docs/robustness.md#decoding-budget).

// DecodeCost is what decoding a file will cost, as its headers say.
type DecodeCost struct {
	// Bytes is the peak memory decoding the file and making its
	// renditions takes (for a PDF: parsing and rebuilding it), estimated
	// from measurements of Go's decoders (docs/robustness.md).
	Bytes int64
	// Work is the decoder's passes over the image's pixels, in pixels:
	// the pixels times the scans of a JPEG (each scan of a progressive
	// JPEG visits every block of its components), the pixels of a PNG or
	// of a GIF's first frame; 0 for a PDF, whose work is bounded by
	// the bytes its streams inflate to (pdfCost) and PDFTimeout.
	Work int64
	// Shape says, for a message, what the estimate comes from
	// ("progressive, 3 components at full resolution, 2003 scans").
	Shape string
}

// Limits bound what Check accepts of one file. A zero field takes its
// default.
type Limits struct {
	// Pixels bounds an image's pixels (width × height): DefaultMaxPixels.
	Pixels int
	// Work bounds DecodeCost.Work: DefaultMaxWork.
	Work int64
	// Memory is the memory all decodes may take together, which one
	// file's DecodeCost.Bytes may not exceed: DefaultDecodeMemory.
	Memory int64
}

// The defaults of Limits.
const (
	// DefaultMaxWork is 1,000 million pixel passes: a 50-megapixel
	// progressive JPEG of 20 scans, about half a second of decoding.
	DefaultMaxWork = 1_000_000_000
	// DefaultDecodeMemory is 512 MiB: two 50-megapixel camera photos
	// (baseline, 4:2:0) at once, or one progressive 50-megapixel JPEG
	// with subsampled colour.
	DefaultDecodeMemory = 512 << 20
)

// WithDefaults returns l with every zero (or negative) field set to its
// default.
func (l Limits) WithDefaults() Limits {
	if l.Pixels <= 0 {
		l.Pixels = DefaultMaxPixels
	}
	if l.Work <= 0 {
		l.Work = DefaultMaxWork
	}
	if l.Memory <= 0 {
		l.Memory = DefaultDecodeMemory
	}
	return l
}

// BudgetError is the error of a file whose decode would cost more than
// Limits allow.
type BudgetError struct {
	Format Format
	Cost   DecodeCost
	// Work and Memory are the limits; the one exceeded is named.
	Work, Memory int64
}

func (e *BudgetError) Error() string {
	what := fmt.Sprintf("%s (%s)", e.Format.Name(), e.Cost.Shape)
	if e.Cost.Work > e.Work {
		return fmt.Sprintf("%s: decoding it takes about %d million pixel passes, more than the limit of %d million for one image (raise it with --max-image-work)",
			what, e.Cost.Work/1e6, e.Work/1e6)
	}
	verb := "decoding it"
	if e.Format == PDF {
		verb = "rebuilding it"
	}
	return fmt.Sprintf("%s: %s takes about %d MiB, more than the %d MiB all decodes may take together (raise it with --max-decode-memory)",
		what, verb, e.Cost.Bytes>>20, e.Memory>>20)
}

// check returns a *BudgetError when c is over l (with defaults).
func (c DecodeCost) check(f Format, l Limits) error {
	l = l.WithDefaults()
	if c.Work > l.Work || c.Bytes > l.Memory {
		return &BudgetError{Format: f, Cost: c, Work: l.Work, Memory: l.Memory}
	}
	return nil
}

// The estimates, in bytes per pixel of the source image unless said
// otherwise, from Go's decoders (image/png, image/gif), guidepub's JPEG
// decoder (jpegscale) and the rendition code, checked against the peak
// resident memory measured by BenchmarkHostileImages.
const (
	// renditionSlack: the rendition steps hold a step's source and
	// result (RGBA) at once, and the encoder's buffers and what the
	// collector has not yet reclaimed add a fifth (renditionMemory).
	renditionSlack = 1.2
	// coefficientBytes: a progressive JPEG keeps every block's 64
	// coefficients (int16) of each component until its last scan.
	coefficientBytes = 2
	// slack is a margin over the model (docs/robustness.md).
	slack = 1.1
	// decodeBase is what any decode takes besides the image.
	decodeBase = 16 << 20
)

// estimate returns the memory of a decode taking perPixel bytes for each
// of pixels, and then renditions bytes for the rendition steps.
func estimate(pixels int64, perPixel float64, renditions int64) int64 {
	return int64((float64(pixels)*perPixel+float64(renditions))*slack) + decodeBase
}

// renditionMemory returns what the rendition steps of an image width×height
// take when it is decoded decodedWidth wide (see scaleAll): the largest
// step source and result (RGBA) alive together, the decoded image not
// counted, times renditionSlack.
func renditionMemory(decodedWidth, width, height int) int64 {
	widths := RenditionWidths(width)
	rgba := func(w int) int64 { return 4 * int64(w) * int64(RenditionHeight(width, height, w)) }
	var peak, prev int64
	from := decodedWidth
	step := func(w int) {
		size := rgba(w)
		peak, prev, from = max(peak, prev+size), size, w
	}
	for i := len(widths) - 1; i >= 0; i-- {
		for from > 2*widths[i] {
			step((from + 1) / 2)
		}
		step(widths[i])
	}
	return int64(float64(peak) * renditionSlack)
}

// jpegFrame is what a JPEG's frame header and scans say about its decode.
type jpegFrame struct {
	width, height int
	progressive   bool
	// sampling holds each component's horizontal and vertical sampling
	// factors.
	sampling [][2]int
	scans    int
}

// parseFrame reads a frame header's payload p (marker m).
func parseFrame(m byte, p []byte) (jpegFrame, error) {
	if len(p) < 6 || len(p) < 6+3*int(p[5]) {
		return jpegFrame{}, fmt.Errorf("a JPEG image with a frame header of %d bytes", len(p))
	}
	f := jpegFrame{height: int(p[1])<<8 | int(p[2]), width: int(p[3])<<8 | int(p[4])}
	f.progressive = m == 0xC2 || m == 0xC6 || m == 0xCA || m == 0xCE
	for i := range int(p[5]) {
		hv := p[6+3*i+1]
		f.sampling = append(f.sampling, [2]int{max(1, int(hv>>4)), max(1, int(hv&15))})
	}
	return f, nil
}

// cost returns the decode cost of a JPEG frame, decoded for its
// renditions at DecodeScale.
func (f jpegFrame) cost() DecodeCost {
	pixels := int64(f.width) * int64(f.height)
	scale := DecodeScale(JPEG, f.width, RenditionWidths(f.width))
	hmax, vmax := 1, 1
	for _, s := range f.sampling {
		hmax, vmax = max(hmax, s[0]), max(vmax, s[1])
	}
	// samples: each component's share of the pixels, summed; decoded:
	// the same at the decode's scale, where a subsampled component's
	// blocks give more samples (at most 8×8: jpegscale's makeImg).
	samples, decoded, full := 0.0, 0.0, 0
	for _, s := range f.sampling {
		share := float64(s[0]*s[1]) / float64(hmax*vmax)
		samples += share
		kx := float64(min(8, 8/scale*hmax/s[0])) / 8
		ky := float64(min(8, 8/scale*vmax/s[1])) / 8
		decoded += share * kx * ky
		if share == 1 {
			full++
		}
	}
	perPixel := decoded
	if len(f.sampling) == 4 {
		// CMYK and YCCK are decoded into four planes, then converted to
		// an image.CMYK of the decoded size.
		perPixel += 4 / float64(scale*scale)
	}
	kind := "baseline"
	if f.progressive {
		perPixel += coefficientBytes * samples
		kind = "progressive"
	}
	shape := fmt.Sprintf("%s, %.1f megapixels, %d %s (%d at full resolution), %d %s", kind, float64(pixels)/1e6,
		len(f.sampling), plural(len(f.sampling), "component"), full, f.scans, plural(f.scans, "scan"))
	if scale > 1 {
		shape += fmt.Sprintf(", decoded at 1/%d", scale)
	}
	dw, _ := jpegscale.Size(f.width, f.height, scale)
	return DecodeCost{Bytes: estimate(pixels, perPixel, renditionMemory(dw, f.width, f.height)), Work: pixels * int64(max(1, f.scans)), Shape: shape}
}

// pngCost returns the decode cost of a PNG from its header chunk's data.
func pngCost(ihdr []byte) DecodeCost {
	w, h := int64(be32(ihdr[0:])), int64(be32(ihdr[4:]))
	depth, colour, interlaced := int(ihdr[8]), ihdr[9], ihdr[12] == 1
	// The bytes per pixel of the image Go's decoder returns.
	perPixel := map[byte]float64{0: 1, 2: 4, 3: 1, 4: 4, 6: 4}[colour]
	if depth == 16 {
		perPixel *= 2
	}
	kind := "not interlaced"
	if interlaced {
		// Each of the seven passes is decoded into an image of its own,
		// then copied into the whole one.
		perPixel *= 2
		kind = "interlaced"
	}
	shape := fmt.Sprintf("%.1f megapixels, %d bits per sample, %s", float64(w*h)/1e6, depth, kind)
	return DecodeCost{Bytes: estimate(w*h, perPixel, renditionMemory(int(w), int(w), int(h))), Work: w * h, Shape: shape}
}

// gifCost returns the decode cost of a GIF whose logical screen is w×h:
// the renditions are made of its first frame.
func gifCost(w, h, frames int) DecodeCost {
	pixels := int64(w) * int64(h)
	shape := fmt.Sprintf("%.1f megapixels, %d %s", float64(pixels)/1e6, frames, plural(frames, "frame"))
	return DecodeCost{Bytes: estimate(pixels, 1, renditionMemory(w, w, h)), Work: pixels, Shape: shape}
}

func be32(b []byte) uint32 {
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return strings.TrimSuffix(word, "s") + "s"
}

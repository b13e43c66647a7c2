package media

import (
	"bytes"
	"fmt"
	"image"
	"image/draw"
	"image/jpeg"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/guidepub/guidepub/exporter/media/jpegscale"
	"github.com/guidepub/guidepub/exporter/media/mediatest"
)

// TestDecodeScale: the scale is the halvings the rendition steps would
// make of the full image, at most 8; 1 for PNG and GIF.
func TestDecodeScale(t *testing.T) {
	for _, c := range []struct {
		f      Format
		width  int
		widths []int
		want   int
	}{
		{JPEG, 960, []int{480}, 1},             // 960 is not more than 2 × 480
		{JPEG, 2400, []int{1600, 960, 480}, 1}, // floor pages
		{JPEG, 3201, []int{1600, 960, 480}, 2},
		{JPEG, 4000, []int{480, 1600, 960}, 2}, // any order: the widest counts
		{JPEG, 6000, []int{1600, 960, 480}, 2},
		{JPEG, 6401, []int{1600, 960, 480}, 4},
		{JPEG, 8160, []int{1600, 960, 480}, 4},
		{JPEG, 50000, []int{1600, 960, 480}, 8},
		{JPEG, 2000, []int{480}, 4},
		{JPEG, 4000, nil, 8},
		{PNG, 8160, []int{1600, 960, 480}, 1},
		{GIF, 8160, []int{1600}, 1},
	} {
		if got := DecodeScale(c.f, c.width, c.widths); got != c.want {
			t.Errorf("%s %d for %v: %d, want %d", c.f, c.width, c.widths, got, c.want)
		}
	}
}

// scaleRule is a rule that picks the decode scale for renditions.
type scaleRule struct {
	name  string
	scale func(width int, widths []int) int
}

// scaleRules: today's (DecodeScale), the one that keeps a decode at least
// twice as wide as the widest rendition (one halving step left to the
// scaler), and none (a full decode, as before scaled decoding).
var scaleRules = []scaleRule{
	{"halvings", func(w int, ws []int) int { return DecodeScale(JPEG, w, ws) }},
	{"twice-widest", func(w int, ws []int) int {
		s := 1
		for s < 8 && (w+2*s-1)/(2*s) >= 2*slices.Max(ws) {
			s *= 2
		}
		return s
	}},
}

// renditionsAt returns the renditions (before JPEG encoding) of the JPEG
// data decoded at scale.
func renditionsAt(t testing.TB, data []byte, scale int) []*image.RGBA {
	img, err := jpegscale.Decode(bytes.NewReader(data), scale)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := decodeConfig(JPEG, bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var out []*image.RGBA
	widths := RenditionWidths(cfg.Width)
	slices.Reverse(widths)
	err = scaleAll(img, true, cfg.Width, cfg.Height, widths, func(_, _ int, dst *image.RGBA) error {
		out = append(out, dst)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestScaledRenditionsLikeFull: the renditions of a JPEG decoded at
// DecodeScale are those of the full decode (what they were before) but for
// rounding: the reduced inverse DCTs average the pixels the halving steps
// averaged. Measured for each rule of scaleRules on pictures of the sizes
// photos have; GUIDEPUB_TEST_JPEGS (a glob) adds JPEG files to measure.
func TestScaledRenditionsLikeFull(t *testing.T) {
	type source struct {
		name string
		data []byte
	}
	sources := []source{
		{"scene 4000×3000", mediatest.JPEG(mediatest.Scene(4000, 3000))},
		{"picture 3300×2200", mediatest.JPEG(mediatest.Picture(3300, 2200))},
		{"scene 7000×1200", mediatest.JPEG(mediatest.Scene(7000, 1200))},
	}
	if glob := os.Getenv("GUIDEPUB_TEST_JPEGS"); glob != "" {
		names, _ := filepath.Glob(glob)
		for _, n := range names {
			data, err := os.ReadFile(n)
			if err != nil {
				t.Fatal(err)
			}
			sources = append(sources, source{filepath.Base(filepath.Dir(filepath.Dir(n))) + "/" + filepath.Base(n), data})
		}
	}
	for _, src := range sources {
		before := renditionsAt(t, src.data, 1)
		cfg, _ := decodeConfig(JPEG, bytes.NewReader(src.data))
		widths := RenditionWidths(cfg.Width)
		slices.Reverse(widths)
		for _, b := range before {
			// For scale: what the JPEG encoding of a rendition changes.
			var enc bytes.Buffer
			if err := jpeg.Encode(&enc, b, &jpeg.Options{Quality: Quality}); err != nil {
				t.Fatal(err)
			}
			img, _ := jpeg.Decode(&enc)
			rgba := image.NewRGBA(b.Rect)
			draw.Draw(rgba, b.Rect, img, image.Point{}, draw.Src)
			p, ssim := compare(rgba, b)
			t.Logf("%s: %d wide: its encoding at quality %d: PSNR %.1f dB, SSIM %.4f", src.name, b.Rect.Dx(), Quality, p, ssim)
		}
		for _, rule := range scaleRules {
			s := rule.scale(cfg.Width, widths)
			after := renditionsAt(t, src.data, s)
			for i, b := range before {
				p, ssim := compare(after[i], b)
				t.Logf("%s, %s (1/%d): %d wide: PSNR %.1f dB, SSIM %.4f against the full decode's", src.name, rule.name, s, b.Rect.Dx(), p, ssim)
				if rule.name == "halvings" && (p < 40 || ssim < 0.99) {
					t.Errorf("%s at 1/%d: the %d-wide rendition is PSNR %.1f dB, SSIM %.4f from the full decode's, want at least 40 dB and 0.99", src.name, s, b.Rect.Dx(), p, ssim)
				}
			}
		}
	}
}

// compare returns the PSNR (dB, over R, G and B) of a against b and the
// mean SSIM of their luma over 8×8 windows.
func compare(a, b *image.RGBA) (psnr, ssim float64) {
	if a.Rect != b.Rect {
		panic(fmt.Sprint(a.Rect, b.Rect))
	}
	sum := 0.0
	for i := range a.Pix {
		if i%4 != 3 {
			d := float64(a.Pix[i]) - float64(b.Pix[i])
			sum += d * d
		}
	}
	psnr = math.Inf(1)
	if sum > 0 {
		psnr = 10 * math.Log10(255*255/(sum/float64(len(a.Pix)/4*3)))
	}
	luma := func(m *image.RGBA, x, y int) float64 {
		p := m.Pix[m.PixOffset(x, y):]
		return 0.299*float64(p[0]) + 0.587*float64(p[1]) + 0.114*float64(p[2])
	}
	const c1, c2 = (0.01 * 255) * (0.01 * 255), (0.03 * 255) * (0.03 * 255)
	n := 0
	for y := 0; y+8 <= a.Rect.Dy(); y += 8 {
		for x := 0; x+8 <= a.Rect.Dx(); x += 8 {
			var ma, mb, va, vb, cov float64
			for j := range 8 {
				for i := range 8 {
					ma += luma(a, x+i, y+j)
					mb += luma(b, x+i, y+j)
				}
			}
			ma, mb = ma/64, mb/64
			for j := range 8 {
				for i := range 8 {
					da, db := luma(a, x+i, y+j)-ma, luma(b, x+i, y+j)-mb
					va, vb, cov = va+da*da, vb+db*db, cov+da*db
				}
			}
			va, vb, cov = va/63, vb/63, cov/63
			ssim += (2*ma*mb + c1) * (2*cov + c2) / ((ma*ma + mb*mb + c1) * (va + vb + c2))
			n++
		}
	}
	return psnr, ssim / float64(n)
}

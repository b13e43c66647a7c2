package jpegscale_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/guidepub/guidepub/exporter/media/jpegscale"
	"github.com/guidepub/guidepub/exporter/media/mediatest"
	"github.com/guidepub/guidepub/fixtures"
)

// gray returns the luma of img.
func gray(img image.Image) *image.Gray {
	b := img.Bounds()
	g := image.NewGray(b)
	draw.Draw(g, b, img, b.Min, draw.Src)
	return g
}

// goJPEG encodes img with Go's encoder (baseline; 4:2:0, or gray).
func goJPEG(t testing.TB, img image.Image, quality int) []byte {
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: quality}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// libjpeg returns what a libjpeg-turbo tool made, or skips (fails under
// GUIDEPUB_TEST_REQUIRE=1) when it is not installed.
func libjpeg(t testing.TB, data []byte, err error) []byte {
	t.Helper()
	if err != nil {
		if strings.Contains(err.Error(), "not installed") {
			fixtures.Missing(t, "jpegtran and cjpeg", "install Debian's libjpeg-turbo-progs")
		}
		t.Fatal(err)
	}
	return data
}

// fourComponents returns a baseline JPEG of four components (CMYK when
// transform is 0, YCbCrK when 2, as the Adobe segment says), coded as
// four non-interleaved scans: each plane is a gray JPEG of Go's encoder,
// whose tables and scan are taken as they are. With sub, the second and
// third planes are of half the size, sampled 1×1 against 2×2 (the other
// layout image/jpeg reads).
func fourComponents(t testing.TB, img image.Image, transform byte, sub bool) []byte {
	b := img.Bounds()
	var scans [4][]byte
	var tables []byte
	for i, p := range planes(img, transform) {
		if sub && (i == 1 || i == 2) {
			half := image.NewGray(image.Rect(0, 0, (b.Dx()+1)/2, (b.Dy()+1)/2))
			for y := range half.Rect.Dy() {
				for x := range half.Rect.Dx() {
					half.SetGray(x, y, p.GrayAt(2*x, 2*y))
				}
			}
			p = half
		}
		data := goJPEG(t, p, 80)
		// SOI, then segments up to SOS; the scan runs to the EOI.
		at := 2
		for data[at] == 0xFF && data[at+1] != 0xDA {
			n := int(binary.BigEndian.Uint16(data[at+2:]))
			if m := data[at+1]; i == 0 && (m == 0xDB || m == 0xC4) {
				tables = append(tables, data[at:at+2+n]...)
			}
			at += 2 + n
		}
		scan := append([]byte{}, data[at:len(data)-2]...)
		scan[5] = byte(i + 1) // the component selector
		scans[i] = scan
	}
	out := []byte{0xFF, 0xD8}
	out = append(out, 0xFF, 0xEE, 0, 14)
	out = append(out, "Adobe\x00\x64\x00\x00\x00\x00"...)
	out = append(out, transform)
	out = append(out, tables...)
	out = append(out, 0xFF, 0xC0, 0, 8+3*4, 8)
	out = binary.BigEndian.AppendUint16(out, uint16(b.Dy()))
	out = binary.BigEndian.AppendUint16(out, uint16(b.Dx()))
	out = append(out, 4)
	for i := range 4 {
		hv := byte(0x11)
		if sub && (i == 0 || i == 3) {
			hv = 0x22
		}
		out = append(out, byte(i+1), hv, 0)
	}
	for _, s := range scans {
		out = append(out, s...)
	}
	return append(out, 0xFF, 0xD9)
}

// planes returns the four planes of img as a CMYK JPEG stores them
// (transform 0: inverted inks, black the darkness beyond 60 %) or a
// YCbCrK one (2: Y, Cb, Cr and that black).
func planes(img image.Image, transform byte) [4]*image.Gray {
	b := img.Bounds()
	var p [4]*image.Gray
	for i := range p {
		p[i] = image.NewGray(b)
	}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			v := [4]uint8{c.R, c.G, c.B, 255 - uint8(max(0, 102-int(min(c.R, c.G, c.B))))}
			if transform == 2 {
				v[0], v[1], v[2] = color.RGBToYCbCr(c.R, c.G, c.B)
			}
			for i := range p {
				p[i].SetGray(x, y, color.Gray{Y: v[i]})
			}
		}
	}
	return p
}

// variant is a JPEG of one kind, made from a picture.
type variant struct {
	name string
	make func(t testing.TB, img image.Image) []byte
}

func cjpeg(args ...string) func(testing.TB, image.Image) []byte {
	return func(t testing.TB, img image.Image) []byte {
		data, err := mediatest.Cjpeg(img, args...)
		return libjpeg(t, data, err)
	}
}

// variants are the kinds of JPEG image/jpeg decodes: baseline and
// progressive, each chroma subsampling, gray, RGB, CMYK and YCbCrK,
// restart intervals.
var variants = []variant{
	{"go-baseline-420", func(t testing.TB, img image.Image) []byte { return goJPEG(t, img, 85) }},
	{"go-gray", func(t testing.TB, img image.Image) []byte { return goJPEG(t, gray(img), 85) }},
	{"baseline-444", cjpeg("-sample", "1x1", "-quality", "92")},
	{"baseline-422", cjpeg("-sample", "2x1")},
	{"baseline-440", cjpeg("-sample", "1x2")},
	{"baseline-411", cjpeg("-sample", "4x1")},
	{"baseline-410", cjpeg("-sample", "4x2")},
	{"baseline-rgb", cjpeg("-rgb", "-quality", "90")},
	{"baseline-gray", cjpeg("-grayscale")},
	{"baseline-restart-row", cjpeg("-restart", "1")},
	{"baseline-restart-3", cjpeg("-sample", "1x1", "-restart", "3B")},
	{"optimized-huffman", cjpeg("-optimize", "-quality", "75")},
	{"progressive-420", cjpeg("-progressive")},
	{"progressive-444", cjpeg("-progressive", "-sample", "1x1", "-quality", "95")},
	{"progressive-422", cjpeg("-progressive", "-sample", "2x1")},
	{"progressive-gray", cjpeg("-progressive", "-grayscale")},
	// (image/jpeg reads a restart interval of a non-interleaved scan in MCUs
	// of the interleaved ones, not in blocks: a subsampled progressive JPEG
	// with restarts does not decode; with 1×1 sampling the two agree.)
	{"progressive-restart", cjpeg("-progressive", "-sample", "1x1", "-restart", "2")},
	{"cmyk", func(t testing.TB, img image.Image) []byte { return fourComponents(t, img, 0, false) }},
	{"cmyk-subsampled", func(t testing.TB, img image.Image) []byte { return fourComponents(t, img, 0, true) }},
	{"ycck", func(t testing.TB, img image.Image) []byte { return fourComponents(t, img, 2, false) }},
	{"ycck-subsampled", func(t testing.TB, img image.Image) []byte { return fourComponents(t, img, 2, true) }},
	{"cmyk-progressive", func(t testing.TB, img image.Image) []byte {
		data, err := mediatest.Jpegtran(fourComponents(t, img, 0, true), "-progressive")
		return libjpeg(t, data, err)
	}},
}

// sizes are the pictures' sizes: one of whole MCUs, one with partial
// MCUs on both edges, one narrower than a block at 1/8.
var sizes = [][2]int{{640, 480}, {203, 149}, {37, 21}}

// TestScaleOneIsImageJPEG: at scale 1 the decoder returns what image/jpeg
// does, type and pixels, for every kind of JPEG.
func TestScaleOneIsImageJPEG(t *testing.T) {
	for _, v := range variants {
		for _, sz := range sizes {
			data := v.make(t, mediatest.Scene(sz[0], sz[1]))
			want, err := jpeg.Decode(bytes.NewReader(data))
			if err != nil {
				t.Fatalf("%s %v: image/jpeg: %v", v.name, sz, err)
			}
			got, err := jpegscale.Decode(bytes.NewReader(data), 1)
			if err != nil {
				t.Fatalf("%s %v: %v", v.name, sz, err)
			}
			if err := samePixels(got, want); err != nil {
				t.Errorf("%s %v: %v", v.name, sz, err)
			}
		}
	}
}

// samePixels says how got and want differ, in type, bounds or pixels.
func samePixels(got, want image.Image) error {
	if fmt.Sprintf("%T", got) != fmt.Sprintf("%T", want) || got.Bounds() != want.Bounds() {
		return fmt.Errorf("%T %v, want %T %v", got, got.Bounds(), want, want.Bounds())
	}
	if yc, ok := want.(*image.YCbCr); ok && yc.SubsampleRatio != got.(*image.YCbCr).SubsampleRatio {
		return fmt.Errorf("subsampling %v, want %v", got.(*image.YCbCr).SubsampleRatio, yc.SubsampleRatio)
	}
	b := want.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if g, w := got.At(x, y), want.At(x, y); g != w {
				return fmt.Errorf("pixel (%d, %d) is %v, want %v", x, y, g, w)
			}
		}
	}
	return nil
}

// planeSamples returns the samples of a gray or YCbCr image as decoded,
// before any colour conversion: Y, or Y, Cb and Cr (upsampled to the
// pixel); nil for other images.
func planeSamples(img image.Image) (samples []float64, n int) {
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			switch m := img.(type) {
			case *image.Gray:
				samples, n = append(samples, float64(m.GrayAt(x, y).Y)), 1
			case *image.YCbCr:
				c := m.YCbCrAt(x, y)
				samples, n = append(samples, float64(c.Y), float64(c.Cb), float64(c.Cr)), 3
			default:
				return nil, 0
			}
		}
	}
	return samples, n
}

// channels returns img's samples, a row after another: the four inks of
// a CMYK image, the luma of a gray one, RGB for the others (converted as
// image/draw does).
func channels(img image.Image) (samples []float64, n int) {
	b := img.Bounds()
	switch m := img.(type) {
	case *image.CMYK:
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for _, v := range m.Pix[m.PixOffset(b.Min.X, y):m.PixOffset(b.Max.X, y)] {
				samples = append(samples, float64(v))
			}
		}
		return samples, 4
	case *image.Gray:
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for _, v := range m.Pix[m.PixOffset(b.Min.X, y):m.PixOffset(b.Max.X, y)] {
				samples = append(samples, float64(v))
			}
		}
		return samples, 1
	}
	rgba := image.NewRGBA(b)
	draw.Draw(rgba, b, img, b.Min, draw.Src)
	for i, v := range rgba.Pix {
		if i%4 != 3 {
			samples = append(samples, float64(v))
		}
	}
	return samples, 3
}

// padded returns image/jpeg's decode img with the pixels it decoded past
// the right and bottom edges, to whole blocks (the encoder's padding),
// where its type keeps them (gray and YCbCr images; the RGB and CMYK ones
// are copies of the image alone).
func padded(img image.Image) image.Image {
	switch m := img.(type) {
	case *image.YCbCr:
		p := *m
		p.Rect = image.Rect(0, 0, m.YStride, len(m.Y)/m.YStride)
		return &p
	case *image.Gray:
		p := *m
		p.Rect = image.Rect(0, 0, m.Stride, len(m.Pix)/m.Stride)
		return &p
	}
	return img
}

// boxCompare returns the samples of got (ow×oh, n channels) and of the
// full image (fw×fh) averaged over the squares of s×s pixels they cover,
// for each pixel of got whose square lies within the full image.
func boxCompare(got []float64, ow, oh int, full []float64, fw, fh, n, s int) (g, want []float64) {
	for oy := range oh {
		for ox := range ow {
			if (ox+1)*s > fw || (oy+1)*s > fh {
				continue
			}
			for c := range n {
				sum := 0.0
				for y := oy * s; y < oy*s+s; y++ {
					for x := ox * s; x < ox*s+s; x++ {
						sum += full[(y*fw+x)*n+c]
					}
				}
				want = append(want, sum/float64(s*s))
				g = append(g, got[(oy*ow+ox)*n+c])
			}
		}
	}
	return g, want
}

// psnr returns the peak signal-to-noise ratio of got against want, in dB
// (+Inf when equal), and the largest difference of one sample.
func psnr(got, want []float64) (float64, float64) {
	sum, worst := 0.0, 0.0
	for i := range got {
		d := got[i] - want[i]
		sum += d * d
		worst = max(worst, math.Abs(d))
	}
	if sum == 0 {
		return math.Inf(1), 0
	}
	return 10 * math.Log10(255*255/(sum/float64(len(got)))), worst
}

// maxPlaneDiff bounds the difference of a decoded sample (Y, Cb or Cr,
// or gray) from the average of the full decode's: the reduced inverse
// DCTs compute that average, so the difference is rounding (at most 0.5
// but for the one of the full decode's pixels) and where the full decode
// clipped a pixel that ringing took past 255 or below 0: measured 5.5 at
// the edges of the test picture's near-white windows, none elsewhere.
const maxPlaneDiff = 8

// minPSNR is what a scaled decode must reach against image/jpeg's full
// decode averaged over the same squares, in RGB (or CMYK inks). RGB
// differs more than the planes (maxPlaneDiff): the full decode converts
// each pixel to RGB and clips it before the average is taken, the scaled
// one converts the average, and a bright pixel beside a dark one under
// the same colour sample can have a component over 255 (as at the edges
// of the test picture's near-white windows: up to 50 levels apart at a
// few pixels). 38 dB is an RMS error of 3.2 levels; measured 46 to 60 dB
// on the 640×480 picture, 39 on the 37×21 one in 4:1:0 at 1/4 (60
// pixels, window edges among them). It guards what maxPlaneDiff does not
// check (RGB and CMYK images): one 2×2 square wrong by 100 levels among
// those 60 pixels is 28 dB.
const minPSNR = 38

// TestScaledIsBoxAverage: at 1/2, 1/4 and 1/8, the decode has the size of
// Size and is the full decode averaged over squares of 2, 4 and 8 pixels,
// for every kind of JPEG image/jpeg decodes.
func TestScaledIsBoxAverage(t *testing.T) {
	for _, v := range variants {
		for _, sz := range sizes {
			data := v.make(t, mediatest.Scene(sz[0], sz[1]))
			full, err := jpeg.Decode(bytes.NewReader(data))
			if err != nil {
				t.Fatalf("%s %v: image/jpeg: %v", v.name, sz, err)
			}
			pad := padded(full)
			fs, n := channels(pad)
			for _, s := range []int{2, 4, 8} {
				got, err := jpegscale.Decode(bytes.NewReader(data), s)
				if err != nil {
					t.Fatalf("%s %v at 1/%d: %v", v.name, sz, s, err)
				}
				ow, oh := jpegscale.Size(sz[0], sz[1], s)
				if got.Bounds() != image.Rect(0, 0, ow, oh) {
					t.Fatalf("%s %v at 1/%d: bounds %v, want %dx%d", v.name, sz, s, got.Bounds(), ow, oh)
				}
				if fmt.Sprintf("%T", got) != fmt.Sprintf("%T", full) {
					t.Errorf("%s %v at 1/%d: a %T, want a %T", v.name, sz, s, got, full)
				}
				if ps, pn := planeSamples(got); pn > 0 {
					full, _ := planeSamples(pad)
					ps, want := boxCompare(ps, ow, oh, full, pad.Bounds().Dx(), pad.Bounds().Dy(), pn, s)
					if _, worst := psnr(ps, want); worst > maxPlaneDiff {
						t.Errorf("%s %v at 1/%d: a sample %.1f from the averaged full decode's, want at most %d", v.name, sz, s, worst, maxPlaneDiff)
					}
				}
				gs, _ := channels(got)
				gs, want := boxCompare(gs, ow, oh, fs, pad.Bounds().Dx(), pad.Bounds().Dy(), n, s)
				if len(want) == 0 {
					continue
				}
				p, worst := psnr(gs, want)
				if p < minPSNR {
					t.Errorf("%s %v at 1/%d: PSNR %.1f dB against the averaged full decode (largest difference %.0f), want at least %d", v.name, sz, s, p, worst, minPSNR)
				}
				if sz[0] == 640 {
					t.Logf("%s at 1/%d: %.1f dB, largest difference %.1f", v.name, s, p, worst)
				}
			}
		}
	}
}

// TestColourNotUpsampled: at 1/2 a 4:2:0 image is returned 4:4:4 (its
// colour blocks take the full inverse DCT, no colour sample is repeated),
// at 1/4 a 4:1:1 one 4:4:4 too, and at 1/2 a 4:1:1 one 4:2:2.
func TestColourNotUpsampled(t *testing.T) {
	img := mediatest.Scene(160, 96)
	for _, c := range []struct {
		data  []byte
		scale int
		want  image.YCbCrSubsampleRatio
	}{
		{goJPEG(t, img, 85), 1, image.YCbCrSubsampleRatio420},
		{goJPEG(t, img, 85), 2, image.YCbCrSubsampleRatio444},
		{goJPEG(t, img, 85), 8, image.YCbCrSubsampleRatio444},
		{cjpeg("-sample", "4x1")(t, img), 2, image.YCbCrSubsampleRatio422},
		{cjpeg("-sample", "4x1")(t, img), 4, image.YCbCrSubsampleRatio444},
		{cjpeg("-sample", "2x1")(t, img), 2, image.YCbCrSubsampleRatio444},
	} {
		got, err := jpegscale.Decode(bytes.NewReader(c.data), c.scale)
		if err != nil {
			t.Fatal(err)
		}
		if r := got.(*image.YCbCr).SubsampleRatio; r != c.want {
			t.Errorf("at 1/%d: %v, want %v", c.scale, r, c.want)
		}
	}
}

// TestRefused: a scale other than 1, 2, 4 and 8 is refused; a truncated
// or corrupt file gives image/jpeg's error at every scale.
func TestRefused(t *testing.T) {
	data := goJPEG(t, mediatest.Scene(64, 48), 85)
	if _, err := jpegscale.Decode(bytes.NewReader(data), 3); err == nil || !strings.Contains(err.Error(), "scale") {
		t.Errorf("scale 3: %v", err)
	}
	for _, bad := range [][]byte{data[:len(data)/2], data[:200], append([]byte{0xFF, 0xD8, 0xFF, 0x01}, data[2:]...)} {
		_, want := jpeg.Decode(bytes.NewReader(bad))
		for _, s := range []int{1, 2, 4, 8} {
			_, err := jpegscale.Decode(bytes.NewReader(bad), s)
			if fmt.Sprint(err) != fmt.Sprint(want) {
				t.Errorf("at 1/%d: %v, want image/jpeg's %v", s, err, want)
			}
		}
	}
}

// FuzzDecode: no input makes the decoder panic at any scale, and where
// image/jpeg decodes a sequential JPEG, the decoder at scale 1 returns
// the same pixels. (A progressive one that image/jpeg decodes may differ
// when its coefficients overflow the 16 bits they are kept in, which no
// 8-bit encoder writes.)
func FuzzDecode(f *testing.F) {
	img := mediatest.Scene(48, 40)
	for _, v := range variants {
		f.Add(v.make(f, img))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := jpeg.DecodeConfig(bytes.NewReader(data))
		if err != nil || cfg.Width*cfg.Height > 1e6 {
			return
		}
		want, wantErr := jpeg.Decode(bytes.NewReader(data))
		for _, s := range []int{1, 2, 4, 8} {
			got, err := jpegscale.Decode(bytes.NewReader(data), s)
			if (err == nil) != (wantErr == nil) {
				t.Fatalf("at 1/%d: %v, image/jpeg: %v", s, err, wantErr)
			}
			if err != nil {
				continue
			}
			w, h := jpegscale.Size(cfg.Width, cfg.Height, s)
			if got.Bounds() != image.Rect(0, 0, w, h) {
				t.Fatalf("at 1/%d: bounds %v for %dx%d", s, got.Bounds(), cfg.Width, cfg.Height)
			}
			if s == 1 && !progressive(data) {
				if err := samePixels(got, want); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
}

// progressive says whether data has a progressive frame header.
func progressive(data []byte) bool {
	return bytes.Contains(data, []byte{0xFF, 0xC2})
}

// TestMemory: a sequential JPEG decoded at 1/2 allocates the planes of
// the half-size image and nothing of the full size; a progressive one
// adds its coefficients, 2 bytes each, and nothing else of the full size.
func TestMemory(t *testing.T) {
	const w, h = 1600, 1200
	img := mediatest.Scene(w, h)
	base := goJPEG(t, img, 85) // 4:2:0
	data, err := mediatest.Jpegtran(base, "-progressive")
	prog := libjpeg(t, data, err)
	// At 1/2, a 4:2:0 image is 4:4:4: three planes of w/2 × h/2.
	planes := 3 * (w / 2) * (h / 2)
	coefficients := 2 * (w*h + 2*(w/2)*(h/2))
	for _, c := range []struct {
		name string
		data []byte
		max  int
	}{
		{"baseline", base, planes},
		{"progressive", prog, planes + coefficients},
	} {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if _, err := jpegscale.Decode(bytes.NewReader(c.data), 2); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		// 64 KiB for the decoder itself (its tables) and the reader.
		alloc := int(after.TotalAlloc - before.TotalAlloc)
		if alloc > c.max+64<<10 {
			t.Errorf("%s at 1/2: allocated %d KiB, want at most %d KiB", c.name, alloc>>10, (c.max+64<<10)>>10)
		}
		t.Logf("%s at 1/2: allocated %d KiB (a full-size plane: %d KiB)", c.name, alloc>>10, w*h>>10)
	}
}

package mediatest

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"image"
	"image/color"
	"io"
	"os/exec"
)

// Images that cost a decoder minutes or gigabytes, made with real
// encoders: Go's, and libjpeg-turbo's jpegtran and cjpeg (Debian
// libjpeg-turbo-progs), which write progressive JPEGs.

// Flat returns a w×h picture of one colour, as a scan of a blank page or
// a sky is: every block's AC coefficients are zero.
func Flat(w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	c := color.RGBA{0xC8, 0xB4, 0xA0, 0xFF}
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = c.R, c.G, c.B, c.A
	}
	return img
}

// Jpegtran runs jpegtran with args on the JPEG data and returns its
// output; the error says when jpegtran is not installed.
func Jpegtran(data []byte, args ...string) ([]byte, error) {
	return run("jpegtran", bytes.NewReader(data), args...)
}

// Cjpeg encodes img with cjpeg and args (-progressive, -sample 1x1...).
func Cjpeg(img image.Image, args ...string) ([]byte, error) {
	pr, pw := io.Pipe()
	go func() {
		bw := bufio.NewWriterSize(pw, 1<<20)
		r := img.Bounds()
		fmt.Fprintf(bw, "P6\n%d %d\n255\n", r.Dx(), r.Dy())
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
				bw.Write([]byte{c.R, c.G, c.B})
			}
		}
		pw.CloseWithError(bw.Flush())
	}()
	return run("cjpeg", pr, args...)
}

func run(name string, stdin io.Reader, args ...string) ([]byte, error) {
	path, err := exec.LookPath(name)
	if err != nil {
		return nil, fmt.Errorf("%s is not installed (Debian libjpeg-turbo-progs): %w", name, err)
	}
	cmd := exec.Command(path, args...)
	cmd.Stdin = stdin
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s: %v: %s", name, err, stderr.String())
	}
	return out.Bytes(), nil
}

// RepeatLastScan returns the progressive JPEG data with its last scan
// (and the tables just before it) repeated n more times. The last scan of
// jpegtran's progressive script refines the AC coefficients; of a flat
// image, it is a few bytes of end-of-band runs, and Go's decoder still
// visits every block of the image for each copy.
func RepeatLastScan(data []byte, n int) []byte {
	last, run := -1, -1 // the last scan's start, the current run of DHTs'
	for i := 2; i+4 <= len(data) && data[i] == 0xFF && data[i+1] != 0xD9; {
		m := data[i+1]
		next := i + 2 + int(binary.BigEndian.Uint16(data[i+2:]))
		switch {
		case m == 0xC4 && run < 0:
			run = i
		case m == 0xDA:
			last = i
			if run >= 0 {
				last = run
			}
			next = nextMarkerAfterScan(data, next)
		}
		if m != 0xC4 {
			run = -1
		}
		i = next
	}
	end := len(data) - 2 // the EOI
	scan := data[last:end]
	out := append([]byte{}, data[:end]...)
	for range n {
		out = append(out, scan...)
	}
	return append(out, 0xFF, 0xD9)
}

// nextMarkerAfterScan returns the offset of the marker ending the
// entropy-coded data that starts at i.
func nextMarkerAfterScan(data []byte, i int) int {
	for ; i+1 < len(data); i++ {
		if data[i] == 0xFF && data[i+1] != 0 && (data[i+1] < 0xD0 || data[i+1] > 0xD7) {
			return i
		}
	}
	return len(data)
}

// InterlacedPNG16 writes to w a w×h PNG of 16-bit RGBA samples, Adam7
// interlaced, whose pixels are a smooth picture; rows are made as they
// are written, so memory stays small whatever the size.
func InterlacedPNG16(out io.Writer, w, h int) error {
	bw := bufio.NewWriterSize(out, 1<<20)
	bw.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := binary.BigEndian.AppendUint32(nil, uint32(w))
	ihdr = binary.BigEndian.AppendUint32(ihdr, uint32(h))
	bw.Write(Chunk("IHDR", append(ihdr, 16, 6, 0, 0, 1)))
	idat := &chunkWriter{w: bw, typ: "IDAT"}
	zw, _ := zlib.NewWriterLevel(idat, zlib.BestSpeed)
	passes := [7][4]int{{0, 0, 8, 8}, {4, 0, 8, 8}, {0, 4, 4, 8}, {2, 0, 4, 4}, {0, 2, 2, 4}, {1, 0, 2, 2}, {0, 1, 1, 2}}
	var row []byte
	for _, p := range passes {
		for y := p[1]; y < h; y += p[3] {
			row = append(row[:0], 0) // filter: none
			for x := p[0]; x < w; x += p[2] {
				r, g := uint16(x*65535/w), uint16(y*65535/h)
				row = binary.BigEndian.AppendUint16(row, r)
				row = binary.BigEndian.AppendUint16(row, g)
				row = binary.BigEndian.AppendUint16(row, r^g)
				row = binary.BigEndian.AppendUint16(row, 0xFFFF)
			}
			if len(row) > 1 {
				zw.Write(row)
			}
		}
	}
	zw.Close()
	idat.flush()
	bw.Write(Chunk("IEND", nil))
	return bw.Flush()
}

// chunkWriter writes what it is given as chunks of typ of up to 1 MiB.
type chunkWriter struct {
	w   io.Writer
	typ string
	buf []byte
}

func (c *chunkWriter) Write(p []byte) (int, error) {
	c.buf = append(c.buf, p...)
	if len(c.buf) >= 1<<20 {
		c.flush()
	}
	return len(p), nil
}

func (c *chunkWriter) flush() {
	if len(c.buf) > 0 {
		c.w.Write(Chunk(c.typ, c.buf))
		c.buf = c.buf[:0]
	}
}

// JPEGDeclaring returns a JPEG whose headers declare a w×h image, of the
// components' sampling factors sampling (0x22, 0x11, 0x11 for 4:2:0),
// progressive or not, with scans scans of a few bytes each: a file whose
// structure checks, that a decoder refuses or decodes into noise, for
// what its headers make a decoder spend.
func JPEGDeclaring(w, h int, progressive bool, sampling []byte, scans int) []byte {
	out := []byte{0xFF, 0xD8}
	out = append(out, segment(0xDB, append([]byte{0}, bytes.Repeat([]byte{1}, 64)...))...)
	sof := []byte{8, byte(h >> 8), byte(h), byte(w >> 8), byte(w), byte(len(sampling))}
	for i, s := range sampling {
		sof = append(sof, byte(i+1), s, 0)
	}
	m := byte(0xC0)
	if progressive {
		m = 0xC2
	}
	out = append(out, segment(m, sof)...)
	for range scans {
		sos := []byte{byte(len(sampling))}
		for i := range sampling {
			sos = append(sos, byte(i+1), 0)
		}
		out = append(out, segment(0xDA, append(sos, 0, 63, 0))...)
		out = append(out, 0x12, 0x34, 0x56)
	}
	return append(out, 0xFF, 0xD9)
}

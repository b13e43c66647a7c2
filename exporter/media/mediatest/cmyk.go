package mediatest

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"image"
	"image/jpeg"
)

// CMYKJPEG returns a baseline JPEG of w×h CMYK pixels (Adobe transform 0:
// inverted inks, as Photoshop writes them) of a smooth picture, none of
// the encoders at hand writing CMYK: each of the four planes is a gray
// JPEG of Go's encoder whose tables and scan are taken as they are, as
// four non-interleaved scans. jpegtran -progressive makes a progressive
// one of it (Jpegtran).
func CMYKJPEG(w, h int) []byte {
	var scans [4][]byte
	var tables []byte
	plane := image.NewGray(image.Rect(0, 0, w, h))
	for i := range scans {
		for y := range h {
			row := plane.Pix[y*plane.Stride : y*plane.Stride+w]
			for x := range row {
				row[x] = uint8((x*(i+1)*255/w + y*255/h) / (i + 2))
			}
		}
		var b bytes.Buffer
		jpeg.Encode(&b, plane, &jpeg.Options{Quality: 80}) // into memory: cannot fail
		data := b.Bytes()
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
	out := []byte{0xFF, 0xD8, 0xFF, 0xEE, 0, 14}
	out = append(out, "Adobe\x00\x64\x00\x00\x00\x00\x00"...)
	out = append(out, tables...)
	out = append(out, 0xFF, 0xC0, 0, 8+3*4, 8)
	out = binary.BigEndian.AppendUint16(out, uint16(h))
	out = binary.BigEndian.AppendUint16(out, uint16(w))
	out = append(out, 4)
	for i := range 4 {
		out = append(out, byte(i+1), 0x11, 0)
	}
	for _, s := range scans {
		out = append(out, s...)
	}
	return append(out, 0xFF, 0xD9)
}

// PNG16 returns a w×h PNG of 16-bit RGB samples, not interlaced, of a
// smooth picture. Each row is filtered against the one above it (filter
// Up), from which it differs by one constant, so that a 7000×7000 one is
// a few MB.
func PNG16(w, h int) []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := binary.BigEndian.AppendUint32(nil, uint32(w))
	ihdr = binary.BigEndian.AppendUint32(ihdr, uint32(h))
	b.Write(Chunk("IHDR", append(ihdr, 16, 2, 0, 0, 0)))
	idat := &chunkWriter{w: &b, typ: "IDAT"}
	zw, _ := zlib.NewWriterLevel(idat, zlib.BestSpeed)
	row, prev := make([]byte, 1+6*w), make([]byte, 1+6*w)
	for y := range h {
		g := uint16(y * 65535 / h)
		for x := range w {
			binary.BigEndian.PutUint16(row[1+6*x:], uint16(x*65535/w))
			binary.BigEndian.PutUint16(row[3+6*x:], g)
			binary.BigEndian.PutUint16(row[5+6*x:], 0x8000)
		}
		out := append([]byte{2}, row[1:]...) // filter: Up
		for i := 1; i < len(out); i++ {
			out[i] -= prev[i]
		}
		zw.Write(out)
		row, prev = prev, row
	}
	zw.Close()
	idat.flush()
	b.Write(Chunk("IEND", nil))
	return b.Bytes()
}

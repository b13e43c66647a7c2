package media

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// Kept is what a stripped image keeps for correct display, which its
// renditions carry too.
type Kept struct {
	// Orientation is the EXIF orientation (2 to 8), 0 when the image is
	// shown as stored.
	Orientation int
	// ICC is the image's colour profile, nil when it has none.
	ICC []byte
}

// maxICC bounds the colour profile kept in memory for renditions.
const maxICC = 1 << 20

// Strip copies the image src of format f to dst without its metadata:
// for JPEG it drops every APPn and COM segment but JFIF (APP0), the ICC
// profile (APP2) and Adobe's colour transform (APP14), and replaces EXIF
// by a minimal block holding only the orientation (when not 1); for PNG it
// keeps the chunks display needs (image data, palette, transparency,
// colour space and animation) and drops text, time and EXIF chunks (an
// orientation is kept as a minimal eXIf); for GIF it drops comments and
// application extensions other than looping. Data after the image's end
// marker (an appended video, a trailer) is dropped. The image data is
// copied byte for byte. It returns what was kept for display, or an error
// when src is not a well-formed image of format f.
func Strip(dst io.Writer, src io.Reader, f Format) (Kept, error) {
	br, ok := src.(*bufio.Reader)
	if !ok {
		br = bufio.NewReaderSize(src, 32<<10)
	}
	bw := bufio.NewWriterSize(dst, 32<<10)
	k, err := strip(bw, br, f)
	if err != nil {
		return k, err
	}
	return k, bw.Flush()
}

func strip(dst io.Writer, src *bufio.Reader, f Format) (Kept, error) {
	switch f {
	case JPEG:
		return stripJPEG(dst, src)
	case PNG:
		return stripPNG(dst, src)
	case GIF:
		return Kept{}, stripGIF(dst, src)
	}
	return Kept{}, fmt.Errorf("%s is not an image", f)
}

// truncated wraps the error of a read that ended early.
func truncated(f Format, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%s that is truncated (it ends before its end marker)", f.Name())
	}
	return err
}

// JPEG markers.
const (
	mSOI   = 0xD8
	mEOI   = 0xD9
	mSOS   = 0xDA
	mAPP0  = 0xE0
	mAPP1  = 0xE1
	mAPP2  = 0xE2
	mAPP14 = 0xEE
	mCOM   = 0xFE
)

var (
	exifHeader = []byte("Exif\x00\x00")
	iccHeader  = []byte("ICC_PROFILE\x00")
)

func stripJPEG(dst io.Writer, r *bufio.Reader) (Kept, error) {
	var k Kept
	var soi [2]byte
	if _, err := io.ReadFull(r, soi[:]); err != nil || soi != [2]byte{0xFF, mSOI} {
		return k, errors.New("a JPEG image without a start marker")
	}
	if _, err := dst.Write(soi[:]); err != nil {
		return k, err
	}
	var icc []byte
	iccTooLarge, frame, scan, exifDone := false, false, false, false
	payload := make([]byte, 0, 1<<16)
	m, err := nextMarker(r)
	for {
		if err != nil {
			return k, truncated(JPEG, err)
		}
		switch {
		case m == mEOI:
			if !frame || !scan {
				return k, errors.New("a JPEG image with no image data")
			}
			if !iccTooLarge {
				k.ICC = icc
			}
			_, err := dst.Write([]byte{0xFF, mEOI})
			return k, err
		case m >= 0xD0 && m <= 0xD7 || m == 0x01:
			// Standalone markers carry no length.
			if _, err := dst.Write([]byte{0xFF, m}); err != nil {
				return k, err
			}
			m, err = nextMarker(r)
			continue
		case m == mSOI:
			return k, errors.New("a JPEG image with a second start marker")
		}
		var lb [2]byte
		if _, err := io.ReadFull(r, lb[:]); err != nil {
			return k, truncated(JPEG, err)
		}
		n := int(binary.BigEndian.Uint16(lb[:]))
		if n < 2 {
			return k, fmt.Errorf("a JPEG image with a segment length of %d", n)
		}
		payload = payload[:n-2]
		if _, err := io.ReadFull(r, payload); err != nil {
			return k, truncated(JPEG, err)
		}
		keep := true
		switch {
		case m == mAPP0:
			keep = bytes.HasPrefix(payload, []byte("JFIF\x00"))
		case m == mAPP1 && bytes.HasPrefix(payload, exifHeader) && !exifDone:
			exifDone = true
			keep = false
			if o := exifOrientation(payload[len(exifHeader):]); o > 1 {
				k.Orientation = o
				if _, err := dst.Write(jpegSegment(mAPP1, append(append([]byte{}, exifHeader...), orientationTIFF(o)...))); err != nil {
					return k, err
				}
			}
		case m == mAPP2 && bytes.HasPrefix(payload, iccHeader):
			// ICC_PROFILE\0, sequence number, count, then the data.
			if len(payload) > len(iccHeader)+2 {
				if len(icc)+len(payload) > maxICC {
					iccTooLarge = true
				} else {
					icc = append(icc, payload[len(iccHeader)+2:]...)
				}
			}
		case m == mAPP14:
			keep = bytes.HasPrefix(payload, []byte("Adobe"))
		case m > mAPP0 && m <= 0xEF || m == mCOM:
			keep = false
		case m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC:
			frame = true
		}
		if keep {
			if _, err := dst.Write([]byte{0xFF, m, lb[0], lb[1]}); err != nil {
				return k, err
			}
			if _, err := dst.Write(payload); err != nil {
				return k, err
			}
		}
		if m != mSOS {
			m, err = nextMarker(r)
			continue
		}
		if !frame {
			return k, errors.New("a JPEG image with scan data before its frame header")
		}
		scan = true
		m, err = copyScan(dst, r)
	}
}

// nextMarker reads the next marker (0xFF, fill bytes, the code) and
// returns its code.
func nextMarker(r *bufio.Reader) (byte, error) {
	b, err := r.ReadByte()
	if err != nil {
		return 0, err
	}
	if b != 0xFF {
		return 0, errors.New("a JPEG image with bytes where a marker should be")
	}
	for {
		b, err = r.ReadByte()
		if err != nil || b != 0xFF {
			return b, err
		}
	}
}

// copyScan copies entropy-coded data (with its stuffed bytes and restart
// markers) to dst and returns the code of the marker that ends it.
func copyScan(dst io.Writer, r *bufio.Reader) (byte, error) {
	for {
		chunk, err := r.ReadSlice(0xFF)
		if len(chunk) > 0 {
			body := chunk
			if err == nil {
				body = chunk[:len(chunk)-1]
			}
			if _, werr := dst.Write(body); werr != nil {
				return 0, werr
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			return 0, err
		}
		// After 0xFF: 0x00 is a stuffed byte, D0-D7 a restart marker, more
		// 0xFF fill; anything else ends the scan.
		b, err := r.ReadByte()
		for err == nil && b == 0xFF {
			b, err = r.ReadByte()
		}
		if err != nil {
			return 0, err
		}
		if b == 0x00 || b >= 0xD0 && b <= 0xD7 {
			if _, err := dst.Write([]byte{0xFF, b}); err != nil {
				return 0, err
			}
			continue
		}
		return b, nil
	}
}

// jpegSegment returns the segment with marker m and payload p.
func jpegSegment(m byte, p []byte) []byte {
	out := []byte{0xFF, m, 0, 0}
	binary.BigEndian.PutUint16(out[2:], uint16(len(p)+2))
	return append(out, p...)
}

// exifOrientation returns the orientation tag of a TIFF-structured EXIF
// block, or 0 when it has none or does not parse.
func exifOrientation(t []byte) int {
	if len(t) < 8 {
		return 0
	}
	var bo binary.ByteOrder
	switch string(t[:2]) {
	case "II":
		bo = binary.LittleEndian
	case "MM":
		bo = binary.BigEndian
	default:
		return 0
	}
	off := int(bo.Uint32(t[4:]))
	if off < 8 || off+2 > len(t) {
		return 0
	}
	n := int(bo.Uint16(t[off:]))
	for i := range n {
		e := off + 2 + 12*i
		if e+12 > len(t) {
			return 0
		}
		if bo.Uint16(t[e:]) == 0x0112 && bo.Uint16(t[e+2:]) == 3 {
			if o := int(bo.Uint16(t[e+8:])); o >= 1 && o <= 8 {
				return o
			}
			return 0
		}
	}
	return 0
}

// orientationTIFF returns a TIFF block whose only tag is the orientation
// o: what EXIF display needs, and nothing else.
func orientationTIFF(o int) []byte {
	t := []byte("MM\x00\x2a\x00\x00\x00\x08" + // header, IFD0 at 8
		"\x00\x01" + // one entry
		"\x01\x12\x00\x03\x00\x00\x00\x01\x00\x00\x00\x00" + // orientation, SHORT, 1
		"\x00\x00\x00\x00") // no next IFD
	t[8+2+8+1] = byte(o)
	return t
}

// pngKeep lists the PNG chunks a stripped image keeps: the critical ones,
// transparency, colour space and animation.
var pngKeep = map[string]bool{
	"IHDR": true, "PLTE": true, "IDAT": true, "IEND": true, "tRNS": true,
	"cHRM": true, "gAMA": true, "iCCP": true, "sBIT": true, "sRGB": true, "cICP": true, "mDCV": true, "cLLI": true,
	"acTL": true, "fcTL": true, "fdAT": true,
}

// maxPNGChunk bounds a PNG chunk's length (the format's own limit).
const maxPNGChunk = 1<<31 - 1

func stripPNG(dst io.Writer, r *bufio.Reader) (Kept, error) {
	var k Kept
	var sig [8]byte
	if _, err := io.ReadFull(r, sig[:]); err != nil || string(sig[:]) != "\x89PNG\r\n\x1a\n" {
		return k, errors.New("a PNG image without its signature")
	}
	if _, err := dst.Write(sig[:]); err != nil {
		return k, err
	}
	first := true
	crc := crc32.NewIEEE()
	for {
		var hdr [8]byte
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return k, truncated(PNG, err)
		}
		n := int64(binary.BigEndian.Uint32(hdr[:4]))
		typ := string(hdr[4:])
		if n > maxPNGChunk {
			return k, fmt.Errorf("a PNG image with a chunk of %d bytes", n)
		}
		if first && typ != "IHDR" {
			return k, errors.New("a PNG image that does not start with its header chunk")
		}
		first = false
		critical := typ[0] >= 'A' && typ[0] <= 'Z'
		if critical && !pngKeep[typ] {
			return k, fmt.Errorf("a PNG image with an unknown critical chunk %q", typ)
		}
		crc.Reset()
		crc.Write(hdr[4:])
		var body io.Writer = crc
		var kept []byte
		keep := pngKeep[typ]
		collect := (typ == "eXIf" || typ == "iCCP") && n <= maxICC
		var buf bytes.Buffer
		switch {
		case keep && !collect:
			if _, err := dst.Write(hdr[:]); err != nil {
				return k, err
			}
			body = io.MultiWriter(crc, dst)
		case collect:
			body = io.MultiWriter(crc, &buf)
		}
		if _, err := io.CopyN(body, r, n); err != nil {
			return k, truncated(PNG, err)
		}
		var sum [4]byte
		if _, err := io.ReadFull(r, sum[:]); err != nil {
			return k, truncated(PNG, err)
		}
		if binary.BigEndian.Uint32(sum[:]) != crc.Sum32() {
			return k, fmt.Errorf("a PNG image whose %q chunk fails its checksum: corrupt", typ)
		}
		switch {
		case typ == "iCCP" && collect:
			if _, err := dst.Write(hdr[:]); err != nil {
				return k, err
			}
			kept = buf.Bytes()
			if _, err := dst.Write(kept); err != nil {
				return k, err
			}
			k.ICC = iccpProfile(kept)
		case typ == "eXIf" && collect:
			if o := exifOrientation(buf.Bytes()); o > 1 {
				k.Orientation = o
				if _, err := dst.Write(pngChunk("eXIf", orientationTIFF(o))); err != nil {
					return k, err
				}
			}
			continue
		}
		if keep {
			if _, err := dst.Write(sum[:]); err != nil {
				return k, err
			}
		}
		if typ == "IEND" {
			return k, nil
		}
	}
}

// pngChunk returns the PNG chunk of type typ with data d.
func pngChunk(typ string, d []byte) []byte {
	out := make([]byte, 8, 12+len(d))
	binary.BigEndian.PutUint32(out, uint32(len(d)))
	copy(out[4:], typ)
	out = append(out, d...)
	return binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(out[4:]))
}

func stripGIF(dst io.Writer, r *bufio.Reader) error {
	var hdr [13]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return truncated(GIF, err)
	}
	if _, err := dst.Write(hdr[:]); err != nil {
		return err
	}
	if hdr[10]&0x80 != 0 {
		if _, err := io.CopyN(dst, r, 3<<(hdr[10]&7+1)); err != nil {
			return truncated(GIF, err)
		}
	}
	images := 0
	for {
		b, err := r.ReadByte()
		if err != nil {
			return truncated(GIF, err)
		}
		switch b {
		case 0x3B: // trailer
			if images == 0 {
				return errors.New("a GIF image with no image data")
			}
			_, err := dst.Write([]byte{b})
			return err
		case 0x2C: // image descriptor
			var d [9]byte
			if _, err := io.ReadFull(r, d[:]); err != nil {
				return truncated(GIF, err)
			}
			if _, err := dst.Write(append([]byte{b}, d[:]...)); err != nil {
				return err
			}
			if d[8]&0x80 != 0 {
				if _, err := io.CopyN(dst, r, 3<<(d[8]&7+1)); err != nil {
					return truncated(GIF, err)
				}
			}
			lzw, err := r.ReadByte()
			if err != nil {
				return truncated(GIF, err)
			}
			if _, err := dst.Write([]byte{lzw}); err != nil {
				return err
			}
			if err := gifBlocks(dst, r); err != nil {
				return err
			}
			images++
		case 0x21: // extension
			label, err := r.ReadByte()
			if err != nil {
				return truncated(GIF, err)
			}
			keep := label == 0xF9 || label == 0x01 // graphic control, plain text
			var first []byte
			if label == 0xFF {
				// The application's identifier is the first sub-block:
				// keep looping (NETSCAPE2.0, ANIMEXTS1.0), drop XMP and
				// the rest.
				n, err := r.ReadByte()
				if err != nil {
					return truncated(GIF, err)
				}
				first = make([]byte, int(n))
				if _, err := io.ReadFull(r, first); err != nil {
					return truncated(GIF, err)
				}
				keep = string(first) == "NETSCAPE2.0" || string(first) == "ANIMEXTS1.0"
				first = append([]byte{n}, first...)
			}
			w := io.Discard
			if keep {
				w = dst
				if _, err := dst.Write(append([]byte{b, label}, first...)); err != nil {
					return err
				}
			}
			if label == 0xFF && first[0] == 0 {
				// The identifier block was the terminator.
				continue
			}
			if err := gifBlocks(w, r); err != nil {
				return err
			}
		default:
			return fmt.Errorf("a GIF image with an unknown block 0x%02x", b)
		}
	}
}

// gifBlocks copies data sub-blocks up to and including their terminator.
func gifBlocks(dst io.Writer, r *bufio.Reader) error {
	for {
		n, err := r.ReadByte()
		if err != nil {
			return truncated(GIF, err)
		}
		if _, err := dst.Write([]byte{n}); err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		if _, err := io.CopyN(dst, r, int64(n)); err != nil {
			return truncated(GIF, err)
		}
	}
}

// iccpProfile returns the profile of a PNG iCCP chunk's data (a name, a
// compression method and the zlib-compressed profile), nil when it does
// not decompress within maxICC.
func iccpProfile(d []byte) []byte {
	i := bytes.IndexByte(d, 0)
	if i < 0 || i+2 > len(d) || d[i+1] != 0 {
		return nil
	}
	zr, err := zlib.NewReader(bytes.NewReader(d[i+2:]))
	if err != nil {
		return nil
	}
	defer zr.Close()
	p, err := io.ReadAll(io.LimitReader(zr, maxICC+1))
	if err != nil || len(p) > maxICC {
		return nil
	}
	return p
}

package media

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// JPEG markers.
const (
	mSOI   = 0xD8
	mEOI   = 0xD9
	mSOS   = 0xDA
	mDQT   = 0xDB
	mDRI   = 0xDD
	mDHT   = 0xC4
	mDAC   = 0xCC
	mAPP0  = 0xE0
	mAPP1  = 0xE1
	mAPP2  = 0xE2
	mAPP14 = 0xEE
	mCOM   = 0xFE
)

var (
	exifHeader  = []byte("Exif\x00\x00")
	iccHeader   = []byte("ICC_PROFILE\x00")
	jfifHeader  = []byte("JFIF\x00")
	adobeHeader = []byte("Adobe")
)

// maxPending bounds the table segments kept between two scans.
const maxPending = 1 << 20

// jpegStripper copies a JPEG's segments that display needs, rebuilt where
// they could carry more than that, and drops every other one.
type jpegStripper struct {
	dst     io.Writer
	r       *bufio.Reader
	kept    Kept
	icc     []byte
	iccBig  bool // the profile is over maxICC: dropped
	exif    bool // the EXIF block was seen (later ones are dropped)
	frame   bool // a frame header was seen
	scan    bool // a scan was seen
	header  jpegFrame
	payload []byte
	// pending holds the table segments after a scan until the next one:
	// written if another scan follows, dropped at the end of the image.
	pending bytes.Buffer
}

func stripJPEG(dst io.Writer, r *bufio.Reader) (Kept, DecodeCost, error) {
	s, err := newJPEGStripper(dst, r).run()
	return s.kept, s.header.cost(), err
}

func newJPEGStripper(dst io.Writer, r *bufio.Reader) *jpegStripper {
	return &jpegStripper{dst: dst, r: r, payload: make([]byte, 0, 1<<16)}
}

// run strips the image and returns s.
func (s *jpegStripper) run() (*jpegStripper, error) {
	r, dst := s.r, s.dst
	var soi [2]byte
	if _, err := io.ReadFull(r, soi[:]); err != nil || soi != [2]byte{0xFF, mSOI} {
		return s, errors.New("a JPEG image without a start marker")
	}
	if _, err := dst.Write(soi[:]); err != nil {
		return s, err
	}
	m, err := nextMarker(r)
	for {
		switch {
		case err != nil:
			return s, truncated(JPEG, err)
		case m == mEOI:
			return s, s.end()
		case m == mSOI:
			return s, errors.New("a JPEG image with a second start marker")
		case m >= 0xD0 && m <= 0xD7 || m == 0x01:
			// A restart marker outside a scan, or TEM: no length, nothing
			// to display.
			m, err = nextMarker(r)
		default:
			m, err = s.segment(m)
		}
	}
}

// end finishes the image at its end marker.
func (s *jpegStripper) end() error {
	if !s.frame || !s.scan {
		return errors.New("a JPEG image with no image data")
	}
	_, err := s.dst.Write([]byte{0xFF, mEOI})
	return err
}

// segment reads the segment of marker m, writes what display needs of it
// and returns the next marker (after the scan data, for a scan).
func (s *jpegStripper) segment(m byte) (byte, error) {
	p, err := s.read()
	if err != nil {
		return 0, err
	}
	out, err := s.keep(m, p)
	if err != nil {
		return 0, err
	}
	if m != mSOS {
		if s.scan && out != nil {
			if s.pending.Len()+len(out) > maxPending {
				return 0, fmt.Errorf("a JPEG image with more than %d KiB of tables between two scans", maxPending>>10)
			}
			s.pending.Write(out)
		} else if _, err := s.dst.Write(out); err != nil {
			return 0, err
		}
		return nextMarker(s.r)
	}
	if !s.frame {
		return 0, errors.New("a JPEG image with scan data before its frame header")
	}
	if _, err := s.pending.WriteTo(s.dst); err != nil {
		return 0, err
	}
	if _, err := s.dst.Write(out); err != nil {
		return 0, err
	}
	s.scan = true
	return copyScan(s.dst, s.r)
}

// read reads a segment's length and payload (valid until the next read).
func (s *jpegStripper) read() ([]byte, error) {
	var lb [2]byte
	if _, err := io.ReadFull(s.r, lb[:]); err != nil {
		return nil, truncated(JPEG, err)
	}
	n := int(binary.BigEndian.Uint16(lb[:]))
	if n < 2 {
		return nil, fmt.Errorf("a JPEG image with a segment length of %d", n)
	}
	s.payload = s.payload[:n-2]
	if _, err := io.ReadFull(s.r, s.payload); err != nil {
		return nil, truncated(JPEG, err)
	}
	return s.payload, nil
}

// keep returns the segment to publish for the segment of marker m with
// payload p, nil for none. The application segments display needs are
// read before the first scan only; after it, only tables for the next
// scan are.
func (s *jpegStripper) keep(m byte, p []byte) ([]byte, error) {
	switch {
	case isFrame(m):
		if s.frame {
			return nil, errors.New("a JPEG image with a second frame header")
		}
		s.frame = true
		var err error
		s.header, err = parseFrame(m, p)
		return append(s.profile(), jpegSegment(m, p)...), err
	case m == mSOS:
		s.header.scans++
		return jpegSegment(m, p), nil
	case m == mDHT || m == mDQT || m == mDRI || m == mDAC:
		return jpegSegment(m, p), nil
	case s.scan:
		return nil, nil
	case m == mAPP0:
		return jfif(p), nil
	case m == mAPP1:
		return s.exifSegment(p), nil
	case m == mAPP2:
		return s.iccSegment(p), nil
	case m == mAPP14:
		return adobe(p), nil
	}
	// Comments, other applications' segments, reserved and unknown
	// markers: none is needed to show the image.
	return nil, nil
}

// isFrame reports whether m starts a frame (SOF0 to SOF15: C0 to CF but
// DHT, JPG and DAC).
func isFrame(m byte) bool {
	return m >= 0xC0 && m <= 0xCF && m != mDHT && m != 0xC8 && m != mDAC
}

// jfif rebuilds a JFIF segment from its fixed fields (version, density
// unit and densities) without its thumbnail; nil for another APP0.
func jfif(p []byte) []byte {
	const fixed = 5 + 2 + 1 + 2 + 2 // "JFIF\0", version, unit, densities
	if !bytes.HasPrefix(p, jfifHeader) || len(p) < fixed+2 {
		return nil
	}
	return jpegSegment(mAPP0, append(append([]byte{}, p[:fixed]...), 0, 0))
}

// adobe rebuilds Adobe's APP14 segment from its fixed fields (version,
// flags and the colour transform, which says how to read the channels);
// nil for another APP14.
func adobe(p []byte) []byte {
	const fixed = 5 + 2 + 2 + 2 + 1
	if !bytes.HasPrefix(p, adobeHeader) || len(p) < fixed {
		return nil
	}
	return jpegSegment(mAPP14, p[:fixed])
}

// exifSegment returns, for the first EXIF block, a minimal one holding
// only its orientation (nil when that is 1 or absent); nil for any other
// APP1 (XMP...).
func (s *jpegStripper) exifSegment(p []byte) []byte {
	if !bytes.HasPrefix(p, exifHeader) || s.exif {
		return nil
	}
	s.exif = true
	o := exifOrientation(p[len(exifHeader):])
	if o <= 1 {
		return nil
	}
	s.kept.Orientation = o
	return jpegSegment(mAPP1, append(append([]byte{}, exifHeader...), orientationTIFF(o)...))
}

// iccSegment collects a piece of the ICC profile (an APP2 segment: its
// header is fixed, the rest is the profile) for profile to rebuild before
// the frame header; any other APP2 is dropped.
func (s *jpegStripper) iccSegment(p []byte) []byte {
	// ICC_PROFILE\0, sequence number, count, then the data.
	if !bytes.HasPrefix(p, iccHeader) || len(p) <= len(iccHeader)+2 || s.frame {
		return nil
	}
	if len(s.icc)+len(p) > maxICC {
		s.iccBig = true
	} else {
		s.icc = append(s.icc, p[len(iccHeader)+2:]...)
	}
	return nil
}

// profile returns the segments of the image's ICC profile, cleaned
// (cleanICC), and keeps it for the renditions; nil when the image has
// none, or one too large or malformed, which is dropped.
func (s *jpegStripper) profile() []byte {
	if s.iccBig || len(s.icc) == 0 {
		return nil
	}
	s.kept.ICC = cleanICC(s.icc)
	return iccSegments(s.kept.ICC)
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

package media

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
)

// pngCopied lists the PNG chunks a stripped image copies as they are: the
// image data, palette and transparency, colour space and animation, each
// with the length its data must have (0: any length).
var pngCopied = map[string]int{
	"IHDR": 13, "PLTE": 0, "IDAT": 0, "IEND": 0, "tRNS": 0,
	"cHRM": 32, "gAMA": 4, "sRGB": 1, "cICP": 4, "mDCV": 24, "cLLI": 8,
	"acTL": 8, "fcTL": 26, "fdAT": 0,
}

// pngMaxSBIT bounds sBIT's length: one byte per channel, 1 to 4.
const pngMaxSBIT = 4

// iccName is the profile name a stripped PNG's iCCP chunk carries, the
// name libpng gives a profile.
const iccName = "ICC Profile"

// maxPNGChunk bounds a PNG chunk's length (the format's own limit).
const maxPNGChunk = 1<<31 - 1

// pngStripper copies a PNG's chunks that display needs and drops the
// others; the colour profile and orientation are rebuilt.
type pngStripper struct {
	dst  io.Writer
	r    *bufio.Reader
	kept Kept
	crc  hash.Hash32
	ihdr bytes.Buffer // the header chunk's data
}

func stripPNG(dst io.Writer, r *bufio.Reader) (Kept, DecodeCost, error) {
	s := &pngStripper{dst: dst, r: r, crc: crc32.NewIEEE()}
	err := s.run()
	var cost DecodeCost
	if s.ihdr.Len() == 13 {
		cost = pngCost(s.ihdr.Bytes())
	}
	return s.kept, cost, err
}

func (s *pngStripper) run() error {
	var sig [8]byte
	if _, err := io.ReadFull(s.r, sig[:]); err != nil || string(sig[:]) != "\x89PNG\r\n\x1a\n" {
		return errors.New("a PNG image without its signature")
	}
	if _, err := s.dst.Write(sig[:]); err != nil {
		return err
	}
	for first := true; ; first = false {
		typ, err := s.chunk(first)
		if err != nil || typ == "IEND" {
			return err
		}
	}
}

// chunk reads one chunk, checks it and writes what display needs of it;
// it returns the chunk's type.
func (s *pngStripper) chunk(first bool) (string, error) {
	var hdr [8]byte
	if _, err := io.ReadFull(s.r, hdr[:]); err != nil {
		return "", truncated(PNG, err)
	}
	n := int64(binary.BigEndian.Uint32(hdr[:4]))
	typ := string(hdr[4:])
	switch _, copied := pngCopied[typ]; {
	case n > maxPNGChunk:
		return typ, fmt.Errorf("a PNG image with a chunk of %d bytes", n)
	case first && typ != "IHDR":
		return typ, errors.New("a PNG image that does not start with its header chunk")
	case !first && typ == "IHDR":
		return typ, errors.New("a PNG image with a second header chunk")
	case typ[0] >= 'A' && typ[0] <= 'Z' && !copied:
		return typ, fmt.Errorf("a PNG image with an unknown critical chunk %q", typ)
	case typ == "IHDR" && n != 13:
		return typ, fmt.Errorf("a PNG image whose header chunk has %d bytes", n)
	}
	s.crc.Reset()
	s.crc.Write(hdr[4:])
	if copied(typ, n) {
		return typ, s.copy(hdr, n)
	}
	var data []byte
	if (typ == "eXIf" || typ == "iCCP") && n <= maxICC {
		data = make([]byte, n)
	}
	if err := s.body(typ, data, n); err != nil {
		return typ, err
	}
	return typ, s.rebuild(typ, data)
}

// copied reports whether a chunk of type typ and length n is copied as
// it is: a kept chunk of the length its kind has.
func copied(typ string, n int64) bool {
	want, ok := pngCopied[typ]
	switch {
	case typ == "sBIT":
		return n >= 1 && n <= pngMaxSBIT
	case !ok:
		return false
	}
	return want == 0 || n == int64(want)
}

// copy copies a chunk whose header is hdr and data n bytes to dst.
func (s *pngStripper) copy(hdr [8]byte, n int64) error {
	if _, err := s.dst.Write(hdr[:]); err != nil {
		return err
	}
	w := io.MultiWriter(s.crc, s.dst)
	if string(hdr[4:]) == "IHDR" {
		w = io.MultiWriter(w, &s.ihdr)
	}
	if _, err := io.CopyN(w, s.r, n); err != nil {
		return truncated(PNG, err)
	}
	sum, err := s.checksum(string(hdr[4:]))
	if err != nil {
		return err
	}
	_, err = s.dst.Write(sum[:])
	return err
}

// body reads the n bytes of data of a chunk of type typ into data
// (discarding them when data is nil) and checks its checksum.
func (s *pngStripper) body(typ string, data []byte, n int64) error {
	var err error
	if data != nil {
		_, err = io.ReadFull(io.TeeReader(s.r, s.crc), data)
	} else {
		_, err = io.CopyN(s.crc, s.r, n)
	}
	if err != nil {
		return truncated(PNG, err)
	}
	_, err = s.checksum(typ)
	return err
}

// checksum reads a chunk's checksum and compares it with what was read.
func (s *pngStripper) checksum(typ string) ([4]byte, error) {
	var sum [4]byte
	if _, err := io.ReadFull(s.r, sum[:]); err != nil {
		return sum, truncated(PNG, err)
	}
	if binary.BigEndian.Uint32(sum[:]) != s.crc.Sum32() {
		return sum, fmt.Errorf("a PNG image whose %q chunk fails its checksum: corrupt", typ)
	}
	return sum, nil
}

// rebuild writes what display needs of a dropped chunk of type typ whose
// data (when collected) is data: the orientation of an eXIf, the profile
// of an iCCP under a neutral name.
func (s *pngStripper) rebuild(typ string, data []byte) error {
	var out []byte
	switch {
	case typ == "eXIf" && data != nil:
		if o := exifOrientation(data); o > 1 {
			s.kept.Orientation = o
			out = pngChunk("eXIf", orientationTIFF(o))
		}
	case typ == "iCCP" && data != nil:
		if p := cleanICC(iccpProfile(data)); p != nil {
			s.kept.ICC = p
			out = pngChunk("iCCP", iccpData(p))
		}
	}
	_, err := s.dst.Write(out)
	return err
}

// pngChunk returns the PNG chunk of type typ with data d.
func pngChunk(typ string, d []byte) []byte {
	out := make([]byte, 8, 12+len(d))
	binary.BigEndian.PutUint32(out, uint32(len(d)))
	copy(out[4:], typ)
	out = append(out, d...)
	return binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(out[4:]))
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

// iccpData returns the data of an iCCP chunk holding profile p under the
// name iccName, compressed anew (so that nothing after the compressed
// stream is kept either).
func iccpData(p []byte) []byte {
	var b bytes.Buffer
	b.WriteString(iccName + "\x00\x00")
	zw := zlib.NewWriter(&b)
	zw.Write(p)
	zw.Close()
	return b.Bytes()
}

package media

import (
	"cmp"
	"encoding/binary"
	"slices"
)

// An ICC colour profile is kept because it says how to show the pixels,
// but its header and its text tags can carry anything: a description
// ("name"), a copyright, the device's maker and model, a creation date.
// cleanICC rebuilds a profile from what colour management reads, and
// nothing else (see docs/output.md, "What is kept of a file").

// iccHeaderSize and iccTagSize are the sizes of a profile's fixed header
// and of one entry of its tag table.
const (
	iccHeaderSize = 128
	iccTagSize    = 12
	maxICCTags    = 256
)

// iccDescription is the description a cleaned profile carries, the same
// for every profile.
const iccDescription = "ICC Profile"

// iccColourTags are the tags a colour-managing reader uses to convert the
// pixels: white and black points, primaries and tone curves, the
// chromatic adaptation, the lookup tables of every rendering intent and
// the coding-independent code points. Names, copyrights, device and
// viewing descriptions, calibration data and private tags are not among
// them.
var iccColourTags = []string{
	"wtpt", "bkpt", "rXYZ", "gXYZ", "bXYZ", "rTRC", "gTRC", "bTRC", "kTRC", "chad", "chrm", "lumi",
	"A2B0", "A2B1", "A2B2", "B2A0", "B2A1", "B2A2",
	"D2B0", "D2B1", "D2B2", "D2B3", "B2D0", "B2D1", "B2D2", "B2D3", "gamt", "cicp",
}

// cleanICC returns profile p rebuilt from its colour tags, with a header
// that keeps only what reading them needs (version, class, colour spaces,
// rendering intent, illuminant) and a neutral description; the same
// profile always gives the same bytes. It returns nil for data that is
// not a well-formed profile, which is then dropped.
func cleanICC(p []byte) []byte {
	tags, ok := iccTags(p)
	if !ok {
		return nil
	}
	v4 := p[8] >= 4
	type tag struct {
		sig  string
		data []byte
	}
	var kept []tag
	for _, t := range tags {
		if slices.Contains(iccColourTags, t.sig) && !slices.ContainsFunc(kept, func(k tag) bool { return k.sig == t.sig }) {
			kept = append(kept, tag{t.sig, p[t.off : t.off+t.size]})
		}
	}
	if len(kept) == 0 {
		return nil
	}
	kept = append(kept, tag{"desc", iccText(iccDescription, v4, true)}, tag{"cprt", iccText("", v4, false)})
	slices.SortFunc(kept, func(a, b tag) int { return cmp.Compare(a.sig, b.sig) })

	out := make([]byte, iccHeaderSize, 1024)
	copy(out[8:24], p[8:24])   // version, class, data colour space, connection space
	copy(out[36:40], "acsp")   // the signature every profile carries
	copy(out[64:80], p[64:80]) // rendering intent, illuminant
	out = binary.BigEndian.AppendUint32(out, uint32(len(kept)))
	table := len(out)
	out = append(out, make([]byte, iccTagSize*len(kept))...)
	offsets := map[string]int{} // shared data (three identical curves) is written once
	for i, t := range kept {
		off, seen := offsets[string(t.data)]
		if !seen {
			for len(out)%4 != 0 {
				out = append(out, 0)
			}
			off = len(out)
			offsets[string(t.data)] = off
			out = append(out, t.data...)
		}
		e := out[table+i*iccTagSize:]
		copy(e, t.sig)
		binary.BigEndian.PutUint32(e[4:], uint32(off))
		binary.BigEndian.PutUint32(e[8:], uint32(len(t.data)))
	}
	for len(out)%4 != 0 {
		out = append(out, 0)
	}
	binary.BigEndian.PutUint32(out, uint32(len(out)))
	return out
}

// iccTag is one entry of a profile's tag table.
type iccTag struct {
	sig       string
	off, size int
}

// iccTags returns the tag table of profile p, and false when p is too
// short, lacks the profile signature or has a tag outside it.
func iccTags(p []byte) ([]iccTag, bool) {
	if len(p) < iccHeaderSize+4 || string(p[36:40]) != "acsp" {
		return nil, false
	}
	n := int(binary.BigEndian.Uint32(p[iccHeaderSize:]))
	if n > maxICCTags || iccHeaderSize+4+n*iccTagSize > len(p) {
		return nil, false
	}
	tags := make([]iccTag, n)
	for i := range tags {
		e := p[iccHeaderSize+4+i*iccTagSize:]
		off, size := int(binary.BigEndian.Uint32(e[4:])), int(binary.BigEndian.Uint32(e[8:]))
		if off < iccHeaderSize || size < 8 || off > len(p) || size > len(p)-off {
			return nil, false
		}
		tags[i] = iccTag{string(e[:4]), off, size}
	}
	return tags, true
}

// iccText returns the data of a text tag holding s: a multiLocalizedUnicode
// (version 4), else a textDescription (desc) or text (cprt) of version 2.
func iccText(s string, v4, desc bool) []byte {
	be32 := binary.BigEndian.AppendUint32
	switch {
	case v4:
		b := be32([]byte("mluc\x00\x00\x00\x00"), 1) // one record
		b = be32(b, 12)                              // of 12 bytes
		b = append(b, "enUS"...)
		b = be32(b, uint32(2*len(s)))
		b = be32(b, 28) // the string follows the record
		for _, r := range s {
			b = binary.BigEndian.AppendUint16(b, uint16(r))
		}
		return b
	case desc:
		b := be32([]byte("desc\x00\x00\x00\x00"), uint32(len(s)+1))
		b = append(append(b, s...), 0)
		// No Unicode or ScriptCode description: their counts are zero,
		// the ScriptCode field keeps its fixed 67 bytes.
		return append(b, make([]byte, 4+4+2+1+67)...)
	}
	return append(append([]byte("text\x00\x00\x00\x00"), s...), 0)
}

// iccSegments returns profile p as the APP2 segments of a JPEG: split
// into pieces of at most 65519 bytes, numbered; nil for no profile or one
// too large for 255 pieces.
func iccSegments(p []byte) []byte {
	const chunk = 65535 - 2 - 12 - 2
	n := (len(p) + chunk - 1) / chunk
	if n == 0 || n > 255 {
		return nil
	}
	var out []byte
	for i := range n {
		part := p[i*chunk : min(len(p), (i+1)*chunk)]
		out = append(out, jpegSegment(mAPP2, append(append(append([]byte{}, iccHeader...), byte(i+1), byte(n)), part...))...)
	}
	return out
}

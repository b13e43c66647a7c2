package media_test

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"testing"

	"github.com/guidepub/guidepub/exporter/media"
	"github.com/guidepub/guidepub/exporter/media/mediatest"
)

// insert returns data with ins inserted at offset at.
func insert(data []byte, at int, ins ...[]byte) []byte {
	out := append([]byte{}, data[:at]...)
	for _, b := range ins {
		out = append(out, b...)
	}
	return append(out, data[at:]...)
}

// seg returns the JPEG segment of marker m and payload p.
func seg(m byte, p []byte) []byte {
	out := []byte{0xFF, m, 0, 0}
	binary.BigEndian.PutUint16(out[2:], uint16(len(p)+2))
	return append(out, p...)
}

// afterMarker returns the offset just after the segment of marker m in
// the JPEG data.
func afterMarker(t *testing.T, data []byte, m byte) int {
	t.Helper()
	i := bytes.Index(data, []byte{0xFF, m})
	if i < 0 {
		t.Fatalf("no marker %x", m)
	}
	return i + 2 + int(binary.BigEndian.Uint16(data[i+2:]))
}

// gifImageStart returns the offset of the first block after a GIF's
// header and global colour table.
func gifImageStart(data []byte) int {
	at := 13
	if data[10]&0x80 != 0 {
		at += 3 << (data[10]&7 + 1)
	}
	return at
}

// carrier is a hand-built image with a canary in one metadata carrier,
// and the plain image it is made from.
type carrier struct {
	name    string
	format  media.Format
	hostile func(t *testing.T, c string) []byte
	// keeps is what the stripped file must still hold (the fields
	// display needs, rebuilt).
	keeps string
}

func plainJPEG() []byte { return mediatest.JPEG(mediatest.Picture(64, 48)) }

func plainPNG(t *testing.T) []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, mediatest.Picture(32, 24)); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func plainGIF(t *testing.T) []byte {
	var b bytes.Buffer
	if err := gif.Encode(&b, mediatest.Picture(32, 24), nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// zlibbed returns d compressed.
func zlibbed(d []byte) []byte {
	var b bytes.Buffer
	zw := zlib.NewWriter(&b)
	zw.Write(d)
	zw.Close()
	return b.Bytes()
}

// gifBlocksOf returns s as GIF data sub-blocks with their terminator.
func gifBlocksOf(s string) []byte {
	return append(append([]byte{byte(len(s))}, s...), 0)
}

// jfif is a JFIF segment's payload with no thumbnail; jfifSegment the
// whole segment.
const (
	jfif        = "JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
	jfifSegment = "\xFF\xE0\x00\x10" + jfif
)

var carriers = []carrier{
	{"JFIF thumbnail", media.JPEG, func(t *testing.T, c string) []byte {
		// A thumbnail of w × 1 pixels whose RGB bytes are the canary.
		w := (len(c) + 2) / 3
		p := append([]byte("JFIF\x00\x01\x02\x01\x00\x48\x00\x48"), byte(w), 1)
		p = append(append(p, c...), make([]byte, 3*w-len(c))...)
		return insert(plainJPEG(), 2, seg(0xE0, p))
	}, "\xFF\xE0\x00\x10JFIF\x00\x01\x02\x01\x00\x48\x00\x48\x00\x00"},
	{"bytes after Adobe's APP14 fields", media.JPEG, func(t *testing.T, c string) []byte {
		return insert(plainJPEG(), 2, seg(0xEE, []byte("Adobe\x00\x64\x00\x00\x00\x00\x01"+c)))
	}, "\xFF\xEE\x00\x0EAdobe\x00\x64\x00\x00\x00\x00\x01"},
	// With a JFIF segment first, Go's header decoding stops at the frame
	// header, so a segment after it is never read unless a rendition is
	// made; Go's full decoder refuses these markers, a browser skips them.
	{"segment after the frame header", media.JPEG, func(t *testing.T, c string) []byte {
		d := insert(plainJPEG(), 2, seg(0xE0, []byte(jfif)))
		return insert(d, afterMarker(t, d, 0xC0), seg(0xF0, []byte(c)))
	}, jfifSegment},
	{"reserved marker after the frame header", media.JPEG, func(t *testing.T, c string) []byte {
		d := insert(plainJPEG(), 2, seg(0xE0, []byte(jfif)))
		return insert(d, afterMarker(t, d, 0xC0), seg(0x4F, []byte(c)))
	}, jfifSegment},
	{"table after the scan", media.JPEG, func(t *testing.T, c string) []byte {
		// A quantization table (id 3, unused) whose values are the canary.
		d := plainJPEG()
		table := append([]byte{3}, bytes.Repeat([]byte(c), 64)[:64]...)
		return insert(d, len(d)-2, seg(0xDB, table))
	}, ""},
	{"PNG colour profile name", media.PNG, func(t *testing.T, c string) []byte {
		d := plainPNG(t)
		iccp := append([]byte(c+"\x00\x00"), zlibbed(mediatest.ICCProfile("sRGB", ""))...)
		return insert(d, 33, mediatest.Chunk("iCCP", iccp))
	}, "iCCPICC Profile\x00\x00"},
	{"PNG gamma chunk longer than its value", media.PNG, func(t *testing.T, c string) []byte {
		return insert(plainPNG(t), 33, mediatest.Chunk("gAMA", append([]byte{0, 0, 0xB1, 0x8F}, c...)))
	}, ""},
	{"GIF plain text extension", media.GIF, func(t *testing.T, c string) []byte {
		d := plainGIF(t)
		text := append([]byte{0x21, 0x01, 12, 0, 0, 0, 0, 32, 0, 24, 0, 8, 8, 1, 0}, gifBlocksOf(c)...)
		return insert(d, gifImageStart(d), text)
	}, ""},
	{"GIF looping extension with more sub-blocks", media.GIF, func(t *testing.T, c string) []byte {
		d := plainGIF(t)
		loop := append([]byte("\x21\xFF\x0BNETSCAPE2.0\x03\x01\x05\x00"), gifBlocksOf(c)...)
		return insert(d, gifImageStart(d), loop)
	}, "\x21\xFF\x0BNETSCAPE2.0\x03\x01\x05\x00\x00"},
	{"GIF graphic control extension with more sub-blocks", media.GIF, func(t *testing.T, c string) []byte {
		d := plainGIF(t)
		gce := append([]byte("\x21\xF9\x04\x04\x0A\x00\x00"), gifBlocksOf(c)...)
		return insert(d, gifImageStart(d), gce)
	}, "\x21\xF9\x04\x04\x0A\x00\x00\x00"},
}

// TestStripCarriers: each carrier of private text that display does not
// need, built by hand, is gone from the stripped file, which keeps what
// display needs of it and decodes to the same pixels as the image without
// it.
func TestStripCarriers(t *testing.T) {
	for _, c := range carriers {
		t.Run(c.name, func(t *testing.T) {
			secret := canary("carrier")
			src := c.hostile(t, secret)
			if !bytes.Contains(src, []byte(secret)) {
				t.Fatal("the hostile file does not hold the canary")
			}
			if _, err := check(t, src, 0); err != nil {
				t.Fatalf("the hostile file is refused: %v", err)
			}
			var out bytes.Buffer
			if _, err := media.Strip(&out, bytes.NewReader(src), c.format); err != nil {
				t.Fatal(err)
			}
			got := out.Bytes()
			if bytes.Contains(got, []byte(secret)) {
				t.Errorf("the stripped file still holds the canary")
			}
			if c.keeps != "" && !bytes.Contains(got, []byte(c.keeps)) {
				t.Errorf("the stripped file lost %q", c.keeps)
			}
			var plain []byte
			switch c.format {
			case media.JPEG:
				plain = plainJPEG()
			case media.PNG:
				plain = plainPNG(t)
			case media.GIF:
				plain = plainGIF(t)
			}
			want, err := decodeImage(c.format, plain)
			if err != nil {
				t.Fatal(err)
			}
			img, err := decodeImage(c.format, got)
			if err != nil || !sameImage(want, img) {
				t.Errorf("the stripped file decodes differently (%v)", err)
			}
			var again bytes.Buffer
			if _, err := media.Strip(&again, bytes.NewReader(got), c.format); err != nil || !bytes.Equal(again.Bytes(), got) {
				t.Errorf("stripping the stripped file changed it (%v)", err)
			}
		})
	}
}

func decodeImage(f media.Format, data []byte) (image.Image, error) {
	switch f {
	case media.JPEG:
		return jpeg.Decode(bytes.NewReader(data))
	case media.PNG:
		return png.Decode(bytes.NewReader(data))
	}
	return gif.Decode(bytes.NewReader(data))
}

// TestStripPNGProfile: the colour profile of a PNG is kept (for the
// renditions too) under a neutral name, rebuilt from its colour tags: its
// description, copyright and the header's maker, model and creator go.
func TestStripPNGProfile(t *testing.T) {
	profile := mediatest.ICCProfile("Jane's camera at 12 Elm St", "Copyright Jane Example")
	d := insert(plainPNG(t), 33, mediatest.Chunk("iCCP", append([]byte("Jane's camera\x00\x00"), zlibbed(profile)...)))
	var out bytes.Buffer
	kept, err := media.Strip(&out, bytes.NewReader(d), media.PNG)
	if err != nil || len(kept.ICC) == 0 {
		t.Fatalf("kept profile %q, %v", kept.ICC, err)
	}
	if bytes.Contains(kept.ICC, []byte("Jane")) || bytes.Contains(kept.ICC, []byte("Elm")) {
		t.Errorf("the kept profile still names its owner: %q", kept.ICC)
	}
	checkColourTags(t, profile, kept.ICC)
	want := mediatest.Chunk("iCCP", append([]byte("ICC Profile\x00\x00"), zlibbed(kept.ICC)...))
	if !bytes.Contains(out.Bytes(), want) {
		t.Error("no iCCP chunk with the profile under the neutral name")
	}
}

// TestStripJPEGProfile: a JPEG's ICC profile, in two APP2 pieces, is kept
// whole and rebuilt from its colour tags, before the frame header.
func TestStripJPEGProfile(t *testing.T) {
	profile := mediatest.ICCProfile("Jane's camera at 12 Elm St", "Copyright Jane Example")
	half := len(profile) / 2
	piece := func(i int, p []byte) []byte {
		return seg(0xE2, append([]byte{'I', 'C', 'C', '_', 'P', 'R', 'O', 'F', 'I', 'L', 'E', 0, byte(i), 2}, p...))
	}
	d := insert(plainJPEG(), 2, piece(1, profile[:half]), piece(2, profile[half:]))
	var out bytes.Buffer
	kept, err := media.Strip(&out, bytes.NewReader(d), media.JPEG)
	if err != nil || len(kept.ICC) == 0 {
		t.Fatalf("kept profile %q, %v", kept.ICC, err)
	}
	if bytes.Contains(out.Bytes(), []byte("Jane")) || bytes.Contains(out.Bytes(), []byte("Elm")) {
		t.Error("the stripped file still names the profile's owner")
	}
	checkColourTags(t, profile, kept.ICC)
	if !bytes.Contains(out.Bytes(), kept.ICC) {
		t.Error("the stripped file lacks the cleaned profile")
	}
}

// checkColourTags fails unless cleaned has the colour tags of profile,
// with the same data, and the description "ICC Profile".
func checkColourTags(t *testing.T, profile, cleaned []byte) {
	t.Helper()
	tag := func(p []byte, sig string) []byte {
		n := int(binary.BigEndian.Uint32(p[128:]))
		for i := range n {
			e := p[132+12*i:]
			if string(e[:4]) == sig {
				off, size := binary.BigEndian.Uint32(e[4:]), binary.BigEndian.Uint32(e[8:])
				return p[off : off+size]
			}
		}
		return nil
	}
	for _, sig := range []string{"wtpt", "rXYZ", "gXYZ", "bXYZ", "rTRC", "gTRC", "bTRC"} {
		if want := tag(profile, sig); !bytes.Equal(tag(cleaned, sig), want) {
			t.Errorf("tag %s: %q, want %q", sig, tag(cleaned, sig), want)
		}
	}
	if d := tag(cleaned, "desc"); !bytes.Contains(d, []byte("ICC Profile\x00")) {
		t.Errorf("description %q", d)
	}
	if !bytes.Equal(cleaned[8:24], profile[8:24]) || string(cleaned[36:40]) != "acsp" {
		t.Error("the header lost the profile's version, class or colour spaces")
	}
}

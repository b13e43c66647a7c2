package leaksweep

import (
	"archive/zip"
	"bytes"
	"cmp"
	"compress/zlib"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"image"
	"image/color/palette"
	"image/draw"
	"image/gif"
	"image/jpeg"
	"image/png"
	"slices"
	"strings"

	"github.com/guidepub/guidepub/exporter/media"
	"github.com/guidepub/guidepub/exporter/media/mediatest"
)

// slot is one place of a media file where metadata can hide.
type slot struct {
	name   string // format/place
	format media.Format
	// undecodable is set on a slot Go's image decoders refuse: a file
	// carrying it is kept narrower than the smallest rendition, so its
	// pixels are never decoded.
	undecodable bool
	// put writes canary into the file b builds and returns the byte
	// strings whose presence in a public file shows that the slot leaked
	// (the canary as the slot stores it). It returns the same strings for
	// the same canary.
	put func(b *builder, canary string) [][]byte
}

// slots lists every metadata slot the corpus fills. Adding a slot is
// adding one entry.
var slots = append([]slot{
	// JPEG: EXIF (IFD0, Exif and GPS IFDs), XMP, IPTC, comments, other
	// application segments, and what the rewriter copies.
	{name: "jpeg/exif-gps", format: media.JPEG, put: func(b *builder, c string) [][]byte {
		lat, lng := rationals(c, 0), rationals(c, 8)
		b.head = append(b.head, jpegSegment(0xE1, append([]byte("Exif\x00\x00"), tiff(nil, nil, []ifdEntry{
			asciiTag(0x0001, "N"), {0x0002, 5, 3, lat}, asciiTag(0x0003, "W"), {0x0004, 5, 3, lng},
			{0x001B, 7, uint32(8 + len(c)), append([]byte("ASCII\x00\x00\x00"), c...)}, // GPSProcessingMethod
		})...)))
		return [][]byte{lat, lng, []byte(c)}
	}},
	{name: "jpeg/exif-owner", format: media.JPEG, put: func(b *builder, c string) [][]byte {
		b.head = append(b.head, jpegSegment(0xE1, append([]byte("Exif\x00\x00"), tiff(
			[]ifdEntry{asciiTag(0x010E, c), asciiTag(0x010F, c), asciiTag(0x0110, c), {0x0112, 3, 1, []byte{0, 6}}, asciiTag(0x013B, c), asciiTag(0x8298, c)},
			[]ifdEntry{asciiTag(0xA430, c), asciiTag(0xA431, c), {0x9286, 7, uint32(8 + len(c)), append([]byte("ASCII\x00\x00\x00"), c...)}},
			nil)...)))
		return [][]byte{[]byte(c)}
	}},
	{name: "jpeg/exif-dates", format: media.JPEG, put: func(b *builder, c string) [][]byte {
		d := exifDate(c)
		b.head = append(b.head, jpegSegment(0xE1, append([]byte("Exif\x00\x00"), tiff(
			[]ifdEntry{asciiTag(0x0132, d)}, []ifdEntry{asciiTag(0x9003, d), asciiTag(0x9004, d)}, nil)...)))
		return [][]byte{[]byte(d)}
	}},
	{name: "jpeg/exif-second-block", format: media.JPEG, put: func(b *builder, c string) [][]byte {
		// A first EXIF block with the orientation only, then another.
		b.head = append(b.head,
			jpegSegment(0xE1, append([]byte("Exif\x00\x00"), tiff([]ifdEntry{{0x0112, 3, 1, []byte{0, 1}}}, nil, nil)...)),
			jpegSegment(0xE1, append([]byte("Exif\x00\x00"), tiff([]ifdEntry{asciiTag(0x013B, c)}, nil, nil)...)))
		return [][]byte{[]byte(c)}
	}},
	{name: "jpeg/xmp", format: media.JPEG, put: func(b *builder, c string) [][]byte {
		b.head = append(b.head, jpegSegment(0xE1, append([]byte("http://ns.adobe.com/xap/1.0/\x00"), xmpPacket(c)...)))
		return [][]byte{[]byte(c)}
	}},
	{name: "jpeg/xmp-extended", format: media.JPEG, put: func(b *builder, c string) [][]byte {
		p := append([]byte("http://ns.adobe.com/xmp/extension/\x00"), strings.Repeat("0", 32)...)
		p = binary.BigEndian.AppendUint32(p, uint32(len(xmpPacket(c))))
		p = binary.BigEndian.AppendUint32(p, 0)
		b.head = append(b.head, jpegSegment(0xE1, append(p, xmpPacket(c)...)))
		return [][]byte{[]byte(c)}
	}},
	{name: "jpeg/iptc", format: media.JPEG, put: func(b *builder, c string) [][]byte {
		iim := []byte{}
		for _, ds := range []byte{0x50, 0x5A, 0x78} { // by-line, city, caption
			iim = append(iim, 0x1C, 0x02, ds, 0, byte(len(c)))
			iim = append(iim, c...)
		}
		p := append([]byte("Photoshop 3.0\x008BIM\x04\x04\x00\x00"), binary.BigEndian.AppendUint32(nil, uint32(len(iim)))...)
		b.head = append(b.head, jpegSegment(0xED, append(p, iim...)))
		return [][]byte{[]byte(c)}
	}},
	{name: "jpeg/comment", format: media.JPEG, put: func(b *builder, c string) [][]byte {
		b.head = append(b.head, jpegSegment(0xFE, []byte(c)))
		return [][]byte{[]byte(c)}
	}},
	{name: "jpeg/app11", format: media.JPEG, put: func(b *builder, c string) [][]byte {
		b.head = append(b.head, jpegSegment(0xEB, append([]byte("JP\x00\x01"), c...)))
		return [][]byte{[]byte(c)}
	}},
	{name: "jpeg/app0-jfxx", format: media.JPEG, put: func(b *builder, c string) [][]byte {
		b.head = append(b.head, jpegSegment(0xE0, append([]byte("JFXX\x00\x10"), c...)))
		return [][]byte{[]byte(c)}
	}},
	{name: "jpeg/after-eoi", format: media.JPEG, put: func(b *builder, c string) [][]byte {
		b.trailer = append(b.trailer, c...)
		return [][]byte{[]byte(c)}
	}},
	{name: "jpeg/jfif-thumbnail", format: media.JPEG, put: func(b *builder, c string) [][]byte {
		// A thumbnail of len(c)×1 pixels whose RGB bytes spell c thrice.
		p := append([]byte("JFIF\x00\x01\x02\x00\x00\x01\x00\x01"), byte(len(c)), 1)
		b.jfif = append(p, strings.Repeat(c, 3)...)
		return [][]byte{[]byte(c)}
	}},
	{name: "jpeg/icc-profile-name", format: media.JPEG, put: func(b *builder, c string) [][]byte {
		b.head = append(b.head, jpegSegment(0xE2, append([]byte("ICC_PROFILE\x00\x01\x01"), mediatest.ICCProfile(c, "no copyright")...)))
		return [][]byte{[]byte(c)}
	}},
	{name: "jpeg/icc-copyright", format: media.JPEG, put: func(b *builder, c string) [][]byte {
		b.head = append(b.head, jpegSegment(0xE2, append([]byte("ICC_PROFILE\x00\x01\x01"), mediatest.ICCProfile("sRGB", c)...)))
		return [][]byte{[]byte(c)}
	}},
	{name: "jpeg/app14-extra", format: media.JPEG, put: func(b *builder, c string) [][]byte {
		b.head = append(b.head, jpegSegment(0xEE, append([]byte("Adobe\x00\x64\x00\x00\x00\x00\x01"), c...)))
		return [][]byte{[]byte(c)}
	}},
	{name: "jpeg/segment-after-frame", format: media.JPEG, undecodable: true, put: func(b *builder, c string) [][]byte {
		b.afterFrame = append(b.afterFrame, jpegSegment(0xF1, []byte(c)))
		return [][]byte{[]byte(c)}
	}},
	{name: "jpeg/segment-after-scan", format: media.JPEG, undecodable: true, put: func(b *builder, c string) [][]byte {
		b.afterScan = append(b.afterScan, jpegSegment(0xF2, []byte(c)))
		return [][]byte{[]byte(c)}
	}},

	// PNG: text chunks, EXIF, time, private chunks, the colour profile's
	// name and description, bytes after the end.
	{name: "png/text", format: media.PNG, put: func(b *builder, c string) [][]byte {
		b.chunksBefore = append(b.chunksBefore, pngChunk("tEXt", []byte("Author\x00"+c)))
		return [][]byte{[]byte(c)}
	}},
	{name: "png/ztxt", format: media.PNG, put: func(b *builder, c string) [][]byte {
		z := deflate(c)
		b.chunksAfter = append(b.chunksAfter, pngChunk("zTXt", append([]byte("Description\x00\x00"), z...)))
		return [][]byte{[]byte(c), z}
	}},
	{name: "png/itxt-xmp", format: media.PNG, put: func(b *builder, c string) [][]byte {
		b.chunksBefore = append(b.chunksBefore, pngChunk("iTXt", append([]byte("XML:com.adobe.xmp\x00\x00\x00\x00\x00"), xmpPacket(c)...)))
		return [][]byte{[]byte(c)}
	}},
	{name: "png/exif", format: media.PNG, put: func(b *builder, c string) [][]byte {
		lat := rationals(c, 0)
		b.chunksBefore = append(b.chunksBefore, pngChunk("eXIf", tiff(
			[]ifdEntry{{0x0112, 3, 1, []byte{0, 6}}, asciiTag(0x013B, c)}, nil,
			[]ifdEntry{asciiTag(0x0001, "N"), {0x0002, 5, 3, lat}})))
		return [][]byte{[]byte(c), lat}
	}},
	{name: "png/time", format: media.PNG, put: func(b *builder, c string) [][]byte {
		h := sha256.Sum256([]byte(c))
		d := []byte{0x07, 0xD0 + h[0]%50, 1 + h[1]%12, 1 + h[2]%28, h[3] % 24, h[4] % 60, h[5] % 60}
		b.chunksBefore = append(b.chunksBefore, pngChunk("tIME", d))
		return [][]byte{append([]byte("tIME"), d...)}
	}},
	{name: "png/private-chunk", format: media.PNG, put: func(b *builder, c string) [][]byte {
		b.chunksAfter = append(b.chunksAfter, pngChunk("prVt", []byte(c)))
		return [][]byte{[]byte(c)}
	}},
	{name: "png/after-iend", format: media.PNG, put: func(b *builder, c string) [][]byte {
		b.trailer = append(b.trailer, c...)
		return [][]byte{[]byte(c)}
	}},
	{name: "png/iccp-name", format: media.PNG, put: func(b *builder, c string) [][]byte {
		b.iccpName = c
		return [][]byte{[]byte(c)}
	}},
	{name: "png/iccp-profile-desc", format: media.PNG, put: func(b *builder, c string) [][]byte {
		b.iccpDesc = c
		return [][]byte{[]byte(c), deflate(string(mediatest.ICCProfile(c, "no copyright")))}
	}},

	// GIF: extensions and bytes after the trailer.
	{name: "gif/comment", format: media.GIF, put: func(b *builder, c string) [][]byte {
		b.gifBlocks = append(b.gifBlocks, gifExtension(0xFE, nil, c))
		return [][]byte{[]byte(c)}
	}},
	{name: "gif/xmp", format: media.GIF, put: func(b *builder, c string) [][]byte {
		b.gifBlocks = append(b.gifBlocks, gifExtension(0xFF, []byte("XMP DataXMP"), string(xmpPacket(c))))
		return [][]byte{[]byte(c)}
	}},
	{name: "gif/app-other", format: media.GIF, put: func(b *builder, c string) [][]byte {
		b.gifBlocks = append(b.gifBlocks, gifExtension(0xFF, []byte("ICCRGBG1012"), c))
		return [][]byte{[]byte(c)}
	}},
	{name: "gif/after-trailer", format: media.GIF, put: func(b *builder, c string) [][]byte {
		b.trailer = append(b.trailer, c...)
		return [][]byte{[]byte(c)}
	}},
	{name: "gif/plain-text", format: media.GIF, put: func(b *builder, c string) [][]byte {
		grid := []byte{0, 0, 0, 0, 100, 0, 20, 0, 8, 16, 1, 0}
		b.gifBlocks = append(b.gifBlocks, gifExtension(0x01, grid, c))
		return [][]byte{[]byte(c)}
	}},
	{name: "gif/netscape-extra", format: media.GIF, put: func(b *builder, c string) [][]byte {
		ext := []byte{0x21, 0xFF, 11}
		ext = append(ext, "NETSCAPE2.0"...)
		ext = append(ext, 3, 1, 0, 0) // loop forever
		b.gifBlocks = append(b.gifBlocks, append(append(ext, subBlocks(c)...), 0))
		return [][]byte{[]byte(c)}
	}},
	{name: "gif/gce-extra", format: media.GIF, put: func(b *builder, c string) [][]byte {
		ext := []byte{0x21, 0xF9, 4, 0, 0, 0, 0}
		b.gifBlocks = append(b.gifBlocks, append(append(ext, subBlocks(c)...), 0))
		return [][]byte{[]byte(c)}
	}},

	// ZIP: a private document's entries (names and content), which never
	// enter the public tree.
	{name: "zip/private-document", format: media.ZIP, put: func(b *builder, c string) [][]byte {
		b.zipEntries = append(b.zipEntries, c+".txt")
		return [][]byte{[]byte(c)}
	}},
}, pdfSlots()...)

// pdfSlots are the places of a PDF where a producer's tool writes text
// that no page draws (mediatest.PDFPlaces: document information, XMP,
// outline, annotations, form fields, JavaScript, attachments, page labels,
// structure tree, layer names, destinations, custom keys, ICC profile
// text...), one slot each.
func pdfSlots() []slot {
	var out []slot
	for _, place := range mediatest.PDFPlaces {
		out = append(out, slot{name: "pdf/" + place, format: media.PDF, put: func(b *builder, c string) [][]byte {
			if b.pdfPlaces == nil {
				b.pdfPlaces = map[string]string{}
			}
			b.pdfPlaces[place] = c
			return [][]byte{[]byte(c)}
		}})
	}
	return out
}

// slotsOf returns the slots of format f; decodable leaves out those Go's
// decoders refuse.
func slotsOf(f media.Format, decodable bool) []slot {
	var out []slot
	for _, s := range slots {
		if s.format == f && !(decodable && s.undecodable) {
			out = append(out, s)
		}
	}
	return out
}

// pending reports whether slot name is awaiting the media metadata fix.
// builder collects what the slots put into one file before it is
// assembled around a plain picture.
type builder struct {
	// JPEG: the JFIF segment's payload (nil: none), segments after the
	// start marker, after the frame header and after the scan.
	jfif                        []byte
	head, afterFrame, afterScan [][]byte
	// PNG: chunks after the header and before the end; the name and the
	// description of the colour profile ("": no iCCP chunk).
	chunksBefore, chunksAfter [][]byte
	iccpName, iccpDesc        string
	// GIF: extension blocks before the image.
	gifBlocks [][]byte
	// PDF: the text of each place of mediatest.PDFPlaces given one.
	pdfPlaces map[string]string
	// ZIP: entry names, each holding its own name.
	zipEntries []string
	// Bytes after the format's end marker.
	trailer []byte
}

// file returns a w×h file of format f carrying each slot of ss with its
// canary (canary(s)).
func file(f media.Format, w, h int, ss []slot, canary func(slot) string) []byte {
	b := &builder{}
	for _, s := range ss {
		if s.format != f {
			panic("leaksweep: slot " + s.name + " is not " + string(f))
		}
		s.put(b, canary(s))
	}
	switch f {
	case media.JPEG:
		return b.jpeg(w, h)
	case media.PNG:
		return b.png(w, h)
	case media.GIF:
		return b.gif(w, h)
	case media.PDF:
		return b.pdf()
	case media.ZIP:
		return b.zip()
	}
	panic("leaksweep: no builder for " + string(f))
}

// picture returns a w×h picture with smooth colours.
func picture(w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			copy(img.Pix[img.PixOffset(x, y):], []byte{uint8(x * 255 / w), uint8(y * 255 / h), uint8((x + y) & 0x7f), 0xff})
		}
	}
	return img
}

func (b *builder) jpeg(w, h int) []byte {
	var base bytes.Buffer
	if err := jpeg.Encode(&base, picture(w, h), &jpeg.Options{Quality: 80}); err != nil {
		panic(err)
	}
	plain := base.Bytes()
	// The encoder writes SOI, DQT, SOF0, DHT, SOS and the scan, EOI: find
	// where the frame header ends.
	frameEnd := 0
	for i := 2; i+4 <= len(plain) && frameEnd == 0; {
		n := int(binary.BigEndian.Uint16(plain[i+2:]))
		if plain[i+1] == 0xC0 {
			frameEnd = i + 2 + n
		}
		i += 2 + n
	}
	out := append([]byte{}, plain[:2]...)
	out = append(out, bytes.Join(b.head, nil)...)
	// JFIF last of the application segments: Go's decoder then reads the
	// header alone (it stops at the frame when the last APP0 it saw is
	// JFIF), as a camera's file is read.
	jfif := b.jfif
	if jfif == nil {
		jfif = []byte("JFIF\x00\x01\x02\x00\x00\x01\x00\x01\x00\x00")
	}
	out = append(out, jpegSegment(0xE0, jfif)...)
	out = append(out, plain[2:frameEnd]...)
	out = append(out, bytes.Join(b.afterFrame, nil)...)
	out = append(out, plain[frameEnd:len(plain)-2]...)
	out = append(out, bytes.Join(b.afterScan, nil)...)
	out = append(out, 0xFF, 0xD9)
	return append(out, b.trailer...)
}

func (b *builder) png(w, h int) []byte {
	var base bytes.Buffer
	if err := png.Encode(&base, picture(w, h)); err != nil {
		panic(err)
	}
	plain := base.Bytes()
	const head, end = 8 + 25, 12 // signature and IHDR; IEND
	out := append([]byte{}, plain[:head]...)
	if b.iccpName != "" || b.iccpDesc != "" {
		name, desc := cmp.Or(b.iccpName, "ICC Profile"), cmp.Or(b.iccpDesc, "sRGB")
		out = append(out, pngChunk("iCCP", append([]byte(name+"\x00\x00"), deflate(string(mediatest.ICCProfile(desc, "no copyright")))...))...)
	}
	out = append(out, bytes.Join(b.chunksBefore, nil)...)
	out = append(out, plain[head:len(plain)-end]...)
	out = append(out, bytes.Join(b.chunksAfter, nil)...)
	out = append(out, plain[len(plain)-end:]...)
	return append(out, b.trailer...)
}

func (b *builder) gif(w, h int) []byte {
	pic := image.NewPaletted(image.Rect(0, 0, w, h), palette.Plan9)
	draw.Draw(pic, pic.Rect, picture(w, h), image.Point{}, draw.Src)
	var base bytes.Buffer
	if err := gif.Encode(&base, pic, nil); err != nil {
		panic(err)
	}
	plain := base.Bytes()
	at := 13 // header and logical screen descriptor
	if flags := plain[10]; flags&0x80 != 0 {
		at += 3 << (flags&7 + 1)
	}
	out := append([]byte{}, plain[:at]...)
	out = append(out, bytes.Join(b.gifBlocks, nil)...)
	out = append(out, plain[at:]...)
	return append(out, b.trailer...)
}

// pdf returns mediatest.PrivatePDF with the slots' canaries in their
// places and a neutral text in the others.
func (b *builder) pdf() []byte {
	return mediatest.PrivatePDF(func(place string) string {
		if c, ok := b.pdfPlaces[place]; ok {
			return c
		}
		return "plan-" + place
	})
}

// zip returns a ZIP archive whose entries hold their own names.
func (b *builder) zip() []byte {
	var out bytes.Buffer
	zw := zip.NewWriter(&out)
	for _, e := range b.zipEntries {
		w, err := zw.Create(e)
		if err != nil {
			panic(err)
		}
		w.Write([]byte(e))
	}
	if err := zw.Close(); err != nil {
		panic(err)
	}
	return out.Bytes()
}

// jpegSegment returns the JPEG segment with marker m and payload p.
func jpegSegment(m byte, p []byte) []byte {
	out := []byte{0xFF, m, 0, 0}
	binary.BigEndian.PutUint16(out[2:], uint16(len(p)+2))
	return append(out, p...)
}

// pngChunk returns the PNG chunk of type typ holding d.
func pngChunk(typ string, d []byte) []byte {
	out := binary.BigEndian.AppendUint32(nil, uint32(len(d)))
	out = append(append(out, typ...), d...)
	return binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(out[4:]))
}

// gifExtension returns the GIF extension label with an optional first
// sub-block head and the text c in data sub-blocks.
func gifExtension(label byte, head []byte, c string) []byte {
	out := []byte{0x21, label}
	if head != nil {
		out = append(append(out, byte(len(head))), head...)
	}
	return append(append(out, subBlocks(c)...), 0)
}

// subBlocks returns s as GIF data sub-blocks, without the terminator.
func subBlocks(s string) []byte {
	var out []byte
	for len(s) > 0 {
		n := min(len(s), 255)
		out = append(append(out, byte(n)), s[:n]...)
		s = s[n:]
	}
	return out
}

// deflate returns s compressed with zlib, as PNG's text and profile
// chunks store it.
func deflate(s string) []byte {
	var b bytes.Buffer
	zw := zlib.NewWriter(&b)
	zw.Write([]byte(s))
	zw.Close()
	return b.Bytes()
}

// xmpPacket returns an XMP packet naming c as description, creator,
// location and GPS position.
func xmpPacket(c string) []byte {
	return []byte(`<?xpacket begin="" id="W5M0MpCehiHzreSzNTczkc9d"?><x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">` +
		`<rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:exif="http://ns.adobe.com/exif/1.0/" xmlns:Iptc4xmpCore="http://iptc.org/std/Iptc4xmpCore/1.0/xmlns/">` +
		`<dc:description>` + c + `</dc:description><dc:creator>` + c + `</dc:creator><Iptc4xmpCore:Location>` + c + `</Iptc4xmpCore:Location>` +
		`<exif:GPSLatitude>` + c + `</exif:GPSLatitude></rdf:Description></rdf:RDF></x:xmpmeta><?xpacket end="w"?>`)
}

// rationals returns three EXIF RATIONALs (degrees, minutes, seconds)
// derived from canary c (at offset off of its hash): a GPS coordinate no
// other file holds.
func rationals(c string, off int) []byte {
	h := sha256.Sum256([]byte(c))
	var b []byte
	for _, v := range [][2]uint32{{10 + uint32(h[off])%70, 1}, {uint32(h[off+1]) % 60, 1}, {binary.BigEndian.Uint32(h[off+2:]) % 600000, 10000}} {
		b = binary.BigEndian.AppendUint32(b, v[0])
		b = binary.BigEndian.AppendUint32(b, v[1])
	}
	return b
}

// exifDate returns an EXIF date and time derived from canary c.
func exifDate(c string) string {
	h := sha256.Sum256([]byte(c))
	return fmt.Sprintf("20%02d:%02d:%02d %02d:%02d:%02d", h[0]%100, 1+h[1]%12, 1+h[2]%28, h[3]%24, h[4]%60, h[5]%60)
}

// ifdEntry is one TIFF tag: its type, count and value bytes.
type ifdEntry struct {
	tag, typ uint16
	count    uint32
	value    []byte
}

func asciiTag(tag uint16, s string) ifdEntry {
	return ifdEntry{tag, 2, uint32(len(s) + 1), append([]byte(s), 0)}
}

// tiff returns a big-endian TIFF structure (an EXIF block's body) with
// IFD0, and the Exif and GPS IFDs when given.
func tiff(ifd0, exif, gps []ifdEntry) []byte {
	ifd0 = slices.Clone(ifd0)
	if exif != nil {
		ifd0 = append(ifd0, ifdEntry{0x8769, 4, 1, nil})
	}
	if gps != nil {
		ifd0 = append(ifd0, ifdEntry{0x8825, 4, 1, nil})
	}
	ifds := [][]ifdEntry{ifd0, exif, gps}
	size := func(es []ifdEntry) int {
		if es == nil {
			return 0
		}
		return 2 + 12*len(es) + 4
	}
	at := []int{8, 8 + size(ifd0), 8 + size(ifd0) + size(exif)}
	data := at[2] + size(gps)
	var out, area bytes.Buffer
	out.WriteString("MM\x00\x2a\x00\x00\x00\x08")
	for _, es := range ifds {
		if es == nil {
			continue
		}
		slices.SortFunc(es, func(a, b ifdEntry) int { return int(a.tag) - int(b.tag) })
		binary.Write(&out, binary.BigEndian, uint16(len(es)))
		for _, e := range es {
			v := e.value
			switch e.tag {
			case 0x8769:
				v = binary.BigEndian.AppendUint32(nil, uint32(at[1]))
			case 0x8825:
				v = binary.BigEndian.AppendUint32(nil, uint32(at[2]))
			}
			binary.Write(&out, binary.BigEndian, e.tag)
			binary.Write(&out, binary.BigEndian, e.typ)
			binary.Write(&out, binary.BigEndian, e.count)
			if len(v) <= 4 {
				out.Write(append(slices.Clone(v), make([]byte, 4-len(v))...))
			} else {
				binary.Write(&out, binary.BigEndian, uint32(data+area.Len()))
				area.Write(v)
				if area.Len()%2 == 1 {
					area.WriteByte(0)
				}
			}
		}
		out.Write([]byte{0, 0, 0, 0})
	}
	out.Write(area.Bytes())
	return out.Bytes()
}

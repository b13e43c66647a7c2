// Package mediatest makes media files for tests: a camera-like JPEG with
// private EXIF, XMP, IPTC and comment segments, and hostile files.
package mediatest

import (
	"archive/zip"
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"math"
	"path"
	"regexp"
	"strings"
)

// Secrets are strings PhotoWithGPS hides in its metadata; none may reach a
// published file.
var Secrets = []string{"SERIAL-4711-SECRET", "Jane Owner", "2026:11:24 09:41:00", "xmp-secret-address", "iptc-secret-caption", "comment-secret"}

// GPSLatitude and GPSLongitude are the coordinates PhotoWithGPS holds, as
// the EXIF RATIONAL triples' raw bytes appear in it.
var GPSLatitude, GPSLongitude = rationals(45, 31, 123456), rationals(73, 34, 654321)

func rationals(d, m, s100 uint32) []byte {
	var b []byte
	for _, v := range [][2]uint32{{d, 1}, {m, 1}, {s100, 10000}} {
		b = binary.BigEndian.AppendUint32(b, v[0])
		b = binary.BigEndian.AppendUint32(b, v[1])
	}
	return b
}

// Picture returns a w×h picture with smooth colours and some detail.
func Picture(w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{uint8(x * 255 / w), uint8(y * 255 / h), uint8((x ^ y) & 0xff), 0xff})
		}
	}
	return img
}

// Scene returns a w×h picture as a photo has them: smooth gradients,
// hard edges (rectangles, a disc) and fine texture of several
// frequencies, some of it near the sampling limit.
func Scene(w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			fx, fy := float64(x)/float64(w), float64(y)/float64(h)
			r := 60 + 150*fx + 30*math.Sin(float64(x)*0.9)*fy
			g := 40 + 120*fy + 25*math.Sin(float64(x+y)*0.35)
			b := 90 + 80*math.Sin(float64(x)*0.05)*math.Cos(float64(y)*0.07) + 20*math.Sin(float64(x*y)*0.002)
			if (x/37+y/53)%5 == 0 {
				r, g, b = 250, 245, 235 // a window: near white
			}
			if dx, dy := fx-0.6, fy-0.4; dx*dx+dy*dy < 0.02 {
				r, g, b = 20, 30, 160
			}
			img.SetRGBA(x, y, color.RGBA{sat8(r), sat8(g), sat8(b), 255})
		}
	}
	return img
}

func sat8(v float64) uint8 { return uint8(max(0, min(255, math.Round(v)))) }

// JPEG returns img encoded as a plain JPEG.
func JPEG(img image.Image) []byte {
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 85}); err != nil {
		panic(err)
	}
	return b.Bytes()
}

// PhotoWithGPS returns a w×h JPEG as a camera writes it: EXIF with the
// orientation (6, rotated), camera serial, owner, capture time and the GPS
// position GPSLatitude/GPSLongitude; XMP; IPTC; a comment. Each holds one
// of Secrets.
func PhotoWithGPS(w, h int) []byte {
	plain := JPEG(Picture(w, h))
	var b bytes.Buffer
	b.Write(plain[:2])
	b.Write(segment(0xE0, []byte("JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00")))
	b.Write(segment(0xE1, append([]byte("Exif\x00\x00"), exifTIFF()...)))
	b.Write(segment(0xE1, []byte("http://ns.adobe.com/xap/1.0/\x00<x:xmpmeta><rdf:Description dc:description='"+Secrets[3]+"'/></x:xmpmeta>")))
	b.Write(segment(0xED, []byte("Photoshop 3.0\x008BIM\x04\x04\x00\x00\x00\x00\x00\x20\x1c\x02\x78\x00\x13"+Secrets[4])))
	b.Write(segment(0xFE, []byte(Secrets[5])))
	b.Write(plain[2:])
	return b.Bytes()
}

func segment(m byte, p []byte) []byte {
	out := []byte{0xFF, m, 0, 0}
	binary.BigEndian.PutUint16(out[2:], uint16(len(p)+2))
	return append(out, p...)
}

// exifTIFF returns a big-endian TIFF block: IFD0 with orientation 6,
// serial (BodySerialNumber lives in the EXIF IFD; here as Make for
// brevity), artist, date and a GPS IFD pointer; the GPS IFD with both
// coordinates.
func exifTIFF() []byte {
	type entry struct {
		tag, typ uint16
		count    uint32
		value    []byte // > 4 bytes go to the data area
	}
	ascii := func(s string) []byte { return append([]byte(s), 0) }
	ifd0 := []entry{
		{0x010F, 2, 0, ascii(Secrets[0])},
		{0x0112, 3, 1, []byte{0, 6, 0, 0}},
		{0x0132, 2, 0, ascii(Secrets[2])},
		{0x013B, 2, 0, ascii(Secrets[1])},
		{0x8825, 4, 1, nil}, // GPS IFD offset, filled below
	}
	gps := []entry{
		{0x0001, 2, 2, []byte("N\x00\x00\x00")},
		{0x0002, 5, 3, GPSLatitude},
		{0x0003, 2, 2, []byte("W\x00\x00\x00")},
		{0x0004, 5, 3, GPSLongitude},
	}
	size := func(es []entry) int { return 2 + 12*len(es) + 4 }
	gpsAt := 8 + size(ifd0)
	dataAt := gpsAt + size(gps)
	var data []byte
	write := func(b *bytes.Buffer, es []entry) {
		binary.Write(b, binary.BigEndian, uint16(len(es)))
		for _, e := range es {
			v, count := e.value, e.count
			if e.tag == 0x8825 {
				v = binary.BigEndian.AppendUint32(nil, uint32(gpsAt))
			}
			if e.typ == 2 && count == 0 {
				count = uint32(len(v))
			}
			binary.Write(b, binary.BigEndian, e.tag)
			binary.Write(b, binary.BigEndian, e.typ)
			binary.Write(b, binary.BigEndian, count)
			if len(v) <= 4 {
				b.Write(append(v, make([]byte, 4-len(v))...))
			} else {
				binary.Write(b, binary.BigEndian, uint32(dataAt+len(data)))
				data = append(data, v...)
			}
		}
		b.Write([]byte{0, 0, 0, 0})
	}
	var b bytes.Buffer
	b.WriteString("MM\x00\x2a\x00\x00\x00\x08")
	write(&b, ifd0)
	write(&b, gps)
	b.Write(data)
	return b.Bytes()
}

// PNGBomb returns a tiny PNG that declares w×h pixels.
func PNGBomb(w, h uint32) []byte { return PNGDeclaring(w, h, 8, 2, 0) }

// PNGDeclaring returns a tiny PNG whose header declares w×h pixels of
// the bit depth, colour type and interlace method given; its image data
// is a few bytes.
func PNGDeclaring(w, h uint32, depth, colour, interlace byte) []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := binary.BigEndian.AppendUint32(nil, w)
	ihdr = binary.BigEndian.AppendUint32(ihdr, h)
	ihdr = append(ihdr, depth, colour, 0, 0, interlace)
	b.Write(Chunk("IHDR", ihdr))
	b.Write(Chunk("IDAT", []byte{0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01}))
	b.Write(Chunk("IEND", nil))
	return b.Bytes()
}

// Chunk returns a PNG chunk.
func Chunk(typ string, d []byte) []byte {
	out := binary.BigEndian.AppendUint32(nil, uint32(len(d)))
	out = append(out, typ...)
	out = append(out, d...)
	return binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(out[4:]))
}

// ZIP returns a ZIP archive holding one small file per name.
func ZIP(names ...string) []byte {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, n := range names {
		w, err := zw.Create(n)
		if err != nil {
			panic(err)
		}
		w.Write([]byte("content of " + n))
	}
	if err := zw.Close(); err != nil {
		panic(err)
	}
	return b.Bytes()
}

// PDF returns a small valid one-page PDF.
func PDF() []byte {
	return []byte("%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj\n3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 100 100]>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n")
}

// Sample returns a small valid file for name's extension (.jpg, .jpeg,
// .png, .pdf, .zip; anything else gets text), an image being w×h. The
// name is in the bytes, so samples of different names differ (for JPEG in
// a comment, which publishing strips).
func Sample(name string, w, h int) []byte {
	switch strings.ToLower(path.Ext(name)) {
	case ".jpg", ".jpeg":
		plain := JPEG(Picture(w, h))
		return append(append(append([]byte{}, plain[:2]...), segment(0xFE, []byte(name))...), plain[2:]...)
	case ".png":
		var b bytes.Buffer
		if err := png.Encode(&b, Picture(w, h)); err != nil {
			panic(err)
		}
		return b.Bytes()
	case ".pdf":
		return append([]byte("%PDF-1.4\n% "+name+"\n"), PDF()[len("%PDF-1.4\n"):]...)
	case ".zip":
		return ZIP(name + ".txt")
	}
	return []byte("content of " + name)
}

// PDFObjects returns a PDF 1.4 document whose object i+1 is objs[i] (the
// text between "obj" and "endobj"), with a cross-reference table and the
// trailer entries trailer ("/Root 1 0 R /Info 4 0 R").
func PDFObjects(objs []string, trailer string) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	return pdfSection(b.Bytes(), 1, objs, trailer, -1)
}

// PDFUpdate returns doc (made by PDFObjects) with an incremental update
// appended: the objects objs numbered from first (replacing or adding
// objects), a cross-reference section for them and a trailer holding
// trailer and pointing at the previous section, as editors save a
// changed document.
func PDFUpdate(doc []byte, first int, objs []string, trailer string) []byte {
	i := bytes.LastIndex(doc, []byte("startxref\n"))
	var prev int
	fmt.Sscanf(string(doc[i+len("startxref\n"):]), "%d", &prev)
	return pdfSection(append([]byte{}, doc...), first, objs, trailer, prev)
}

func pdfSection(doc []byte, first int, objs []string, trailer string, prev int) []byte {
	b := bytes.NewBuffer(doc)
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(b, "%d 0 obj\n%s\nendobj\n", first+i, o)
	}
	xref := b.Len()
	b.WriteString("xref\n")
	if first > 1 {
		b.WriteString("0 1\n0000000000 65535 f \n")
		fmt.Fprintf(b, "%d %d\n", first, len(objs))
	} else {
		fmt.Fprintf(b, "0 %d\n0000000000 65535 f \n", len(objs)+1)
	}
	for _, off := range offsets {
		fmt.Fprintf(b, "%010d 00000 n \n", off)
	}
	size := first + len(objs)
	if prev >= 0 {
		trailer += fmt.Sprintf(" /Prev %d", prev)
	}
	fmt.Fprintf(b, "trailer\n<< /Size %d %s >>\nstartxref\n%d\n%%%%EOF\n", size, trailer, xref)
	return b.Bytes()
}

// PDFStream returns a stream object's text holding data, with the
// dictionary entries dict ("/Type /Metadata /Subtype /XML").
func PDFStream(dict, data string) string {
	return fmt.Sprintf("<< %s /Length %d >>\nstream\n%s\nendstream", dict, len(data), data)
}

// PDFMetadata are the strings PlanPDF hides in a PDF's metadata slots.
type PDFMetadata struct {
	Title, Author string // the first revision's document information
	GPS           string // the catalog's XMP, as exif:GPSLatitude
	PageXMP       string // the page's XMP
	PieceInfo     string // the catalog's PieceInfo
	UpdatedTitle  string // the document information of an incremental update
}

// PlanPDF returns a one-page floor plan PDF (a heading, a rectangle, a
// grey box) whose metadata slots hold m: a first revision with its
// document information dictionary, the catalog's and the page's XMP
// metadata streams and the catalog's PieceInfo, then an incremental update
// replacing the document information (the first one stays in the file).
func PlanPDF(m PDFMetadata) []byte {
	xmp := func(body string) string {
		return `<?xpacket begin="" id="W5M0MpCehiHzreSzNTczkc9d"?><x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">` +
			`<rdf:Description rdf:about="" xmlns:exif="http://ns.adobe.com/exif/1.0/">` + body + `</rdf:Description></rdf:RDF></x:xmpmeta><?xpacket end="w"?>`
	}
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R /Metadata 6 0 R /PieceInfo << /Illustrator << /Private (" + m.PieceInfo + ") >> >> >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 200] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R /Metadata 7 0 R >>",
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
		PDFStream("", "BT /F1 18 Tf 20 160 Td (Main Floor) Tj ET\n2 w 20 20 200 110 re S\n0.5 g 40 40 60 40 re f"),
		PDFStream("/Type /Metadata /Subtype /XML", xmp("<exif:GPSLatitude>"+m.GPS+"</exif:GPSLatitude>")),
		PDFStream("/Type /Metadata /Subtype /XML", xmp("<exif:UserComment>"+m.PageXMP+"</exif:UserComment>")),
		"<< /Title (Floor plan - " + m.Title + ") /Author (" + m.Author + ") /CreationDate (D:20261124094100Z) >>",
	}
	doc := PDFObjects(objs, "/Root 1 0 R /Info 8 0 R")
	return PDFUpdate(doc, 8, []string{"<< /Title (" + m.UpdatedTitle + ") >>"}, "/Root 1 0 R /Info 8 0 R")
}

// Inflated returns data followed by the decompressed content of every
// zlib (FlateDecode) stream it holds, so that a search also finds what a
// PDF's compressed streams hold.
func Inflated(data []byte) []byte {
	out := append([]byte{}, data...)
	re := regexp.MustCompile(`(?s)stream\r?\n(.*?)endstream`)
	for _, m := range re.FindAllSubmatch(data, -1) {
		zr, err := zlib.NewReader(bytes.NewReader(m[1]))
		if err != nil {
			continue
		}
		d, _ := io.ReadAll(io.LimitReader(zr, 64<<20))
		out = append(out, d...)
	}
	return out
}

// ICCProfile returns an ICC version 2 display profile (sRGB primaries,
// gamma 2.2) whose description is desc and copyright text cprt, with a
// creation date and a device maker and model in its header: the text a
// profile can carry besides its colours.
func ICCProfile(desc, cprt string) []byte {
	be32 := func(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }
	xyz := func(x, y, z uint32) []byte {
		return append(append(append([]byte("XYZ \x00\x00\x00\x00"), be32(x)...), be32(y)...), be32(z)...)
	}
	descTag := append([]byte("desc\x00\x00\x00\x00"), be32(uint32(len(desc)+1))...)
	descTag = append(append(descTag, desc...), 0)
	descTag = append(descTag, make([]byte, 4+4+2+1+67)...)
	trc := []byte("curv\x00\x00\x00\x00\x00\x00\x00\x01\x02\x33")
	tags := []struct {
		sig  string
		data []byte
	}{
		{"desc", descTag},
		{"cprt", append(append([]byte("text\x00\x00\x00\x00"), cprt...), 0)},
		{"wtpt", xyz(0xF6D6, 0x10000, 0xD32D)},
		{"rXYZ", xyz(0x6FA2, 0x38F5, 0x0390)},
		{"gXYZ", xyz(0x6299, 0xB785, 0x18DA)},
		{"bXYZ", xyz(0x24A0, 0x0F84, 0xB6CF)},
		{"rTRC", trc}, {"gTRC", trc}, {"bTRC", trc},
	}
	table := be32(uint32(len(tags)))
	var data []byte
	off := 128 + 4 + 12*len(tags)
	for _, t := range tags {
		for len(data)%4 != 0 {
			data = append(data, 0)
		}
		table = append(append(append(table, t.sig...), be32(uint32(off+len(data)))...), be32(uint32(len(t.data)))...)
		data = append(data, t.data...)
	}
	hdr := make([]byte, 128)
	total := 128 + len(table) + len(data)
	binary.BigEndian.PutUint32(hdr, uint32(total))
	copy(hdr[4:], "Jane")
	copy(hdr[8:], "\x02\x10\x00\x00mntrRGB XYZ ")
	copy(hdr[24:], "\x07\xea\x00\x01\x00\x01\x00\x00\x00\x00\x00\x00acsp")
	copy(hdr[48:], "JaneCam1")
	copy(hdr[68:], append(append(be32(0xF6D6), be32(0x10000)...), be32(0xD32D)...))
	copy(hdr[80:], "Jane")
	return append(append(hdr, table...), data...)
}

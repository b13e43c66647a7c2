package mediatest

import (
	"bytes"
	"compress/flate"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"hash/adler32"
	"strings"
)

// PDFPlaces are the places of a PDF, besides what its pages draw, where
// PrivatePDF puts text: each a slot a producer's tool fills with what it
// knows (a title, a street, a client's name), none drawn on a page.
var PDFPlaces = []string{
	"info", "catalog-xmp", "page-xmp", "outline", "annot-contents", "annot-title", "annot-xmp", "link-uri",
	"field-name", "field-value", "field-tooltip", "doc-js", "open-action", "attach-name", "attach-desc",
	"attach-bytes", "page-label", "struct-alt", "layer-name", "hidden-layer-name", "oc-config",
	"named-dest", "dests", "catalog-key", "page-key", "pages-key", "font-key", "image-key", "image-xmp",
	"icc-desc", "icc-copyright", "mc-property", "piece-info", "thumb",
}

// privateContent is what PrivatePDF's page draws: a heading, a
// rectangle, a grey box in the layer that is on, a black box in the one
// that is off, the image.
const privateContent = "BT /F1 18 Tf 20 160 Td (Main Floor) Tj ET\n2 w 20 20 200 110 re S\n" +
	"/OC /oc1 BDC 0.5 g 40 40 60 40 re f EMC\n" +
	"/OC /oc2 BDC 0 g 150 40 40 40 re f EMC\n" +
	"q 40 0 0 40 240 140 cm /Im1 Do Q\n"

// xmp returns an XMP packet describing the document with body.
func xmp(body string) string {
	return `<?xpacket begin="" id="W5M0MpCehiHzreSzNTczkc9d"?><x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">` +
		`<rdf:Description rdf:about="">` + body + `</rdf:Description></rdf:RDF></x:xmpmeta><?xpacket end="w"?>`
}

// PrivatePDF returns a one-page floor plan PDF (a heading, a rectangle, a
// grey box in a visible layer, a black box in a layer that is off, a small
// image with an ICC profile) carrying secret(place) in each of PDFPlaces:
// the document information, XMP, an outline, annotations (hidden, so
// that they draw nothing), a link, a form field, JavaScript, an attached
// file, page labels, the structure tree, the layers' names, named
// destinations, custom keys of the catalog, the page tree, a page, a font
// and an image, the ICC profile's text, marked-content properties, piece
// info and a thumbnail.
func PrivatePDF(secret func(place string) string) []byte {
	s := secret
	icc := ICCProfile(s("icc-desc"), s("icc-copyright"))
	hidden := "/F 2 /Rect [0 0 10 10]"
	objs := []string{
		// 1: the catalog
		"<< /Type /Catalog /Pages 2 0 R /Metadata 22 0 R /Outlines 10 0 R /Names 12 0 R /OpenAction 14 0 R" +
			" /AcroForm << /Fields [15 0 R] >> /PageLabels << /Nums [0 << /S /D /P (" + s("page-label") + ") >>] >>" +
			" /StructTreeRoot 17 0 R /MarkInfo << /Marked true >>" +
			" /OCProperties << /OCGs [19 0 R 20 0 R] /D << /Name (" + s("oc-config") + ") /OFF [20 0 R] /Order [19 0 R 20 0 R] >> >>" +
			" /Dests << /" + s("dests") + " [3 0 R /Fit] >> /GuidepubPrivate (" + s("catalog-key") + ")" +
			" /PieceInfo << /Editor << /Private (" + s("piece-info") + ") >> >> >>",
		// 2: the page tree
		"<< /Type /Pages /Kids [3 0 R] /Count 1 /Private (" + s("pages-key") + ") >>",
		// 3: the page
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 200] /Contents 5 0 R /StructParents 0" +
			" /Resources << /Font << /F1 4 0 R >> /XObject << /Im1 21 0 R >>" +
			" /Properties << /oc1 19 0 R /oc2 20 0 R /mc0 << /Private (" + s("mc-property") + ") >> >> >>" +
			" /Annots [7 0 R 8 0 R 9 0 R 15 0 R] /Private (" + s("page-key") + ") /Thumb 6 0 R /Metadata 27 0 R >>",
		// 4: a font
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding /Private (" + s("font-key") + ") >>",
		// 5: the page's content
		PDFStream("", privateContent),
		// 6: a thumbnail whose bytes hold text
		PDFStream("/Width 1 /Height 1 /ColorSpace /DeviceGray /BitsPerComponent 8", s("thumb")),
		// 7: a note, hidden
		"<< /Type /Annot /Subtype /Text " + hidden + " /Contents (" + s("annot-contents") + ") /T (" + s("annot-title") + ")" +
			" /Extra << /Metadata 23 0 R >> >>",
		// 8: a link, hidden
		"<< /Type /Annot /Subtype /Link " + hidden + " /Border [0 0 0] /A << /S /URI /URI (https://example.com/" + s("link-uri") + ") >> >>",
		// 9: an attached file's annotation, hidden
		"<< /Type /Annot /Subtype /FileAttachment " + hidden + " /FS 11 0 R >>",
		// 10: the outline
		"<< /Type /Outlines /First 16 0 R /Last 16 0 R /Count 1 >>",
		// 11: an attached file
		"<< /Type /Filespec /F (" + s("attach-name") + ".txt) /UF (" + s("attach-name") + ".txt) /EF << /F 13 0 R >> /Desc (" + s("attach-desc") + ") >>",
		// 12: the names
		"<< /EmbeddedFiles << /Names [(" + s("attach-name") + ") 11 0 R] >> /JavaScript << /Names [(js) 18 0 R] >>" +
			" /Dests << /Names [(" + s("named-dest") + ") [3 0 R /Fit]] >> >>",
		// 13: the attached file's bytes
		PDFStream("/Type /EmbeddedFile", s("attach-bytes")),
		// 14: the open action
		"<< /S /JavaScript /JS (app.alert\\('" + s("open-action") + "'\\)) >>",
		// 15: a form field, hidden
		"<< /Type /Annot /Subtype /Widget " + hidden + " /FT /Tx /T (" + s("field-name") + ") /TU (" + s("field-tooltip") + ")" +
			" /V (" + s("field-value") + ") /DA (/Helv 0 Tf 0 g) /P 3 0 R >>",
		// 16: an outline item
		"<< /Title (" + s("outline") + ") /Parent 10 0 R /Dest [3 0 R /Fit] >>",
		// 17: the structure tree
		"<< /Type /StructTreeRoot /K << /S /Figure /Alt (" + s("struct-alt") + ") /Pg 3 0 R /K 0 >> >>",
		// 18: document JavaScript
		"<< /S /JavaScript /JS (" + s("doc-js") + ") >>",
		// 19 and 20: a layer that is on, one that is off
		"<< /Type /OCG /Name (" + s("layer-name") + ") >>",
		"<< /Type /OCG /Name (" + s("hidden-layer-name") + ") >>",
		// 21: a 2×2 image with an ICC profile
		fmt.Sprintf("<< /Type /XObject /Subtype /Image /Width 2 /Height 2 /BitsPerComponent 8 /ColorSpace [/ICCBased 24 0 R]"+
			" /Metadata 25 0 R /Private (%s) /Length 12 >>\nstream\n%s\nendstream", s("image-key"), "\x00\x00\x00\xff\xff\xff\xff\xff\xff\x00\x00\x00"),
		// 22: the catalog's XMP
		PDFStream("/Type /Metadata /Subtype /XML", xmp("<dc:title xmlns:dc=\"http://purl.org/dc/elements/1.1/\">"+s("catalog-xmp")+"</dc:title>")),
		// 23: XMP reached through a dictionary of an annotation
		PDFStream("/Type /Metadata /Subtype /XML", xmp("<dc:rights xmlns:dc=\"http://purl.org/dc/elements/1.1/\">"+s("annot-xmp")+"</dc:rights>")),
		// 24: the ICC profile
		fmt.Sprintf("<< /N 3 /Length %d >>\nstream\n%s\nendstream", len(icc), icc),
		// 25: the image's XMP
		PDFStream("/Type /Metadata /Subtype /XML", xmp("<dc:source xmlns:dc=\"http://purl.org/dc/elements/1.1/\">"+s("image-xmp")+"</dc:source>")),
		// 26: the document information
		"<< /Title (" + s("info") + ") /Producer (plan tool) >>",
		// 27: the page's XMP
		PDFStream("/Type /Metadata /Subtype /XML", xmp("<dc:description xmlns:dc=\"http://purl.org/dc/elements/1.1/\">"+s("page-xmp")+"</dc:description>")),
	}
	return PDFObjects(objs, "/Root 1 0 R /Info 26 0 R")
}

// PackedBomb returns a small valid PDF 1.5 of one page with n object
// streams, each holding one object followed by inflate bytes of spaces,
// compressed: sixty of 30 MiB make a file of about 1.8 MB whose streams
// inflate to 1.8 GiB. A cross-reference stream lists the objects, so
// that a reader decodes each object stream, and free more free entries,
// compressed; the page's resources name each packed object, so that a
// reader of the page reaches them all.
func PackedBomb(n, inflate, free int) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.5\n%\xe2\xe3\xcf\xd3\n")
	offsets := map[int]int{}
	obj := func(nr int, body string) {
		offsets[nr] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", nr, body)
	}
	obj(1, "<< /Type /Catalog /Pages 2 0 R >>")
	obj(2, "<< /Type /Pages /Kids [3 0 R] /Count 1 >>")
	var props strings.Builder
	for i := range n {
		fmt.Fprintf(&props, " /P%d %d 0 R", i, 4+n+i)
	}
	obj(3, "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 100 100] /Resources << /Properties <<"+props.String()+" >> >> >>")
	body := deflatedSpaces(inflate)
	for i := range n {
		head := fmt.Sprintf("%d 0 null", 4+n+i)
		z := packedZlib([]byte(head), body, inflate)
		obj(4+i, fmt.Sprintf("<< /Type /ObjStm /N 1 /First %d /Filter /FlateDecode /Length %d >>\nstream\n%s\nendstream", len(head)-len("null"), len(z), z))
	}
	xrefNr := 4 + 2*n
	var entries bytes.Buffer
	entry := func(typ byte, f2 uint32, f3 uint16) {
		entries.WriteByte(typ)
		entries.Write(binary.BigEndian.AppendUint32(nil, f2))
		entries.Write(binary.BigEndian.AppendUint16(nil, f3))
	}
	entry(0, 0, 65535)
	for nr := 1; nr < 4+n; nr++ {
		entry(1, uint32(offsets[nr]), 0)
	}
	for i := range n {
		entry(2, uint32(4+i), 0)
	}
	entry(1, uint32(b.Len()), 0)
	for range free {
		entry(0, 0, 0)
	}
	xref := b.Len()
	var z bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&z, zlib.BestCompression)
	zw.Write(entries.Bytes())
	zw.Close()
	fmt.Fprintf(&b, "%d 0 obj\n<< /Type /XRef /Size %d /W [1 4 2] /Root 1 0 R /Filter /FlateDecode /Length %d >>\nstream\n", xrefNr, xrefNr+1+free, z.Len())
	b.Write(z.Bytes())
	fmt.Fprintf(&b, "\nendstream\nendobj\nstartxref\n%d\n%%%%EOF\n", xref)
	return b.Bytes()
}

// deflatedSpaces returns n spaces compressed as raw deflate blocks, the
// last one final, with no reference before their start: they can follow
// other blocks.
func deflatedSpaces(n int) []byte {
	var b bytes.Buffer
	fw, _ := flate.NewWriter(&b, flate.BestCompression)
	spaces := bytes.Repeat([]byte(" "), 1<<20)
	for left := n; left > 0; left -= len(spaces) {
		fw.Write(spaces[:min(left, len(spaces))])
	}
	fw.Close()
	return b.Bytes()
}

// packedZlib returns the zlib stream of head followed by the n spaces
// that body (deflatedSpaces(n)) holds, compressing only head.
func packedZlib(head, body []byte, n int) []byte {
	var b bytes.Buffer
	b.Write([]byte{0x78, 0xDA})
	fw, _ := flate.NewWriter(&b, flate.BestCompression)
	fw.Write(head)
	fw.Flush()
	b.Write(body)
	sum := adler32.New()
	sum.Write(head)
	spaces := bytes.Repeat([]byte(" "), 1<<20)
	for left := n; left > 0; left -= len(spaces) {
		sum.Write(spaces[:min(left, len(spaces))])
	}
	return binary.BigEndian.AppendUint32(b.Bytes(), sum.Sum32())
}

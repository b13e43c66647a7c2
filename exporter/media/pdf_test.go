package media_test

import (
	"bytes"
	"compress/zlib"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"

	"github.com/guidepub/guidepub/exporter/media"
	"github.com/guidepub/guidepub/exporter/media/mediatest"
	"github.com/guidepub/guidepub/fixtures"
)

// canary returns a string no file holds by chance.
func canary(what string) string {
	b := make([]byte, 6)
	rand.Read(b)
	return what + "-" + hex.EncodeToString(b)
}

// planPDF returns mediatest.PlanPDF with a canary in every metadata slot,
// and the canaries.
func planPDF(t *testing.T) (doc []byte, canaries []string) {
	t.Helper()
	m := mediatest.PDFMetadata{Title: canary("title"), Author: canary("author"), GPS: canary("gps"),
		PageXMP: canary("pagexmp"), PieceInfo: canary("piece"), UpdatedTitle: canary("title2")}
	return mediatest.PlanPDF(m), []string{m.Title, m.Author, m.GPS, m.PageXMP, m.PieceInfo, m.UpdatedTitle}
}

func rebuildPDF(t *testing.T, doc []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	if err := media.RebuildPDF(&out, doc, 0); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// poppler returns the path of the poppler tool name, or skips (fails
// under GUIDEPUB_TEST_REQUIRE=1) when it is not installed.
func poppler(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		fixtures.Missing(t, name, "install Debian's poppler-utils")
	}
	return p
}

// pdfInfo runs pdfinfo on doc, with and without -meta (which prints the
// catalog's XMP), and returns both outputs.
func pdfInfo(t *testing.T, doc []byte) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "doc.pdf")
	if err := os.WriteFile(f, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	var all []byte
	for _, args := range [][]string{{f}, {"-meta", f}} {
		out, err := exec.Command(poppler(t, "pdfinfo"), args...).CombinedOutput()
		if err != nil {
			t.Fatalf("pdfinfo: %v\n%s", err, out)
		}
		all = append(all, out...)
	}
	return string(all)
}

// render returns the pages of doc as poppler draws them (gray PGM at 50
// dpi), one per page.
func render(t *testing.T, doc []byte) [][]byte {
	t.Helper()
	dir := t.TempDir()
	f := filepath.Join(dir, "doc.pdf")
	if err := os.WriteFile(f, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(poppler(t, "pdftoppm"), "-r", "50", "-gray", f, filepath.Join(dir, "page")).CombinedOutput(); err != nil {
		t.Fatalf("pdftoppm: %v\n%s", err, out)
	}
	names, _ := filepath.Glob(filepath.Join(dir, "page-*.pgm"))
	var pages [][]byte
	for _, n := range names {
		d, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, d)
	}
	return pages
}

// samePages fails unless a and b render to the same pixels, and to some
// ink.
func samePages(t *testing.T, a, b []byte) {
	t.Helper()
	pa, pb := render(t, a), render(t, b)
	if len(pa) == 0 || len(pa) != len(pb) {
		t.Fatalf("%d pages before, %d after", len(pa), len(pb))
	}
	for i := range pa {
		if !bytes.Equal(pa[i], pb[i]) {
			t.Errorf("page %d renders differently", i+1)
		}
		if !inked(pa[i]) {
			t.Errorf("page %d is blank", i+1)
		}
	}
}

// inked reports whether a PGM image has a dark pixel.
func inked(pgm []byte) bool {
	// The header: "P5", width and height, the maximum value, each
	// followed by a newline.
	pix := pgm
	for range 3 {
		i := bytes.IndexByte(pix, '\n')
		if i < 0 {
			return false
		}
		pix = pix[i+1:]
	}
	return bytes.ContainsFunc(pix, func(r rune) bool { return r < 0x80 })
}

func noCanary(t *testing.T, data []byte, canaries []string) {
	t.Helper()
	all := mediatest.Inflated(data)
	for _, c := range canaries {
		if bytes.Contains(all, []byte(c)) {
			t.Errorf("the stripped PDF still holds %q", c)
		}
	}
}

// TestRebuildPDF: a plan PDF with metadata in every slot is published with
// none, renders the same pages with poppler, and is the same bytes each
// time.
func TestRebuildPDF(t *testing.T) {
	doc, canaries := planPDF(t)
	before := pdfInfo(t, doc)
	for _, want := range []string{"Title:", "xpacket", canaries[5], canaries[2]} {
		if !strings.Contains(before, want) {
			t.Fatalf("the test PDF shows no %s in pdfinfo:\n%s", want, before)
		}
	}
	got := rebuildPDF(t, doc)
	noCanary(t, got, canaries)
	after := pdfInfo(t, got)
	for _, gone := range []string{"Title:", "Author:", "Creator:", "Producer:", "CreationDate:", "ModDate:", "xpacket"} {
		if strings.Contains(after, gone) {
			t.Errorf("pdfinfo still shows %s:\n%s", gone, after)
		}
	}
	if !strings.Contains(after, "Pages:           1") {
		t.Errorf("pdfinfo after:\n%s", after)
	}
	samePages(t, doc, got)
	if again := rebuildPDF(t, doc); !bytes.Equal(again, got) {
		t.Error("stripping the same PDF twice gave different bytes")
	}
	// A document written with object streams (the dictionaries compressed
	// together) and a cross-reference stream, as most producers save.
	packed := packPDF(t, doc)
	if !bytes.Contains(mediatest.Inflated(packed), []byte(canaries[4])) {
		t.Fatal("the packed test PDF lost its PieceInfo")
	}
	got = rebuildPDF(t, packed)
	noCanary(t, got, canaries)
	samePages(t, packed, got)
}

// packPDF returns doc rewritten by pdfcpu with object streams, its
// metadata kept.
func packPDF(t *testing.T, doc []byte) []byte {
	t.Helper()
	api.DisableConfigDir()
	conf := model.NewDefaultConfiguration()
	conf.WriteObjectStream, conf.WriteXRefStream = true, true
	ctx, err := api.ReadContext(bytes.NewReader(doc), conf)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := api.WriteContext(ctx, &out); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(out.Bytes(), []byte("/ObjStm")) {
		t.Fatal("pdfcpu wrote no object stream")
	}
	return out.Bytes()
}

// TestRebuildPDFSamples: each distinct sample plan PDF renders the same
// pages after the rebuild, its text extracts the same and pdfcpu
// validates it; each gives the same bytes every time (pdfcpu's writer
// ordered a page's fonts by walking a Go map: two runs differed).
func TestRebuildPDFSamples(t *testing.T) {
	names, _ := filepath.Glob(filepath.Join("..", "..", "fixtures", "bundles", "*", "*", "*.pdf"))
	if len(names) == 0 {
		t.Fatal("no sample PDF")
	}
	rendered := map[string]bool{}
	for _, n := range names {
		doc, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		got := rebuildPDF(t, doc)
		for range 8 {
			if again := rebuildPDF(t, doc); !bytes.Equal(again, got) {
				t.Fatalf("%s: rebuilding it again gave different bytes", n)
			}
		}
		if rendered[string(doc)] {
			continue
		}
		rendered[string(doc)] = true
		samePages(t, doc, got)
		want, text := pdfText(t, doc), pdfText(t, got)
		if strings.TrimSpace(text) == "" || text != want {
			t.Errorf("%s: the rebuilt PDF's text is %q, the source's %q", n, text, want)
		}
		validPDF(t, got)
	}
}

// TestRebuildPDFRefuses: what cannot be published says why.
func TestRebuildPDFRefuses(t *testing.T) {
	for _, c := range []struct {
		name, want string
		doc        []byte
	}{
		{"not a pdf", "does not parse", []byte("%PDF-1.4\nnothing here\n%%EOF\n")},
		{"encrypted", "encrypted", encryptedPDF(t)},
	} {
		var out bytes.Buffer
		err := media.RebuildPDF(&out, c.doc, 0)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

func encryptedPDF(t *testing.T) []byte {
	t.Helper()
	doc, _ := planPDF(t)
	api.DisableConfigDir()
	conf := model.NewAESConfiguration("", "owner-secret", 256)
	var out bytes.Buffer
	if err := api.Encrypt(bytes.NewReader(doc), &out, conf); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// TestRebuildPDFBomb: a PDF whose cross-reference stream inflates to 256 MiB
// from 256 KiB is refused after inflating at most what the limit allows,
// into no memory. Before the guard pdfcpu decoded it, 1 GiB allocated.
func TestRebuildPDFBomb(t *testing.T) {
	doc := xrefBomb(t, 256<<20)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	err := media.RebuildPDF(io.Discard, doc, 0)
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "decompresses to more than 32 MiB") {
		t.Errorf("error %v", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 200<<20 {
		t.Errorf("refusing the bomb allocated %d MiB", alloc>>20)
	}
	t.Logf("%d KiB: %d MiB allocated, %v", len(doc)>>10, (after.TotalAlloc-before.TotalAlloc)>>20, err)
}

// xrefBomb returns a PDF whose cross-reference stream decodes to n bytes.
func xrefBomb(t *testing.T, n int) []byte {
	t.Helper()
	var z bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&z, zlib.BestCompression)
	zero := make([]byte, 1<<20)
	for range n >> 20 {
		zw.Write(zero)
	}
	zw.Close()
	var b bytes.Buffer
	b.WriteString("%PDF-1.5\n")
	fmt.Fprintf(&b, "1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n2 0 obj\n<< /Type /Pages /Kids [] /Count 0 >>\nendobj\n")
	xref := b.Len()
	fmt.Fprintf(&b, "3 0 obj\n<< /Type /XRef /Size %d /W [1 4 2] /Root 1 0 R /Filter /FlateDecode /Length %d >>\nstream\n", n/7, z.Len())
	b.Write(z.Bytes())
	fmt.Fprintf(&b, "\nendstream\nendobj\nstartxref\n%d\n%%%%EOF\n", xref)
	return b.Bytes()
}

// pdfText returns the text poppler extracts from doc.
func pdfText(t *testing.T, doc []byte) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "doc.pdf")
	if err := os.WriteFile(f, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(poppler(t, "pdftotext"), f, "-").CombinedOutput()
	if err != nil {
		t.Fatalf("pdftotext: %v\n%s", err, out)
	}
	return string(out)
}

// validPDF fails unless pdfcpu's validation accepts doc. It is relaxed
// (strict wants FirstChar on the standard fonts, which PDF 1.7 does not).
func validPDF(t *testing.T, doc []byte) {
	t.Helper()
	api.DisableConfigDir()
	conf := model.NewDefaultConfiguration()
	conf.ValidationMode = model.ValidationRelaxed
	if err := api.Validate(bytes.NewReader(doc), conf); err != nil {
		t.Errorf("the rebuilt PDF is not valid: %v", err)
	}
}

// TestRebuildPDFKeepsOnlyWhatPagesDraw: a PDF with private text in every
// place a producer's tool fills besides the pages (mediatest.PDFPlaces),
// written plainly and with object streams, is published with none of it,
// renders the same pages with poppler (the layer that is off still off),
// keeps its drawn text extractable and is a valid PDF. Before the rebuild,
// the stripped PDF kept the outline, annotations, form, JavaScript,
// attachment, page labels, structure tree, layer names, destinations and
// custom keys.
func TestRebuildPDFKeepsOnlyWhatPagesDraw(t *testing.T) {
	secrets := map[string]string{}
	doc := mediatest.PrivatePDF(func(place string) string {
		if secrets[place] == "" {
			secrets[place] = canary(place)
		}
		return secrets[place]
	})
	if len(secrets) != len(mediatest.PDFPlaces) {
		t.Fatalf("the test PDF fills %d places, mediatest.PDFPlaces lists %d", len(secrets), len(mediatest.PDFPlaces))
	}
	for _, variant := range []struct {
		name string
		doc  []byte
	}{{"plain", doc}, {"object streams", packPDF(t, doc)}} {
		t.Run(variant.name, func(t *testing.T) {
			all := mediatest.Inflated(variant.doc)
			for _, place := range mediatest.PDFPlaces {
				if !bytes.Contains(all, []byte(secrets[place])) {
					t.Fatalf("the test PDF lost its %s", place)
				}
			}
			got := rebuildPDF(t, variant.doc)
			found := mediatest.Inflated(got)
			for _, place := range mediatest.PDFPlaces {
				if bytes.Contains(found, []byte(secrets[place])) {
					t.Errorf("the rebuilt PDF still holds its %s", place)
				}
			}
			samePages(t, variant.doc, got)
			if text := pdfText(t, got); !strings.Contains(text, "Main Floor") {
				t.Errorf("the rebuilt PDF's text is %q", text)
			}
			validPDF(t, got)
			if again := rebuildPDF(t, variant.doc); !bytes.Equal(again, got) {
				t.Error("rebuilding the same PDF twice gave different bytes")
			}
		})
	}
}

// TestRebuildPDFPackedBomb: a 1.8 MB PDF of sixty object streams that
// each inflate to 30 MiB, which the page reaches, is refused by Check
// under the default budget, and by RebuildPDF, before anything parses
// it, having inflated a bounded part of it into no memory. Before, Check
// took it for 32 MiB and the rewrite peaked at 4.4 GB.
func TestRebuildPDFPackedBomb(t *testing.T) {
	doc := mediatest.PackedBomb(60, 30<<20, 0)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	info, err := media.Check(bytes.NewReader(doc), int64(len(doc)), media.Limits{})
	if _, ok := errors.AsType[*media.BudgetError](err); !ok {
		t.Errorf("Check: %v, want a budget error", err)
	}
	if info.Decode.Bytes <= media.DefaultDecodeMemory {
		t.Errorf("Check estimated %d MiB", info.Decode.Bytes>>20)
	}
	rebuildErr := media.RebuildPDF(io.Discard, doc, 0)
	runtime.ReadMemStats(&after)
	if rebuildErr == nil || !strings.Contains(rebuildErr.Error(), "raise it with --max-decode-memory") {
		t.Errorf("RebuildPDF: %v", rebuildErr)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
		t.Errorf("refusing the bomb allocated %d MiB", alloc>>20)
	}
	t.Logf("%d KiB: %v", len(doc)>>10, err)

	// A document of the same shape whose streams fit is rebuilt.
	small := mediatest.PackedBomb(4, 4<<20, 0)
	info, err = media.Check(bytes.NewReader(small), int64(len(small)), media.Limits{})
	if err != nil || info.Decode.Bytes < 5*16<<20 {
		t.Fatalf("Check: %v, estimate %d MiB", err, info.Decode.Bytes>>20)
	}
	if err := media.RebuildPDF(io.Discard, small, info.Decode.Bytes); err != nil {
		t.Error(err)
	}
}

// TestRebuildPDFRefusesPackedFilters: an object stream encoded with a
// filter the check cannot count (LZW) is refused with the reason.
func TestRebuildPDFRefusesPackedFilters(t *testing.T) {
	doc := bytes.Replace(mediatest.PackedBomb(1, 1<<10, 0), []byte("/ObjStm /N 1 /First 4 /Filter /FlateDecode"), []byte("/ObjStm /N 1 /First 4 /Filter /LZWDecode  "), 1)
	_, err := media.Check(bytes.NewReader(doc), int64(len(doc)), media.Limits{})
	if err == nil || !strings.Contains(err.Error(), "object stream is encoded with /LZWDecode") {
		t.Errorf("Check: %v", err)
	}
}

// TestRebuildPDFKeepsEmbeddedCMap: a Type 0 font whose encoding is an
// embedded CMap stream keeps it (the rebuild dropped it when it took an
// encoding for a name or a dictionary only), and its ToUnicode CMap too.
func TestRebuildPDFKeepsEmbeddedCMap(t *testing.T) {
	cmap := "/CIDInit /ProcSet findresource begin 12 dict begin begincmap /CMapName /Custom def 1 begincodespacerange <00> <FF> endcodespacerange 1 begincidrange <00> <FF> 0 endcidrange endcmap CMapName currentdict /CMap defineresource pop end end"
	doc := mediatest.PDFObjects([]string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 100 100] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
		"<< /Type /Font /Subtype /Type0 /BaseFont /Custom /Encoding 6 0 R /ToUnicode 8 0 R /DescendantFonts [7 0 R] >>",
		mediatest.PDFStream("", "BT /F1 12 Tf 10 50 Td <41> Tj ET"),
		mediatest.PDFStream("/Type /CMap /CMapName /Custom /CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >>", cmap),
		"<< /Type /Font /Subtype /CIDFontType2 /BaseFont /Custom /CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> /DW 500 >>",
		mediatest.PDFStream("", strings.ReplaceAll(cmap, "/Custom", "/ToUni")),
	}, "/Root 1 0 R")
	got := string(rebuildPDF(t, doc))
	if strings.Contains(got, "obj\nnull") {
		t.Errorf("the rebuilt PDF refers to an object it emptied:\n%s", got)
	}
	for _, want := range []string{"/Encoding ", "/ToUnicode ", "/CMapName/Custom", "/CMapName /Custom def", "/CMapName /ToUni def", "/Registry(Adobe)"} {
		if !strings.Contains(strings.ReplaceAll(got, " /", "/"), strings.ReplaceAll(want, " /", "/")) {
			t.Errorf("the rebuilt font lost %q:\n%s", want, got)
		}
	}
}

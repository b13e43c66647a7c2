package exporter

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/exporter/media/mediatest"
	"github.com/guidepub/guidepub/exporter/write"
)

// TestNoPrivateMetadataPublished publishes a camera photo with GPS EXIF
// (and XMP, IPTC, a comment) in a guide with a view that shows its
// address (vKT301A) and one that hides it (vKT301B): no public byte holds
// the coordinates, the other private strings or an EXIF block beyond the
// orientation; the private tree's documents are the bundle's bytes.
func TestNoPrivateMetadataPublished(t *testing.T) {
	ev := newEnv(t, fsKinds[0])
	photo := filepath.Join(ev.srcDir, kingFolder, "photos", "front.jpg")
	if err := afero.WriteFile(ev.src, photo, mediatest.PhotoWithGPS(960, 720), 0o644); err != nil {
		t.Fatal(err)
	}
	if rep := ev.exportAll(); rep.Rejected != 0 {
		for _, g := range rep.Guides {
			if g.Err != nil {
				t.Log(g.Err)
			}
		}
		t.Fatalf("rejected: %s", rep.Summary())
	}
	pub := snapshot(t, ev.out, ev.outDir)
	photos := 0
	for name, data := range pub {
		if strings.HasPrefix(name, "vKT301") && strings.Contains(name, "/doc/photos/ph-1") {
			photos++
		}
		for _, c := range [][]byte{mediatest.GPSLatitude, mediatest.GPSLongitude} {
			if bytes.Contains(data, c) {
				t.Errorf("%s holds the GPS coordinates", name)
			}
		}
		for _, s := range mediatest.Secrets {
			if bytes.Contains(data, []byte(s)) {
				t.Errorf("%s holds %q", name, s)
			}
		}
		// The only EXIF block allowed is the orientation alone.
		if i := bytes.Index(data, []byte("Exif\x00\x00")); i >= 0 && !bytes.HasPrefix(data[i+6:], []byte("MM\x00\x2a\x00\x00\x00\x08\x00\x01\x01\x12")) {
			t.Errorf("%s holds an EXIF block with more than the orientation", name)
		}
	}
	// Both views publish the photo, its small one and its renditions
	// (960 wide: 480).
	if photos != 6 {
		t.Errorf("%d published files of photo ph-1 in the views, want 6", photos)
	}
	priv := snapshot(t, ev.out, ev.privDir)
	zipSrc, err := afero.ReadFile(ev.src, filepath.Join(ev.srcDir, kingFolder, "doc", "gallery.zip"))
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for name, data := range priv {
		if strings.HasSuffix(name, "/en/galleryZip.zip") && strings.Contains(name, "/gKT") {
			found = true
			if !bytes.Equal(data, zipSrc) {
				t.Errorf("private %s differs from the bundle's file", name)
			}
		}
	}
	if !found {
		t.Error("no private gallery.zip")
	}
}

// TestNoPDFMetadataPublished publishes a floor plan PDF whose document
// information names the address and the owner, whose XMP holds a GPS
// position (the catalog's and the page's), with a PieceInfo and an
// earlier revision's information, in a guide with a view that shows the
// address (vKT301A) and one that hides it (vKT301B): no public byte holds
// any of them, compressed streams included. Before, the PDF was
// published byte for byte.
func TestNoPDFMetadataPublished(t *testing.T) {
	ev := newEnv(t, fsKinds[0])
	var canaries []string
	secret := func(what string) string {
		b := make([]byte, 6)
		rand.Read(b)
		canaries = append(canaries, what+"-"+hex.EncodeToString(b))
		return canaries[len(canaries)-1]
	}
	doc := mediatest.PlanPDF(mediatest.PDFMetadata{Title: "301 King St E " + secret("title"), Author: secret("author"),
		GPS: secret("gps"), PageXMP: secret("pagexmp"), PieceInfo: secret("piece"), UpdatedTitle: secret("title2")})
	plan := filepath.Join(ev.srcDir, kingFolder, "doc", "floorplan_metric_en.pdf")
	if err := afero.WriteFile(ev.src, plan, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	if rep := ev.exportAll(); rep.Rejected != 0 {
		t.Fatalf("rejected: %s", rep.Summary())
	}
	pdfs := 0
	for name, data := range snapshot(t, ev.out, ev.outDir) {
		if strings.HasSuffix(name, "/en/pdfMetric.pdf") && strings.HasPrefix(name, "vKT301") {
			pdfs++
			if !bytes.HasPrefix(data, []byte("%PDF-1.")) || !bytes.Contains(mediatest.Inflated(data), []byte("/Type/Page")) {
				t.Errorf("%s is no PDF with a page: %.40q", name, data)
			}
		}
		all := mediatest.Inflated(data)
		for _, c := range canaries {
			if bytes.Contains(all, []byte(c)) {
				t.Errorf("%s holds %q", name, c)
			}
		}
	}
	if pdfs != 2 {
		t.Errorf("%d published plan PDFs, want 2", pdfs)
	}
}

// TestPDFBombRefused: a plan PDF of sixty object streams that each
// inflate to 30 MiB (1.8 MB; the export peaked at 4.4 GB with it) replaces
// a published one: the bundle is refused by its check, naming the file,
// its JSON path and the budget, and the published PDFs stay as they were.
func TestPDFBombRefused(t *testing.T) {
	ev := newEnv(t, fsKinds[0])
	if rep := ev.exportAll(); rep.Rejected != 0 {
		t.Fatalf("rejected: %s", rep.Summary())
	}
	before := snapshot(t, ev.out, ev.outDir)
	plan := filepath.Join(ev.srcDir, kingFolder, "doc", "floorplan_metric_en.pdf")
	if err := afero.WriteFile(ev.src, plan, mediatest.PackedBomb(60, 30<<20, 0), 0o644); err != nil {
		t.Fatal(err)
	}
	rep := ev.exportAll()
	if rep.Rejected != 1 {
		t.Fatalf("rejected %d, want 1: %s", rep.Rejected, rep.Summary())
	}
	err := resultFor(t, rep, kingFolder).Err
	for _, want := range []string{"floorplan_metric_en.pdf", "$.", "object streams of", "--max-decode-memory"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("error %v, want one naming %q", err, want)
		}
	}
	if got := changed(before, snapshot(t, ev.out, ev.outDir)); len(got) != 0 {
		t.Errorf("the refused bundle changed %v", got)
	}
}

// TestNoImageWorkWhenImagesUnchanged: the first export makes renditions;
// an export of an unchanged guide, or of a guide whose guide.json alone
// changed, decodes no image.
func TestNoImageWorkWhenImagesUnchanged(t *testing.T) {
	ev := newEnv(t, fsKinds[1])
	before := write.ImagesDecoded()
	ev.exportAll()
	first := write.ImagesDecoded() - before
	if first == 0 {
		t.Fatal("the first export made no renditions")
	}
	ev.exportAll()
	ev.editGuide(kingFolder, func(g map[string]any) {
		g["property"].(map[string]any)["city"] = "Waterloo"
	})
	rep := ev.exportAll()
	if rep.Written == 0 {
		t.Fatalf("the edit changed nothing: %s", rep.Summary())
	}
	if n := write.ImagesDecoded() - before - first; n != 0 {
		t.Errorf("exports of unchanged images decoded %d images", n)
	}
}

// TestBadMediaRejected replaces a published bundle's file with bad
// content: the bundle is rejected with the file (and the JSON path)
// named, and nothing published changes.
func TestBadMediaRejected(t *testing.T) {
	photo := mediatest.PhotoWithGPS(960, 720)
	tests := []struct {
		name, file string
		data       []byte
		edit       func(g map[string]any)
		want       string
	}{
		{"decompression bomb", "photos/kitchen.png", mediatest.PNGBomb(100000, 100000), nil,
			"301-king-st-e/photos/kitchen.png: $.media.photos[1].file: the file is an image of 100000×100000 pixels"},
		{"decode over the memory budget", "photos/kitchen.png", mediatest.PNGDeclaring(7000, 7000, 16, 6, 1), nil,
			"301-king-st-e/photos/kitchen.png: $.media.photos[1].file: the file is a PNG image (49.0 megapixels, 16 bits per sample, interlaced): decoding it takes about"},
		{"truncated JPEG", "photos/front.jpg", photo[:len(photo)/2], nil,
			"301-king-st-e/photos/front.jpg: $.media.photos[0].file: the file is a JPEG image that is truncated"},
		{"PDF that is HTML", "doc/floorplan_metric_en.pdf", []byte("<html><body>502 Bad Gateway</body></html>"), nil,
			"301-king-st-e/doc/floorplan_metric_en.pdf: $.media.documents.en.pdfMetric: the file is not a JPEG, PNG, GIF, PDF or ZIP file (it starts like HTML or XML)"},
		{"PDF that does not parse", "doc/floorplan_metric_en.pdf", []byte("%PDF-1.4\n1 0 obj (no catalog) endobj\n%%EOF\n"), nil,
			"301-king-st-e/doc/floorplan_metric_en.pdf: the file is a PDF document that does not parse"},
		{"ZIP with ../", "doc/gallery.zip", mediatest.ZIP("a.jpg", "../../outside.jpg"), nil,
			`301-king-st-e/doc/gallery.zip: $.media.documents.en.galleryZip: the file is a ZIP archive with the entry "../../outside.jpg"`},
		{"PNG named .jpg", "photos/front.jpg", mediatest.Sample("x.png", 960, 720), nil,
			`301-king-st-e/photos/front.jpg: $.media.photos[0].file: the file is a PNG image, but its name ends in ".jpg"`},
		{"PDF as a floor page", "doc/floor_metric_en_1.jpg", mediatest.PDF(), nil,
			`the file is a PDF document, but its name ends in ".jpg"`},
		{"width not the file's", "", nil, func(g map[string]any) {
			g["media"].(map[string]any)["photos"].([]any)[0].(map[string]any)["width"] = 999
		}, "301-king-st-e/photos/front.jpg: $.media.photos[0].width: width 999 differs from the file's 960 pixels"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := newEnv(t, fsKinds[0])
			if rep := ev.exportAll(); rep.Rejected != 0 {
				t.Fatal(rep.Summary())
			}
			pub0, priv0 := snapshot(t, ev.out, ev.outDir), snapshot(t, ev.out, ev.privDir)
			if tt.file != "" {
				if err := afero.WriteFile(ev.src, filepath.Join(ev.srcDir, kingFolder, filepath.FromSlash(tt.file)), tt.data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if tt.edit != nil {
				ev.editGuide(kingFolder, tt.edit)
			}
			rep := ev.exportAll()
			var err error
			for _, g := range rep.Guides {
				if g.Folder == kingFolder {
					err = g.Err
				}
			}
			var be *bundle.Error
			if !errors.As(err, &be) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want a bundle error with %q", err, tt.want)
			}
			if c := changed(pub0, snapshot(t, ev.out, ev.outDir)); len(c) > 0 {
				t.Errorf("public files changed: %v", c)
			}
			// What an export that failed keeps for the next one: the
			// marker of an export cut short, the record of a failed decode.
			bookkeeping := func(s string) bool {
				return s == "manifest.json" || s == ".manifest.json.writing" || strings.HasPrefix(s, write.DecodesDir+"/")
			}
			if c := changed(priv0, snapshot(t, ev.out, ev.privDir)); len(slices.DeleteFunc(c, bookkeeping)) > 0 {
				t.Errorf("private files changed: %v", c)
			}
		})
	}
}

// TestBannerImage publishes a guide whose banner image is a wide camera
// photo with GPS EXIF: every ready view publishes it stripped of its
// metadata, with its renditions, as doc/banner.jpg; the branded pages
// (view and alias) show it with a srcset, the unbranded and embedded
// pages never name it (MLS rules), even in a view hiding every feature.
func TestBannerImage(t *testing.T) {
	ev := newEnv(t, fsKinds[0])
	agent := filepath.Join(ev.srcDir, kingFolder, "photos", "agent.jpg")
	if err := afero.WriteFile(ev.src, agent, mediatest.PhotoWithGPS(1200, 900), 0o644); err != nil {
		t.Fatal(err)
	}
	ev.editGuide(kingFolder, func(g map[string]any) {
		g["media"].(map[string]any)["bannerImage"] = map[string]any{"file": "photos/agent.jpg"}
		views := g["views"].([]any)
		views[1].(map[string]any)["hidden"] = bundle.HiddenFeatures
	})
	if rep := ev.exportAll(); rep.Rejected != 0 {
		t.Fatalf("rejected: %s", rep.Summary())
	}
	pub := snapshot(t, ev.out, ev.outDir)
	for _, v := range []string{"vKT301A", "vKT301B"} {
		for _, name := range []string{"banner.jpg", "banner.w480.jpg", "banner.w960.jpg"} {
			data, ok := pub[v+"/doc/"+name]
			switch {
			case !ok:
				t.Errorf("%s/doc/%s not published", v, name)
			case bytes.Contains(data, mediatest.GPSLatitude):
				t.Errorf("%s/doc/%s holds the GPS coordinates", v, name)
			}
		}
	}
	for _, page := range []string{"vKT301A/index.html", "301-king-st-e/index.html", "vKT301A/fr/index.html", "vKT301B/index.html"} {
		html := string(pub[page])
		if !strings.Contains(html, `src="/vKT301`) || !strings.Contains(html, "/doc/banner.jpg\"") || !strings.Contains(html, "/doc/banner.w480.jpg 480w") {
			t.Errorf("branded page %s does not show the banner image with its renditions", page)
		}
	}
	for name, data := range pub {
		if (strings.HasPrefix(name, "u/") || strings.HasPrefix(name, "embed/")) && bytes.Contains(data, []byte("banner.")) {
			t.Errorf("%s names the banner image", name)
		}
	}
}

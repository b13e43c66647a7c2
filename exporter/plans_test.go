package exporter

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/guidepub/guidepub/site"
)

// TestViewPlans: a view with its own plans publishes those (and no other
// floor plan of the guide), links them from its autofill and pages, and
// leaves the other views' plans alone; the ready event of a default view
// with its own plans links the guide's plans privately.
func TestViewPlans(t *testing.T) {
	ev := newEnv(t, fsKinds[0])
	plans := map[string]any{"en": map[string]any{
		"pdfMetric": "doc/floorplan_metric_fr.pdf",
		"jpgMetric": []any{map[string]any{"id": 1, "floorName": "Main Floor", "file": "doc/floor_metric_en_2.jpg"}},
	}}
	ev.editGuide(kingFolder, func(g map[string]any) { g["views"].([]any)[1].(map[string]any)["plans"] = plans })
	ev.exportAll()
	pub := snapshot(t, ev.out, ev.outDir)
	b := viewFiles(pub, "vKT301B")
	a := viewFiles(pub, "vKT301A")
	var plansB []string
	for name := range b {
		if f, _, ok := site.PublicFileOf("vKT301B/" + name); ok && slices.Contains(f.HiddenBy, site.HideFloorPlans) {
			plansB = append(plansB, name)
		}
	}
	slices.Sort(plansB)
	want := []string{"doc/en/jpgMetric-1.jpg", "doc/en/jpgMetric-1.w480.jpg", "doc/en/pdfMetric.pdf"}
	if !slices.Equal(plansB, want) {
		t.Fatalf("vKT301B publishes the plans %v, want its own %v", plansB, want)
	}
	// The same source files, published the same way as the other view's.
	if !bytes.Equal(b["doc/en/pdfMetric.pdf"], a["doc/fr/pdfMetric.pdf"]) || !bytes.Equal(b["doc/en/jpgMetric-1.jpg"], a["doc/en/jpgMetric-2.jpg"]) {
		t.Error("vKT301B's plans are not its own files")
	}
	for _, name := range []string{"doc/en/pdfImperial.pdf", "doc/en/embedImage.jpg", "doc/en/jpgMetric-1.jpg", "doc/fr/pdfMetric.pdf"} {
		if a[name] == nil {
			t.Errorf("vKT301A lost its plan %s", name)
		}
	}
	autofill := string(b[site.AutofillFile])
	if strings.Count(autofill, `"Floor Plan"`) != 2 || !strings.Contains(autofill, "/vKT301B/doc/en/pdfMetric.pdf") || strings.Contains(autofill, "pdfImperial") {
		t.Errorf("vKT301B's autofill lists other floor plans than its own: %s", autofill)
	}
	page := string(b[site.PageFile])
	if !strings.Contains(page, "/vKT301B/doc/en/jpgMetric-1.jpg") || strings.Contains(page, "pdfImperial") || strings.Contains(page, "/doc/fr/") {
		t.Errorf("vKT301B's page links other plans than its own")
	}

	// The default view with its own plans: the event keeps the guide's,
	// privately.
	ev.editGuide(kingFolder, func(g map[string]any) { g["views"].([]any)[0].(map[string]any)["plans"] = plans })
	ev.exportAll()
	var event struct {
		URLs site.URLs `json:"urls"`
	}
	if err := json.Unmarshal(snapshot(t, ev.out, ev.privDir)["guides/gKT301KINGE1/event.json"], &event); err != nil {
		t.Fatal(err)
	}
	en := event.URLs.MediaURLs["en"]
	for key, u := range map[string]string{"pdfMetric": en.PDFMetric, "pdfImperial": en.PDFImperial, "embedImage": en.EmbedImage} {
		if !strings.Contains(u, site.PrivatePrefix) {
			t.Errorf("event %s = %s, want the guide's file, private", key, u)
		}
	}
	if !strings.Contains(en.GalleryFrontImage, "/vKT301A/doc/") {
		t.Errorf("event galleryFrontImage = %s, want the default view's public copy", en.GalleryFrontImage)
	}
}

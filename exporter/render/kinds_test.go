package render

import (
	"testing"

	"github.com/guidepub/guidepub/site"
)

// TestEveryViewDocumentRendered checks that each kind of view document
// the site lists has a renderer, and no renderer is left without a kind.
func TestEveryViewDocumentRendered(t *testing.T) {
	for _, d := range site.ViewDocuments {
		if viewRenderers[d.File] == nil {
			t.Errorf("view document %s has no renderer", d.File)
		}
	}
	if len(viewRenderers) != len(site.ViewDocuments) {
		t.Errorf("%d renderers for %d view documents", len(viewRenderers), len(site.ViewDocuments))
	}
}

// TestFloorPlanKinds checks the order autofill lists floor plans in: the
// PDFs before the floor pages, imperial before metric.
func TestFloorPlanKinds(t *testing.T) {
	var got []string
	for _, k := range floorPlanKinds() {
		got = append(got, k.Key)
	}
	want := []string{"pdfImperial", "pdfMetric", "jpgImperial", "jpgMetric"}
	if len(got) != len(want) {
		t.Fatalf("floorPlanKinds = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("floorPlanKinds = %v, want %v", got, want)
		}
	}
}

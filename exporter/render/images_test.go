package render

import (
	"slices"
	"testing"

	"github.com/guidepub/guidepub/exporter/bundle/bundletest"
	"github.com/guidepub/guidepub/site/viewpage"
)

// TestPageRenditions: the pages get, by the published URL of each photo
// and floor page, its renditions in ascending width, with their URLs and
// sizes; a view that hides photos has none for them.
func TestPageRenditions(t *testing.T) {
	b := bundletest.Load(t, "301-king-st-e")
	r := &renderer{g: &b.Guide, media: b.Media, urls: URLs{View: "https://v.example"}, now: testNow}
	for i := range b.Guide.Views {
		if _, err := r.renderView(&b.Guide.Views[i]); err != nil {
			t.Fatal(err)
		}
	}
	a := r.rendered["vKT301A"]
	photo := a["https://v.example/vKT301A/doc/photos/ph-1.jpg"]
	want := []viewpage.Rendition{{URL: "https://v.example/vKT301A/doc/photos/ph-1.w480.jpg", Width: 480, Height: 360}}
	if !slices.Equal(photo, want) {
		t.Errorf("photo renditions %+v, want %+v", photo, want)
	}
	page := a["https://v.example/vKT301A/doc/en/jpgMetric-1.jpg"]
	if len(page) != 1 || page[0].URL != "https://v.example/vKT301A/doc/en/jpgMetric-1.w480.jpg" || page[0].Width != 480 || page[0].Height != 624 {
		t.Errorf("floor page renditions %+v", page)
	}
	if len(a) != 10 { // 2 photos, 8 floor pages (the banner image is narrower than a rendition)
		t.Errorf("%d images with renditions in vKT301A, want 10: %v", len(a), a)
	}
}

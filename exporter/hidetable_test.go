package exporter

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/site"
)

// TestCheckPublicRefuses: the last check before writing refuses a public
// file the hide table does not allow, whoever rendered it: a kind added
// without its row, a kind the view hides, media of a view that is not
// ready or under the alias, a file of no view.
func TestCheckPublicRefuses(t *testing.T) {
	ev := newEnv(t, fsKinds[0])
	b, err := bundle.Load(ev.src, filepath.Join(ev.srcDir, "ansi-us-house"))
	if err != nil {
		t.Fatal(err)
	}
	g := &b.Guide
	allowed := []string{"vMAPLE-main/data/status", "vMAPLE-main/doc/en/embedImage.png", "123-maple-ave/reso/autofill",
		"u/123-maple-ave/es/index.html", "vMAPLE-locked/data/summary", "vMAPLE-locked/index.html", "vMAPLE-nomedia/reso/autofill"}
	var files []outFile
	for _, p := range allowed {
		files = append(files, outFile{path: p})
	}
	if err := checkPublic(g, testNow, files); err != nil {
		t.Fatalf("allowed files refused: %v", err)
	}
	for _, tc := range []struct{ path, want string }{
		{"vMAPLE-main/doc/en/bannerPhoto.jpg", "no row in the hide table"},
		{"vMAPLE-main/doc/agent/logo.png", "no row in the hide table"},
		{"vMAPLE-nomedia/doc/en/embedImage.png", "is not published by view vMAPLE-nomedia"},
		{"vMAPLE-nomedia/doc/photos/ph-1.w480.jpg", "is not published by view vMAPLE-nomedia"},
		{"vMAPLE-noauto/doc/en/jpgMetric-1.jpg", "is not published by view vMAPLE-noauto"},
		{"vMAPLE-metric/data/summary", "is not published by view vMAPLE-metric"},
		{"vMAPLE-locked/reso/autofill", "is not published by view vMAPLE-locked"},
		{"123-maple-ave/doc/photos/ph-1.jpg", "alias true"},
		{"vOTHER/data/status", "belongs to no view"},
	} {
		err := checkPublic(g, testNow, append(slices.Clone(files), outFile{path: tc.path}, outFile{path: tc.path, private: true}))
		if err == nil || !strings.Contains(err.Error(), tc.path) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.path, err, tc.want)
		}
	}
}

// TestKindWithoutRowNeverPublished: a public file kind whose row is taken
// out of the hide table is published by no view (the ready event links
// the default view's copy privately instead), and nothing else changes.
func TestKindWithoutRowNeverPublished(t *testing.T) {
	table := site.PublicFiles
	t.Cleanup(func() { site.PublicFiles = table })
	site.PublicFiles = slices.DeleteFunc(slices.Clone(table), func(f site.PublicFile) bool { return f.Kind == site.FileEmbedImage })
	ev := newEnv(t, fsKinds[0])
	rep := ev.exportAll()
	for _, g := range rep.Guides {
		if g.Err != nil {
			t.Fatalf("%s: %v", g.Folder, g.Err)
		}
	}
	pub := snapshot(t, ev.out, ev.outDir)
	for name := range pub {
		if strings.Contains(name, "/embedImage") {
			t.Errorf("%s published without a row", name)
		}
	}
	var ev2 struct {
		URLs site.URLs `json:"urls"`
	}
	data := snapshot(t, ev.out, ev.privDir)["guides/gUS123MAPLE/event.json"]
	if err := json.Unmarshal(data, &ev2); err != nil {
		t.Fatal(err)
	}
	if u := ev2.URLs.MediaURLs["en"].EmbedImage; !strings.Contains(u, site.PrivatePrefix) {
		t.Errorf("the event's embedImage is %q, want a private document", u)
	}
}

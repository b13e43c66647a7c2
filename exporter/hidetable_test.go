package exporter

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/guidepub/guidepub/site"
)

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

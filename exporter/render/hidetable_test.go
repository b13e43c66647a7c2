package render

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/exporter/bundle/bundletest"
)

// TestCheckPublicRefuses: the last check before writing refuses a public
// file the hide table does not allow, whoever rendered it: a kind added
// without its row, a kind the view hides, media of a view that is not
// ready or under the alias, a file of no view.
func TestCheckPublicRefuses(t *testing.T) {
	b := bundletest.Load(t, "ansi-us-house")
	g := &b.Guide
	allowed := []string{"vMAPLE-main/data/status", "vMAPLE-main/doc/en/embedImage.png", "123-maple-ave/reso/autofill",
		"u/123-maple-ave/es/index.html", "vMAPLE-locked/data/summary", "vMAPLE-locked/index.html", "vMAPLE-nomedia/reso/autofill"}
	var files []File
	for _, p := range allowed {
		files = append(files, File{Path: p})
	}
	if err := CheckPublic(g, testNow, files); err != nil {
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
		err := CheckPublic(g, testNow, append(slices.Clone(files), File{Path: tc.path}, File{Path: tc.path, Private: true}))
		if err == nil || !strings.Contains(err.Error(), tc.path) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.path, err, tc.want)
		}
	}
}

// TestVisibilityCoversViews: Visibility changes with every field of a
// view that decides what the view shows (and with the alias), so that an
// export changing one of them and failing half-way withdraws what it did
// not reach. A field added to bundle.View fails here until it is either
// among Visibility's inputs or named as changing content only.
func TestVisibilityCoversViews(t *testing.T) {
	contentOnly := map[string]bool{"Units": true}
	edits := map[string]func(g *bundle.Guide){
		"ViewID":    func(g *bundle.Guide) { g.Views[0].ViewID += "-renamed" },
		"Default":   func(g *bundle.Guide) { g.Views[0].Default, g.Views[2].Default = false, true },
		"Locked":    func(g *bundle.Guide) { g.Views[0].Locked = true },
		"ExpiresAt": func(g *bundle.Guide) { past := testNow.Add(-time.Hour); g.Views[0].ExpiresAt = &past },
		"Hidden":    func(g *bundle.Guide) { g.Views[0].Hidden = append(g.Views[0].Hidden, "photos") },
		"Plans":     func(g *bundle.Guide) { g.Views[0].Plans = map[string]bundle.Documents{"en": {}} },
		"alias":     func(g *bundle.Guide) { g.Alias += "-moved" },
	}
	fields := reflect.TypeFor[bundle.View]()
	for i := range fields.NumField() {
		name := fields.Field(i).Name
		if edits[name] == nil && !contentOnly[name] {
			t.Errorf("bundle.View.%s: does it change what the view shows? Add it to Visibility and an edit here, or to contentOnly", name)
		}
	}
	base := bundletest.Load(t, "ansi-us-house")
	want := Visibility(&base.Guide, testNow)
	if again := Visibility(&base.Guide, testNow); again != want {
		t.Fatalf("Visibility is not deterministic: %s, then %s", want, again)
	}
	for name, edit := range edits {
		g := base.Guide
		g.Views = slices.Clone(base.Guide.Views)
		for i := range g.Views {
			g.Views[i].Hidden = slices.Clone(g.Views[i].Hidden)
		}
		edit(&g)
		if Visibility(&g, testNow) == want {
			t.Errorf("changing %s leaves Visibility as it was", name)
		}
	}
}

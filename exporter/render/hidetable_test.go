package render

import (
	"slices"
	"strings"
	"testing"

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

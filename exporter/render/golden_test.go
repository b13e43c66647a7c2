package render

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/exporter/bundle/bundletest"
	"github.com/guidepub/guidepub/fixtures"
	"github.com/guidepub/guidepub/site"
)

// goldenDir holds the expected output of exporting the fixture bundles
// (see the exporter's TestGolden, which writes it with -update).
var goldenDir = filepath.Join("..", "..", "fixtures", "golden")

// goldenSettings are the settings the golden files were exported with:
// the exporter tests' URLs, its default source name and limits.
var goldenSettings = Settings{
	URLs: URLs{View: "https://view.example.test", Unbranded: "https://unbranded.example.test",
		Embed: "https://view.example.test/embed", Base: "https://portal.example.test"},
	SourceName: "Service",
	Limits:     bundle.DefaultLimits,
}

// TestGoldenPlans renders the plan of every fixture bundle at testNow and
// compares it with fixtures/golden alone, without writing anything: every
// document, page and ready event with its golden file, byte for byte, and
// the paths of the plans (with what the later stages add: each
// document's compressed siblings and each guide's records) with the
// golden listing of every file.
func TestGoldenPlans(t *testing.T) {
	folders, err := fixtures.Bundles.ReadDir("bundles")
	if err != nil {
		t.Fatal(err)
	}
	var listing []string
	for _, d := range folders {
		b := bundletest.Load(t, d.Name())
		p, err := Guide(b, goldenSettings, testNow)
		if err != nil {
			t.Fatalf("%s: %v", d.Name(), err)
		}
		for _, f := range append(p.Shared, p.Files...) {
			name := "public/" + f.Path
			if f.Private {
				name = "private/" + f.Path
			}
			listing = append(listing, name)
			if f.Doc {
				for _, enc := range site.Encodings {
					listing = append(listing, name+enc.Ext)
				}
			}
			if f.Data == nil {
				continue
			}
			want, err := os.ReadFile(filepath.Join(goldenDir, filepath.FromSlash(name)))
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			if !bytes.Equal(want, f.Data) {
				t.Errorf("%s differs from its golden file", name)
			}
		}
		// Written after the plan: the guide's record (by the writer, at
		// the revision the files make) and the exporter's own record of it
		// (by the records stage, in its folder "exported").
		listing = append(listing, "private/"+site.RecordPath(b.Guide.GuideID), "private/exported/"+b.Guide.GuideID+".json")
		// And before it, the records' ids index: a file per public id.
		for _, id := range b.Guide.PublicIDs() {
			listing = append(listing, "private/exported/ids/"+id)
		}
	}
	listing = append(listing, "private/exported/ids.index.json") // the index's marker
	// files.txt lists the public tree, then the private one, each in name
	// order.
	slices.SortFunc(listing, func(a, b string) int {
		if pa, pb := strings.HasPrefix(a, "public/"), strings.HasPrefix(b, "public/"); pa != pb {
			if pa {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	listing = slices.Compact(listing)
	want, err := os.ReadFile(filepath.Join(goldenDir, "files.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(listing, "\n") + "\n"; got != string(want) {
		t.Errorf("the plans' files differ from files.txt:\n got %d files\nwant %d files", len(listing), strings.Count(string(want), "\n"))
		wantSet := strings.Split(strings.TrimSpace(string(want)), "\n")
		for _, n := range listing {
			if !slices.Contains(wantSet, n) {
				t.Errorf("planned, not in files.txt: %s", n)
			}
		}
		for _, n := range wantSet {
			if !slices.Contains(listing, n) {
				t.Errorf("in files.txt, not planned: %s", n)
			}
		}
	}
}

package site

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

func TestPublicFilesTable(t *testing.T) {
	if err := CheckPublicFiles(PublicFiles); err != nil {
		t.Fatal(err)
	}
	for _, f := range PublicFiles {
		if got, ok := PublicFileByKind(f.Kind); !ok || got.Kind != f.Kind {
			t.Errorf("PublicFileByKind(%s) = %v, %v", f.Kind, got.Kind, ok)
		}
	}
}

// TestCheckPublicFilesRejects: a row that does not say which hidden
// features remove it is refused, as are the other mistakes; such a kind is
// never shown.
func TestCheckPublicFilesRejects(t *testing.T) {
	good := PublicFile{Kind: "banner", Group: GroupMedia, Path: "<viewId>/doc/banner<ext>", Always: true}
	for _, tc := range []struct {
		name string
		row  PublicFile
		want string
	}{
		{"no decision", PublicFile{Kind: "banner", Group: GroupMedia}, "must list the hidden features"},
		{"both", PublicFile{Kind: "banner", Group: GroupMedia, Always: true, HiddenBy: []string{HidePhotos}}, "must list the hidden features"},
		{"unknown feature", PublicFile{Kind: "banner", Group: GroupMedia, HiddenBy: []string{"maps"}}, "unknown hidden feature"},
		{"no group", PublicFile{Kind: "banner", Always: true}, "unknown group"},
		{"no kind", PublicFile{Group: GroupMedia, Always: true}, "no kind"},
		{"renditions without a row", PublicFile{Kind: "banner", Group: GroupMedia, Always: true, Renditions: "bannerRendition"}, "has no row"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			table := append(slices.Clone(PublicFiles), tc.row)
			err := CheckPublicFiles(table)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("CheckPublicFiles = %v, want %q", err, tc.want)
			}
			if tc.row.Kind != "" && Shows(tc.row.Kind, nil) {
				t.Errorf("Shows(%s) with no valid row", tc.row.Kind)
			}
		})
	}
	if err := CheckPublicFiles(append(slices.Clone(PublicFiles), good, good)); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("a kind listed twice: %v", err)
	}
	if err := CheckPublicFiles(append(slices.Clone(PublicFiles), good)); err != nil {
		t.Errorf("a good row: %v", err)
	}
}

// TestEveryKindHasARow: every kind of file the site describes elsewhere
// (view documents, pages, public document kinds, floor pages) has its row.
func TestEveryKindHasARow(t *testing.T) {
	var kinds []FileKind
	for _, d := range ViewDocuments {
		kinds = append(kinds, d.Kind)
	}
	for _, k := range pageKinds {
		kinds = append(kinds, k)
	}
	for _, k := range DocumentKinds {
		if k.Public || k.FloorPages {
			if DocumentFile(k.Key) == "" {
				t.Errorf("document kind %s: no public file kind", k.Key)
			}
			kinds = append(kinds, DocumentFile(k.Key))
		} else if DocumentFile(k.Key) != "" {
			t.Errorf("private document kind %s has a public file kind", k.Key)
		}
	}
	for _, k := range kinds {
		if _, ok := PublicFileByKind(k); !ok {
			t.Errorf("%s has no row in the hide table", k)
		}
	}
}

func TestPublicFileOf(t *testing.T) {
	for _, tc := range []struct {
		path string
		kind FileKind
		id   string
	}{
		{"vKT301A/data/status", FileStatus, "vKT301A"},
		{"301-king-st-e/data/summary", FileSummary, "301-king-st-e"},
		{"v1/reso/autofill", FileAutofill, "v1"},
		{"v1/index.html", FileBrandedPage, "v1"},
		{"v1/fr/index.html", FileBrandedPage, "v1"},
		{"u/v1/index.html", FileUnbrandedPage, "v1"},
		{"u/fr/index.html", FileUnbrandedPage, "fr"},
		{"embed/v1/zh/index.html", FileEmbeddedPage, "v1"},
		{"v1/doc/photos/ph-1.jpg", FilePhoto, "v1"},
		{"v1/doc/photos/ph-1", FilePhoto, "v1"},
		{"v1/doc/photos/ph-1-small.png", FilePhotoSmall, "v1"},
		{"v1/doc/photos/ph-1.w480.jpg", FilePhotoRendition, "v1"},
		{"v1/doc/en/galleryFrontImage.jpg", FileGalleryFrontImage, "v1"},
		{"v1/doc/fr/pdfMetric.pdf", FilePDFMetric, "v1"},
		{"v1/doc/es/pdfImperial.pdf", FilePDFImperial, "v1"},
		{"v1/doc/en/embedImage.png", FileEmbedImage, "v1"},
		{"v1/doc/en/jpgMetric-1.jpg", FileFloorPage, "v1"},
		{"v1/doc/zh/jpgImperial-12.jpg", FileFloorPage, "v1"},
		{"v1/doc/en/jpgMetric-1.w960.jpg", FileFloorPageRendition, "v1"},
		{"_assets.v1/view.0123456789abcdef.css", FileStylesheet, ""},
	} {
		f, id, ok := PublicFileOf(tc.path)
		if !ok || f.Kind != tc.kind || id != tc.id {
			t.Errorf("PublicFileOf(%s) = %s, %q, %v; want %s, %q", tc.path, f.Kind, id, ok, tc.kind, tc.id)
		}
	}
	// Paths guidepub never publishes: none has a row.
	for _, p := range []string{
		"v1/doc/banner/photo.jpg",              // a kind without a row
		"v1/doc/en/galleryZip.zip",             // a private kind
		"v1/doc/en/galleryFrontImage.w480.jpg", // renditions of a kind that has none
		"v1/doc/en/pdfMetric-1.pdf",            // floor pages of a single-file kind
		"v1/doc/de/pdfMetric.pdf",              // not a language
		"v1/doc/a.jpg", "v1/doc/photos/a/b.jpg", "v1/doc/photos/ph-1.w0480.jpg", "v1/doc/photos/ph-1.JPG",
		"v1/data/status.br", "v1/other", "u/data/status", ".tmp-x/data/status", "v1", "robots.txt",
		"_assets.v1/view.css", "_assets.v1/other.css", "_assets.v1/view.0123456789abcdef.css.br",
	} {
		if f, _, ok := PublicFileOf(p); ok {
			t.Errorf("PublicFileOf(%s) = %s, want none", p, f.Kind)
		}
	}
}

func TestShowsAndPublishes(t *testing.T) {
	if Shows(FileEmbedImage, []string{HideFloorPlans}) || !Shows(FileEmbedImage, []string{HidePhotos, HideRoomDimensions}) {
		t.Error("embedImage does not follow floorPlans")
	}
	if Shows(FileFloorPage, []string{HideAutofill}) || Shows(FileFloorPageRendition, []string{HideFloorPlans}) {
		t.Error("floor pages shown by a view hiding autofill or floor plans")
	}
	if Shows("banner", nil) {
		t.Error("a kind without a row is shown")
	}
	if !Publishes(FileSummary, []string{HideMeasurements}, false, false) || Publishes(FileSummary, []string{HideMeasurements}, true, false) {
		t.Error("the summary of a view that is not ready is its status, whatever it hides")
	}
	if Publishes(FilePhoto, nil, false, false) || Publishes(FilePhoto, nil, true, true) || !Publishes(FileAutofill, nil, true, true) {
		t.Error("media published by a view that is not ready, or under the alias")
	}
}

// TestHideTableDocumented: docs/output.md's hide table lists exactly the
// rows of PublicFiles, with their paths and the hides that remove them.
func TestHideTableDocumented(t *testing.T) {
	data, err := os.ReadFile("../docs/output.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(data), "## The hide table\n")
	section, _, _ = strings.Cut(section, "\n## ")
	yes := func(b bool) string {
		if b {
			return "yes"
		}
		return "no"
	}
	var documented []string
	for _, line := range strings.Split(section, "\n") {
		if strings.HasPrefix(line, "| `") {
			documented = append(documented, line)
		}
	}
	var want []string
	for _, f := range PublicFiles {
		removed := "nothing"
		if len(f.HiddenBy) > 0 {
			removed = "`" + strings.Join(f.HiddenBy, "`, `") + "`"
		}
		path := "`" + strings.ReplaceAll(strings.ReplaceAll(f.Path, "|", `\|`), ", ", "`, `") + "`"
		want = append(want, fmt.Sprintf("| `%s` | %s | %s | %s | %s |", f.Kind, path, removed, yes(f.NotReady), yes(f.Alias)))
	}
	if !slices.Equal(documented, want) {
		t.Errorf("docs/output.md's hide table differs from site.PublicFiles; it should read:\n%s", strings.Join(want, "\n"))
	}
}

func TestIsPlanKind(t *testing.T) {
	var got []string
	for _, k := range DocumentKinds {
		if IsPlanKind(k.Key) {
			got = append(got, k.Key)
		}
	}
	if want := []string{"pdfMetric", "pdfImperial", "embedImage", "jpgMetric", "jpgImperial"}; !slices.Equal(got, want) {
		t.Errorf("plan kinds %v, want %v", got, want)
	}
}

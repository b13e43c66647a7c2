package site

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/afero"
)

func TestWalkFiles(t *testing.T) {
	for _, kind := range []string{"mem", "os"} {
		t.Run(kind, func(t *testing.T) {
			var fsys afero.Fs = afero.NewMemMapFs()
			root := "/tree"
			if kind == "os" {
				fsys, root = afero.NewOsFs(), t.TempDir()
			}
			for _, p := range []string{"v1/data/status", "v1/data/status.br", "v1/doc/a.jpg", ".tmp-x", "v1/.hidden/x", "v1/doc/.tmp-y"} {
				full := filepath.Join(root, filepath.FromSlash(p))
				if err := fsys.MkdirAll(filepath.Dir(full), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := afero.WriteFile(fsys, full, []byte(p), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if kind == "os" {
				outside := filepath.Join(t.TempDir(), "secret")
				if err := os.WriteFile(outside, []byte("secret"), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(outside, filepath.Join(root, "v1", "doc", "link.jpg")); err != nil {
					t.Fatal(err)
				}
			}
			var got []string
			err := WalkFiles(fsys, root, func(rel string, info fs.FileInfo) error {
				got = append(got, rel)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			want := []string{"v1/data/status", "v1/data/status.br", "v1/doc/a.jpg"}
			if !slices.Equal(got, want) {
				t.Errorf("WalkFiles gave %q, want %q (no hidden files, no links)", got, want)
			}
			if err := WalkFiles(fsys, filepath.Join(root, "missing"), func(string, fs.FileInfo) error { return nil }); err == nil {
				t.Error("WalkFiles of a missing root gave no error")
			}
		})
	}
}

func TestPaths(t *testing.T) {
	for _, tc := range []struct {
		path string
		doc  bool
		typ  string
	}{
		{"v1/data/status", true, "application/json"},
		{"alias-1/reso/autofill", true, "application/json"},
		{"v1/data/summary.br", false, "application/octet-stream"},
		{"data/status", false, "application/octet-stream"},
		{"v1/doc/en/pdfMetric.pdf", false, "application/pdf"},
		{"v1/doc/photos/p1.JPG", false, "image/jpeg"},
		{"v1/data/status/x", false, "application/octet-stream"},
		{"_assets.v1/view.0123456789abcdef.css", true, "text/css; charset=utf-8"},
		{"_assets.v1/view.0123456789ABCDEF.css", false, "application/octet-stream"},
		{"_assets.v1/view.0123456789abcdef0.css", false, "application/octet-stream"},
		{"_assets.v1/view.0123456789abcdef.css.br", false, "application/octet-stream"},
	} {
		if got := IsDocument(tc.path); got != tc.doc {
			t.Errorf("IsDocument(%q) = %v", tc.path, got)
		}
		if got := ContentType(tc.path); got != tc.typ {
			t.Errorf("ContentType(%q) = %q, want %q", tc.path, got, tc.typ)
		}
	}
	if doc, enc, ok := SplitEncoded("v1/data/summary.zst"); !ok || doc != "v1/data/summary" || enc != Zstd {
		t.Errorf("SplitEncoded: %q %v %v", doc, enc, ok)
	}
	if doc, enc, ok := SplitEncoded("_assets.v1/view.0123456789abcdef.css.br"); !ok || doc != "_assets.v1/view.0123456789abcdef.css" || enc != Brotli {
		t.Errorf("SplitEncoded of the stylesheet's sibling: %q %v %v", doc, enc, ok)
	}
	if _, _, ok := SplitEncoded("v1/doc/a.jpg.gz"); ok {
		t.Error("SplitEncoded took a media file for a document sibling")
	}
	if got := PrivateURL("https://v.example/", "g1", "en/svgZip.zip"); got != "https://v.example/private/g1/en/svgZip.zip" {
		t.Errorf("PrivateURL = %q", got)
	}
	for p, want := range map[string]string{
		"_assets.v1/view.0123456789abcdef.css": ImmutableCacheControl,
		"v1/data/status":                       DocumentCacheControl,
		"u/v1/index.html":                      DocumentCacheControl,
		"v1/doc/photos/p1.jpg":                 MediaCacheControl,
	} {
		if got := CacheControl(p); got != want {
			t.Errorf("CacheControl(%q) = %q, want %q", p, got, want)
		}
	}
	if p := StylesheetPath([]byte("body{}")); !IsStylesheet(p) || ValidID.MatchString(strings.Split(p, "/")[0]) {
		t.Errorf("StylesheetPath = %q: not a stylesheet's path, or in a folder an id could name", p)
	}
	if !regexp.MustCompile(StylesheetPattern).MatchString("/"+StylesheetPath(nil)) || regexp.MustCompile(StylesheetPattern).MatchString("/_assets.v1/view.x.css") {
		t.Error("StylesheetPattern does not match exactly the stylesheets' paths")
	}
	if !IsHidden("a/.tmp-x") || IsHidden("a/b") {
		t.Error("IsHidden")
	}
}

// TestPagePaths checks that every page path, in every language, maps back
// to its kind and to the URL it is served at, and that nothing else is
// taken for a page.
func TestPagePaths(t *testing.T) {
	for _, id := range []string{"v1", "fr", "u-1"} {
		for i, p := range PagePaths(id) {
			if k, ok := PageKindOf(p); !ok || k != i {
				t.Errorf("PageKindOf(%q) = %d, %v; want %d", p, k, ok, i)
			}
		}
		for _, lang := range Languages {
			for i, p := range LanguagePagePaths(id, lang) {
				if k, ok := PageKindOf(p); !ok || k != i {
					t.Errorf("PageKindOf(%q) = %d, %v; want %d", p, k, ok, i)
				}
				if stored, ok := PageOf("/" + strings.TrimSuffix(p, "/"+PageFile)); !ok || stored != p {
					t.Errorf("PageOf(%q) = %q, %v", p, stored, ok)
				}
			}
		}
	}
	for _, p := range []string{"u/index.html", "v1/de/index.html", "v1/data/index.html", "u/v1/de/index.html", "v1/fr/fr/index.html", "embed/index.html", "api/fr/index.html"} {
		if k, ok := PageKindOf(p); ok {
			t.Errorf("PageKindOf(%q) = %d, want no page", p, k)
		}
	}
	if stored, ok := PageOf("/v1/fr/"); ok {
		t.Errorf("PageOf with a trailing slash = %q", stored)
	}
}

package site

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
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
	if _, _, ok := SplitEncoded("v1/doc/a.jpg.gz"); ok {
		t.Error("SplitEncoded took a media file for a document sibling")
	}
	if got := PrivateURL("https://v.example/", "g1", "en/svgZip.zip"); got != "https://v.example/private/g1/en/svgZip.zip" {
		t.Errorf("PrivateURL = %q", got)
	}
	if !IsHidden("a/.tmp-x") || IsHidden("a/b") {
		t.Error("IsHidden")
	}
}

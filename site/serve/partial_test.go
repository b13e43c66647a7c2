package serve

import (
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"testing"

	"github.com/spf13/afero"
)

func TestReloadDirs(t *testing.T) {
	status := func(s string) []byte { return []byte(`{"status":"` + s + `"}`) }
	for _, fsName := range []string{"memory", "os"} {
		t.Run(fsName, func(t *testing.T) {
			var fsys afero.Fs = afero.NewMemMapFs()
			root := "/tree"
			if fsName == "os" {
				fsys, root = afero.NewOsFs(), filepath.Join(t.TempDir(), "tree")
			}
			write := func(rel string, data []byte) {
				t.Helper()
				p := filepath.Join(root, filepath.FromSlash(rel))
				if err := fsys.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := afero.WriteFile(fsys, p, data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			write("a/data/status", status("not-ready"))
			write("b/data/status", status("ready"))
			write("d/data/status", status("ready"))
			s, err := New(fsys, root, Config{NoWatch: true})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()

			write("a/data/status", status("ready"))  // changed
			fsys.RemoveAll(filepath.Join(root, "b")) // removed
			write("c/data/status", status("ready"))  // new
			write("d/data/status", status("locked")) // changed, but not named
			if err := s.ReloadDirs("a", "b", "c"); err != nil {
				t.Fatal(err)
			}
			for _, tt := range []struct {
				path string
				code int
				body string
			}{
				{"/a/data/status", 200, `{"status":"ready"}`},
				{"/b/data/status", 404, ""},
				{"/c/data/status", 200, `{"status":"ready"}`},
				{"/d/data/status", 200, `{"status":"ready"}`}, // not reloaded yet
			} {
				rec := httptest.NewRecorder()
				s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tt.path, nil))
				if rec.Code != tt.code || (tt.body != "" && rec.Body.String() != tt.body) {
					t.Errorf("GET %s = %d %q, want %d %q", tt.path, rec.Code, rec.Body.String(), tt.code, tt.body)
				}
			}
			if got := s.Files(); got != 3 {
				t.Errorf("Files() = %d, want 3", got)
			}
			// Once every changed folder is reloaded, the snapshot and its
			// index by folder are those of a full load.
			if err := s.ReloadDirs("d"); err != nil {
				t.Fatal(err)
			}
			got := s.current.Load()
			want, err := s.loader.load(nil)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(slices.Sorted(maps.Keys(got.entries)), slices.Sorted(maps.Keys(want.entries))) ||
				got.memory != want.memory || got.files != want.files || len(got.byTop) != len(want.byTop) {
				t.Errorf("after ReloadDirs: %d entries, %d bytes, %d files, %d folders; a full load has %d, %d, %d, %d",
					len(got.entries), got.memory, got.files, len(got.byTop), len(want.entries), want.memory, want.files, len(want.byTop))
			}
			for top, names := range want.byTop {
				if g := slices.Sorted(slices.Values(got.byTop[top])); !slices.Equal(g, slices.Sorted(slices.Values(names))) {
					t.Errorf("index of %s: %v, want %v", top, g, names)
				}
			}
			for _, bad := range []string{"", ".", "..", "a/b", ".hidden", `a\b`} {
				if err := s.ReloadDirs(bad); err == nil {
					t.Errorf("ReloadDirs(%q): no error", bad)
				}
			}
		})
	}
}

// BenchmarkReloadDirs compares reloading one changed view folder with
// ReloadDirs and with a full Reload, in a tree of 1,000 view folders.
func BenchmarkReloadDirs(b *testing.B) {
	root := filepath.Join(b.TempDir(), "tree")
	fsys := afero.NewOsFs()
	for n := range 1000 {
		for _, f := range []string{"data/status", "data/summary", "reso/autofill"} {
			p := filepath.Join(root, fmt.Sprintf("v%04d", n), filepath.FromSlash(f))
			if err := fsys.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				b.Fatal(err)
			}
			if err := afero.WriteFile(fsys, p, []byte(`{"status":"ready"}`), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	s, err := New(fsys, root, Config{NoWatch: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	for _, full := range []bool{false, true} {
		name := "ReloadDirs"
		if full {
			name = "Reload"
		}
		b.Run(name, func(b *testing.B) {
			for i := range b.N {
				p := filepath.Join(root, "v0500", "data", "status")
				if err := afero.WriteFile(fsys, p, []byte(fmt.Sprintf(`{"status":"%d"}`, i)), 0o644); err != nil {
					b.Fatal(err)
				}
				if full {
					err = s.Reload()
				} else {
					err = s.ReloadDirs("v0500")
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

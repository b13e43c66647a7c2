package fswatch

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// skipTemp skips dot names, vim's write test file and ".tmp" names, as
// the exporter's watcher does (among others).
func skipTemp(name string) bool {
	return strings.HasPrefix(name, ".") || name == "4913" || strings.HasSuffix(name, ".tmp") || strings.HasSuffix(name, "~")
}

// mkdirs creates folders under root.
func mkdirs(t *testing.T, root string, names ...string) {
	t.Helper()
	for _, n := range names {
		if err := os.MkdirAll(filepath.Join(root, n), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// writeFile writes data to root/rel, creating folders.
func writeFile(t *testing.T, root, rel, data string) {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestDigestFolder(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "guide.json", `{"a":1}`)
	writeFile(t, dir, "photos/front.jpg", "jpeg")
	base, err := digestFolder(dir, skipTemp)
	if err != nil {
		t.Fatal(err)
	}
	mtime := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name    string
		change  func()
		changed bool
	}{
		{"ignored files", func() {
			writeFile(t, dir, ".guide.json.swp", "x")
			writeFile(t, dir, "guide.json.tmp", "x")
			writeFile(t, dir, "photos/4913", "")
		}, false},
		{"same size, new mtime", func() {
			writeFile(t, dir, "guide.json", `{"a":2}`)
			os.Chtimes(filepath.Join(dir, "guide.json"), mtime, mtime)
		}, true},
		{"size", func() { writeFile(t, dir, "guide.json", `{"a":22}`) }, true},
		{"new file", func() { writeFile(t, dir, "photos/back.jpg", "jpeg") }, true},
		{"new nested folder", func() { mkdirs(t, dir, "doc/fr") }, true},
		{"rename", func() {
			os.Rename(filepath.Join(dir, "photos/back.jpg"), filepath.Join(dir, "photos/rear.jpg"))
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.change()
			d, err := digestFolder(dir, skipTemp)
			if err != nil {
				t.Fatal(err)
			}
			if (d != base) != tt.changed {
				t.Errorf("digest changed = %v, want %v", d != base, tt.changed)
			}
			base = d
		})
	}
	if _, err := digestFolder(filepath.Join(dir, "missing"), skipTemp); err == nil {
		t.Error("digest of a missing folder: no error")
	}
}

func TestScanChanged(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "a/guide.json", "1")
	writeFile(t, root, "b/guide.json", "1")
	writeFile(t, root, ".staging/guide.json", "1")
	old, err := Scan(root, skipTemp)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(old), 2; got != want {
		t.Fatalf("scanned %d folders, want %d: %v", got, want, old)
	}
	writeFile(t, root, "a/guide.json", "22")
	writeFile(t, root, "c/guide.json", "1")
	writeFile(t, root, ".staging/guide.json", "22")
	if err := os.RemoveAll(filepath.Join(root, "b")); err != nil {
		t.Fatal(err)
	}
	cur, err := Scan(root, skipTemp)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := Changed(old, cur), []string{"a", "b", "c"}; !slices.Equal(got, want) {
		t.Errorf("Changed = %v, want %v", got, want)
	}
	if _, err := Scan(filepath.Join(root, "missing"), nil); err == nil {
		t.Error("Scan of a missing root: no error")
	}
}

package filestamp

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// TestChangeTimeMovesOnRename: a rename moves the change time, not the
// modification time set back before it.
func TestChangeTimeMovesOnRename(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the change time is read on Linux only")
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "a")
	if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	q := filepath.Join(dir, "b")
	if err := os.Rename(p, q); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(q)
	if err != nil {
		t.Fatal(err)
	}
	if c := ChangeTime(fi); !c.After(fi.ModTime()) {
		t.Fatalf("change time %v not after the modification time %v set back", c, fi.ModTime())
	}
}

package write

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/spf13/afero"
)

// createNew is createNewFunc for a byte slice.
func createNew(dst string, data []byte, perm os.FileMode) (bool, error) {
	return createNewFunc(dst, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

func TestCreateNew(t *testing.T) {
	if noTmpfile.Load() {
		t.Skip("O_TMPFILE is not usable here; Tree.Write uses a temporary file and a rename")
	}
	dir := t.TempDir()
	dst := filepath.Join(dir, "status")
	done, err := createNew(dst, []byte(`{"status":"ready"}`), 0o640)
	if err != nil || !done {
		t.Fatalf("createNew of a new file = %v, %v; want true, nil", done, err)
	}
	got, err := os.ReadFile(dst)
	if err != nil || string(got) != `{"status":"ready"}` {
		t.Errorf("content %q, %v", got, err)
	}
	if fi, err := os.Stat(dst); err != nil || fi.Mode().Perm()&^0o640 != 0 {
		t.Errorf("mode %v, %v; want at most 0640", fi.Mode(), err)
	}
	// An existing file is left alone for the caller's rename.
	done, err = createNew(dst, []byte("other"), 0o640)
	if err != nil || done {
		t.Fatalf("createNew over an existing file = %v, %v; want false, nil", done, err)
	}
	if got, _ := os.ReadFile(dst); string(got) != `{"status":"ready"}` {
		t.Errorf("an existing file was changed: %q", got)
	}
	// A missing folder is an error, not a fallback.
	if done, err := createNew(filepath.Join(dir, "missing", "x"), []byte("x"), 0o644); done || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("createNew into a missing folder = %v, %v; want false and a not-exist error", done, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("folder holds %d entries, want only the file", len(entries))
	}
}

// TestTreeWriteOnDisk checks both ways Tree.Write takes on the real file
// system: a new file (createNew) and a replaced one (temporary file and
// rename), with no temporary file left behind.
func TestTreeWriteOnDisk(t *testing.T) {
	dir := t.TempDir()
	tr := Tree{FS: afero.NewOsFs(), Root: dir, Perm: 0o644}
	for _, content := range []string{"first", "second, longer"} {
		if err := tr.Write("v1/data/status", []byte(content)); err != nil {
			t.Fatal(err)
		}
		if got, err := tr.Read("v1/data/status"); err != nil || string(got) != content {
			t.Errorf("read %q, %v; want %q", got, err, content)
		}
	}
	entries, err := os.ReadDir(filepath.Join(dir, "v1", "data"))
	if err != nil || len(entries) != 1 {
		t.Errorf("v1/data holds %v (%v), want only status", entries, err)
	}
}

// BenchmarkNewFile compares the two ways Tree.Write creates a new 3 KB
// file on the real file system (50 files a folder, as in a view's doc/).
// The cost is mostly the file system's journal and varies a lot with what
// the disk is still writing back; compare the two in the same run.
func BenchmarkNewFile(b *testing.B) {
	data := make([]byte, 3000)
	for _, c := range []struct {
		name      string
		noTmpfile bool
	}{{"tmpfile-link", false}, {"temp-rename", true}} {
		b.Run(c.name, func(b *testing.B) {
			was := noTmpfile.Load()
			noTmpfile.Store(c.noTmpfile)
			defer noTmpfile.Store(was)
			tr := Tree{FS: afero.NewOsFs(), Root: b.TempDir(), Perm: 0o644}
			// Start from a clean disk: the previous run's files and their
			// deletion are otherwise still being written back.
			syscall.Sync()
			i := 0
			for b.Loop() {
				if err := tr.Write(fmt.Sprintf("%d/%d", i/50, i), data); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

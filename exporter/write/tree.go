package write

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/spf13/afero"
)

// tree is a folder of an afero.Fs that the exporter writes into: the public
// tree or the private tree. Paths given to its methods are slash-separated
// and relative to the folder; checkPath keeps them inside it.
type Tree struct {
	FS   afero.Fs
	Root string
	Perm os.FileMode // of written files
}

// checkPath returns an error unless p is a clean, relative, slash-separated
// path without "..", empty or hidden elements: nothing the exporter writes
// or deletes may escape its tree or look like bookkeeping.
func checkPath(p string) error {
	if p == "" || strings.HasPrefix(p, "/") || strings.ContainsAny(p, "\\\x00") || path.Clean(p) != p {
		return fmt.Errorf("unsafe path %q", p)
	}
	for _, el := range strings.Split(p, "/") {
		if el == ".." || el == "." || el == "" || strings.HasPrefix(el, ".") {
			return fmt.Errorf("unsafe path %q", p)
		}
	}
	return nil
}

// Abs returns the file-system path of p.
func (t Tree) Abs(p string) string { return filepath.Join(t.Root, filepath.FromSlash(p)) }

// Read returns the content of p, or an error wrapping fs.ErrNotExist when
// it does not exist.
func (t Tree) Read(p string) ([]byte, error) { return afero.ReadFile(t.FS, t.Abs(p)) }

// Exists reports whether p exists as a regular file.
func (t Tree) Exists(p string) bool {
	fi, err := t.FS.Stat(t.Abs(p))
	return err == nil && fi.Mode().IsRegular()
}

// same reports whether p exists with exactly the content data.
func (t Tree) same(p string, data []byte) bool {
	fi, err := t.FS.Stat(t.Abs(p))
	if err != nil || !fi.Mode().IsRegular() || fi.Size() != int64(len(data)) {
		return false
	}
	old, err := t.Read(p)
	return err == nil && bytes.Equal(old, data)
}

// Write replaces p with data atomically, as writeFunc does: a reader sees
// the old or the new file, never a part. It returns an error when p is
// unsafe or a file operation fails; nothing is left behind then.
func (t Tree) Write(p string, data []byte) error {
	return t.writeFunc(p, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// Remove deletes p (a missing file is not an error) and then every folder
// above it that became empty, up to but excluding the tree's root and any
// folder keep names. It returns an error when p is unsafe or cannot be
// deleted.
func (t Tree) Remove(p string, keep map[string]bool) error {
	if err := checkPath(p); err != nil {
		return err
	}
	if err := t.FS.Remove(t.Abs(p)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("delete %s: %w", t.Abs(p), err)
	}
	for dir := path.Dir(p); dir != "." && !keep[dir]; dir = path.Dir(dir) {
		entries, err := afero.ReadDir(t.FS, t.Abs(dir))
		if err != nil || len(entries) > 0 {
			break
		}
		if err := t.FS.Remove(t.Abs(dir)); err != nil {
			break // another export may have just created something in it
		}
	}
	return nil
}

package exporter

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/site"
)

// tree is a folder of an afero.Fs that the exporter writes into: the public
// tree or the private tree. Paths given to its methods are slash-separated
// and relative to the folder; checkPath keeps them inside it.
type tree struct {
	fs   afero.Fs
	root string
	perm os.FileMode // of written files
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

func (t tree) abs(p string) string { return filepath.Join(t.root, filepath.FromSlash(p)) }

// read returns the content of p, or an error wrapping fs.ErrNotExist when
// it does not exist.
func (t tree) read(p string) ([]byte, error) { return afero.ReadFile(t.fs, t.abs(p)) }

// exists reports whether p exists as a regular file.
func (t tree) exists(p string) bool {
	fi, err := t.fs.Stat(t.abs(p))
	return err == nil && fi.Mode().IsRegular()
}

// same reports whether p exists with exactly the content data.
func (t tree) same(p string, data []byte) bool {
	fi, err := t.fs.Stat(t.abs(p))
	if err != nil || !fi.Mode().IsRegular() || fi.Size() != int64(len(data)) {
		return false
	}
	old, err := t.read(p)
	return err == nil && bytes.Equal(old, data)
}

// write replaces p with data atomically: the bytes go to a temporary file
// (named with site.TempPrefix) in the same folder, which is then renamed
// over p, so a reader sees the old or the new file, never a part. A new
// file on the operating system's file system is written by createNew
// instead, where the platform allows. It
// returns an error when p is unsafe or a file operation fails; the
// temporary file is removed then.
func (t tree) write(p string, data []byte) error {
	if err := checkPath(p); err != nil {
		return err
	}
	dst := t.abs(p)
	dir := filepath.Dir(dst)
	if err := t.fs.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create folder %s: %w", dir, err)
	}
	if _, ok := t.fs.(*afero.OsFs); ok {
		done, err := createNew(dst, data, t.perm)
		if err != nil {
			return fmt.Errorf("write %s: %w", dst, err)
		}
		if done {
			return nil
		}
	}
	// The temporary file is created with its final mode (one system call
	// less than afero.TempFile and a chmod).
	var (
		f   afero.File
		tmp string
		err error
	)
	for range 10 {
		tmp = filepath.Join(dir, site.TempPrefix+strconv.FormatUint(rand.Uint64(), 36))
		f, err = t.fs.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, t.perm)
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", dst, err)
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = t.fs.Rename(tmp, dst)
	}
	if err != nil {
		_ = t.fs.Remove(tmp)
		return fmt.Errorf("write %s: %w", dst, err)
	}
	return nil
}

// remove deletes p (a missing file is not an error) and then every folder
// above it that became empty, up to but excluding the tree's root and any
// folder keep names. It returns an error when p is unsafe or cannot be
// deleted.
func (t tree) remove(p string, keep map[string]bool) error {
	if err := checkPath(p); err != nil {
		return err
	}
	if err := t.fs.Remove(t.abs(p)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("delete %s: %w", t.abs(p), err)
	}
	for dir := path.Dir(p); dir != "." && !keep[dir]; dir = path.Dir(dir) {
		entries, err := afero.ReadDir(t.fs, t.abs(dir))
		if err != nil || len(entries) > 0 {
			break
		}
		if err := t.fs.Remove(t.abs(dir)); err != nil {
			break // another export may have just created something in it
		}
	}
	return nil
}

package site

import (
	"errors"
	"io/fs"
	"path/filepath"

	"github.com/spf13/afero"
)

// WalkFiles calls fn for every regular file of the tree at root of fsys,
// with its slash-separated path relative to root, in lexical order. Hidden
// files and folders (IsHidden: temporary files, bookkeeping) are skipped,
// and so are symbolic links and anything else that is not a regular file:
// afero.Walk uses Lstat where the file system has it, so a link is never
// followed out of the tree. A file that vanishes during the walk is
// skipped. It returns the error of fn, or an error when root cannot be
// read.
func WalkFiles(fsys afero.Fs, root string, fn func(rel string, info fs.FileInfo) error) error {
	return afero.Walk(fsys, root, func(p string, info fs.FileInfo, err error) error {
		if err != nil {
			if p != root && errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		if IsHidden(rel) {
			if info.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !info.Mode().IsRegular() {
			return nil
		}
		return fn(rel, info)
	})
}

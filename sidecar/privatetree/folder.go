package privatetree

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/afero"
)

// folder is a Tree in a folder of a file system.
type folder struct {
	root afero.Fs
	name string
}

// Folder returns the tree in dir of fsys ("" or ".": fsys itself). Only
// real folders and regular files are followed: a symlink anywhere on a
// name's path is reported missing, so nothing outside the tree is read.
func Folder(fsys afero.Fs, dir string) Tree {
	root := fsys
	if dir != "" && dir != "." {
		root = afero.NewBasePathFs(fsys, dir)
	}
	return &folder{root: root, name: dir}
}

func (t *folder) String() string { return t.name }

// Stat returns the version of name after checking each element of its
// path (see Folder).
func (t *folder) Stat(_ context.Context, name string) (Info, error) {
	fi, err := t.check(name)
	if err != nil {
		return Info{}, err
	}
	return infoOf(fi), nil
}

// Open opens name after the same checks as Stat.
func (t *folder) Open(_ context.Context, name string) (File, Info, error) {
	if _, err := t.check(name); err != nil {
		return nil, Info{}, err
	}
	f, err := t.root.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, Info{}, notExist(name)
	}
	if err != nil {
		return nil, Info{}, fmt.Errorf("open %s: %w", name, err)
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, Info{}, notExist(name)
	}
	return f, infoOf(fi), nil
}

// check stats every element of name: real folders, then a regular file.
func (t *folder) check(name string) (fs.FileInfo, error) {
	lst, canLstat := t.root.(afero.Lstater)
	els := strings.Split(name, "/")
	var fi fs.FileInfo
	for i := range els {
		p := path.Join(els[:i+1]...)
		var err error
		if canLstat {
			fi, _, err = lst.LstatIfPossible(p)
		} else {
			fi, err = t.root.Stat(p)
		}
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return nil, notExist(name)
		}
		if err != nil {
			return nil, fmt.Errorf("stat %s: %w", p, err)
		}
		last := i == len(els)-1
		if fi.Mode()&fs.ModeSymlink != 0 || (!last && !fi.IsDir()) || (last && !fi.Mode().IsRegular()) {
			return nil, notExist(name)
		}
	}
	return fi, nil
}

func infoOf(fi fs.FileInfo) Info {
	return Info{Size: fi.Size(), ModTime: fi.ModTime(),
		Version: strconv.FormatInt(fi.Size(), 10) + "-" + strconv.FormatInt(fi.ModTime().UnixNano(), 10)}
}

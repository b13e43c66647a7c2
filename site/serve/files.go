package serve

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/spf13/afero"
)

// fileStamp is what tells whether a file changed: size, modification time
// and inode number. File times are coarse (a few milliseconds on Linux),
// so the inode is compared too: the exporter renames a new file into
// place, which gives a new inode even when size and time are equal. The
// zero stamp stands for "no such file".
type fileStamp struct {
	size    int64
	modTime int64 // nanoseconds since the epoch
	ino     uint64
}

// stampOf returns the stamp of the file info describes.
func stampOf(info fs.FileInfo) fileStamp {
	return fileStamp{size: info.Size(), modTime: info.ModTime().UnixNano(), ino: inode(info)}
}

// file is an open regular file of the tree.
type file interface {
	io.ReadSeeker
	io.Closer
}

// source opens and checks the files of the served tree. Names are
// slash-separated, relative, clean and visible (cleanRequestPath). Only
// regular files are found: a folder, a FIFO, a device or a symbolic link is
// reported as fs.ErrNotExist, and so is every path that would leave the
// root.
type source interface {
	// open opens name for reading and returns its stamp.
	open(name string) (file, fileStamp, error)
	// stat returns the stamp of name, the zero stamp when it is absent or
	// not a regular file.
	stat(name string) (fileStamp, error)
	close() error
}

// errNotRegular is returned, wrapped with fs.ErrNotExist, for a path that
// exists but is not a regular file.
var errNotRegular = fmt.Errorf("not a regular file: %w", fs.ErrNotExist)

// openSource returns the source for root of fsys and, when fsys is the
// operating system's file system, the absolute directory behind it (to
// watch); dir is "" otherwise.
func openSource(fsys afero.Fs, root string) (src source, dir string, err error) {
	dir, onOS := osRoot(fsys, root)
	if !onOS {
		return &aferoSource{fsys: fsys, root: root}, "", nil
	}
	src, err = openOSSource(dir)
	if err != nil {
		return nil, "", fmt.Errorf("serve: open %s: %w", dir, err)
	}
	return src, dir, nil
}

// osRoot returns the operating-system directory behind root of fsys, when
// fsys reads the real file system; ok is false otherwise (a memory file
// system, say), and then the tree is not watched.
func osRoot(fsys afero.Fs, root string) (string, bool) {
	switch f := fsys.(type) {
	case *afero.OsFs:
		abs, err := filepath.Abs(root)
		return abs, err == nil
	case *afero.BasePathFs:
		real, err := f.RealPath(root)
		if err != nil {
			return "", false
		}
		if _, err := os.Stat(real); err != nil {
			return "", false
		}
		abs, err := filepath.Abs(real)
		return abs, err == nil
	}
	return "", false
}

// rootSource reads the tree through os.Root, which keeps every path
// inside the root; the last element is opened without following a
// symbolic link, and without blocking should it be a FIFO.
type rootSource struct{ root *os.Root }

func (s *rootSource) open(name string) (file, fileStamp, error) {
	f, err := s.root.OpenFile(filepath.FromSlash(name), rootOpenFlags, 0)
	if err != nil {
		return nil, fileStamp{}, notExist(err)
	}
	return regular(f)
}

// statFile is an open file that can be checked.
type statFile interface {
	file
	Stat() (fs.FileInfo, error)
}

// regular returns f and its stamp when it is a regular file; it closes f
// and returns errNotRegular otherwise.
func regular(f statFile) (file, fileStamp, error) {
	info, err := f.Stat()
	if err == nil && !info.Mode().IsRegular() {
		err = errNotRegular
	}
	if err != nil {
		f.Close()
		return nil, fileStamp{}, err
	}
	return f, stampOf(info), nil
}

// stampOrAbsent turns the result of an lstat into a stamp: the zero stamp
// for a path that does not exist or is not a regular file.
func stampOrAbsent(info fs.FileInfo, err error) (fileStamp, error) {
	if err != nil {
		if err = notExist(err); errors.Is(err, fs.ErrNotExist) {
			return fileStamp{}, nil
		}
		return fileStamp{}, err
	}
	if !info.Mode().IsRegular() {
		return fileStamp{}, nil
	}
	return stampOf(info), nil
}

func (s *rootSource) stat(name string) (fileStamp, error) {
	return stampOrAbsent(s.root.Lstat(filepath.FromSlash(name)))
}

func (s *rootSource) close() error { return s.root.Close() }

// notExist turns the errors of a path that leaves the root, runs into a
// symbolic link or a non-folder into fs.ErrNotExist: to a client they all
// mean "no such file".
func notExist(err error) error {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		switch errno {
		case syscall.ENOENT, syscall.ENOTDIR, syscall.ELOOP, syscall.EXDEV, syscall.ENAMETOOLONG:
			return fmt.Errorf("%w (%v)", fs.ErrNotExist, err)
		}
	}
	if errors.Is(err, fs.ErrNotExist) {
		return err
	}
	// os.Root reports a path that would leave it with an error of its own.
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) && pe.Err.Error() == "path escapes from parent" {
		return fmt.Errorf("%w (%v)", fs.ErrNotExist, err)
	}
	return err
}

// aferoSource reads a tree on an afero file system that is not the
// operating system's (a memory file system in tests and embedded uses).
type aferoSource struct {
	fsys afero.Fs
	root string
}

func (s *aferoSource) path(name string) string {
	return filepath.Join(s.root, filepath.FromSlash(name))
}

func (s *aferoSource) open(name string) (file, fileStamp, error) {
	if st, err := s.stat(name); err != nil || st == (fileStamp{}) {
		if err == nil {
			err = errNotRegular
		}
		return nil, fileStamp{}, err
	}
	f, err := s.fsys.Open(s.path(name))
	if err != nil {
		return nil, fileStamp{}, notExist(err)
	}
	return regular(f)
}

func (s *aferoSource) stat(name string) (fileStamp, error) {
	if l, ok := s.fsys.(afero.Lstater); ok {
		info, _, err := l.LstatIfPossible(s.path(name))
		return stampOrAbsent(info, err)
	}
	return stampOrAbsent(s.fsys.Stat(s.path(name)))
}

func (s *aferoSource) close() error { return nil }

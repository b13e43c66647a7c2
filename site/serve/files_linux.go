package serve

import (
	"errors"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// openOSSource returns the fastest source for the OS directory dir: on
// Linux 5.6 and later one openat2 call per file, which refuses symbolic
// links in every element and any path that leaves dir; os.Root on older
// kernels.
func openOSSource(dir string) (source, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	s := &openat2Source{dir: d, fd: int(d.Fd())}
	if _, _, err := s.open("."); errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) {
		// No openat2 (or a seccomp filter refuses it).
		d.Close()
		r, err := os.OpenRoot(dir)
		if err != nil {
			return nil, err
		}
		return &rootSource{root: r}, nil
	}
	return s, nil
}

// openat2Source reads a tree on Linux with openat2 and fstatat relative to
// an open directory.
type openat2Source struct {
	dir *os.File // keeps fd open
	fd  int
}

// how opens a file for reading: no symbolic link anywhere on the path, no
// step outside the root, and no blocking open of a FIFO.
var how = unix.OpenHow{
	Flags:   unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NOFOLLOW | unix.O_NONBLOCK,
	Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
}

func (s *openat2Source) open(name string) (file, fileStamp, error) {
	var fd int
	var err error
	for {
		fd, err = unix.Openat2(s.fd, name, &how)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		if err == unix.ENOSYS || err == unix.EPERM {
			return nil, fileStamp{}, err
		}
		return nil, fileStamp{}, notExist(&fs.PathError{Op: "openat2", Path: name, Err: err})
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, fileStamp{}, &fs.PathError{Op: "fstat", Path: name, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return nil, fileStamp{}, errNotRegular
	}
	return os.NewFile(uintptr(fd), name), rawStamp(&st), nil
}

func (s *openat2Source) stat(name string) (fileStamp, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(s.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		if err := notExist(&fs.PathError{Op: "fstatat", Path: name, Err: err}); errors.Is(err, fs.ErrNotExist) {
			return fileStamp{}, nil
		}
		return fileStamp{}, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return fileStamp{}, nil
	}
	return rawStamp(&st), nil
}

func (s *openat2Source) close() error { return s.dir.Close() }

func rawStamp(st *unix.Stat_t) fileStamp {
	return fileStamp{size: st.Size, modTime: st.Mtim.Nano(), ino: st.Ino}
}

package write

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// noTmpfile is set once O_TMPFILE or linking through /proc turned out not
// to work here, so later writes go straight to the portable way.
var noTmpfile atomic.Bool

// createNewFunc writes what fill writes to the new file dst, in an existing
// folder, with mode perm (less the umask), and reports whether it did. The
// bytes go to an unnamed file (O_TMPFILE) that is then linked at dst:
// readers never see a part of the file, a killed process leaves nothing
// behind, and the kernel does one directory operation instead of the two
// of a temporary file and a rename. It reports false, having changed
// nothing, when dst exists or the file system or kernel cannot do this; the
// caller then writes the portable way. An error of fill is returned as is,
// with nothing created; any other error is returned too.
func createNewFunc(dst string, perm os.FileMode, fill func(io.Writer) error) (bool, error) {
	if noTmpfile.Load() {
		return false, nil
	}
	fd, err := unix.Open(filepath.Dir(dst), unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, uint32(perm.Perm()))
	if err != nil {
		if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EISDIR) || errors.Is(err, unix.EINVAL) {
			noTmpfile.Store(true)
			return false, nil
		}
		return false, &os.PathError{Op: "open", Path: filepath.Dir(dst), Err: err}
	}
	f := os.NewFile(uintptr(fd), dst)
	defer f.Close()
	if err := fill(f); err != nil {
		return false, err
	}
	if err := syncFile(f, dst); err != nil { // before the link: see durable.go
		return false, err
	}
	err = unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(fd), unix.AT_FDCWD, dst, unix.AT_SYMLINK_FOLLOW)
	switch {
	case err == nil:
		syncStep("link", dst)
		return true, nil
	case errors.Is(err, unix.EEXIST):
		return false, nil
	case errors.Is(err, unix.ENOENT):
		// No /proc here, or the folder went away meanwhile: the portable
		// way says which.
		if _, err := os.Stat("/proc/self/fd"); err != nil {
			noTmpfile.Store(true)
		}
		return false, nil
	case errors.Is(err, unix.EPERM), errors.Is(err, unix.EACCES):
		// A sandbox that forbids linking through /proc.
		noTmpfile.Store(true)
		return false, nil
	}
	return false, &os.LinkError{Op: "link", Old: "O_TMPFILE", New: dst, Err: err}
}

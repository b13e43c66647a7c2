package delivery

import (
	"os"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// openNoFollow makes OpenFile fail on a symbolic link instead of
// following it.
const openNoFollow = syscall.O_NOFOLLOW

// touch sets the time stamps of the open file f to t, through its
// descriptor (utimensat with no path, as futimens does), so that no name
// is looked up again.
func touch(f *os.File, t time.Time) error {
	ts := [2]unix.Timespec{unix.NsecToTimespec(t.UnixNano()), unix.NsecToTimespec(t.UnixNano())}
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var errno syscall.Errno
	if err := rc.Control(func(fd uintptr) {
		_, _, errno = unix.Syscall6(unix.SYS_UTIMENSAT, fd, 0, uintptr(unsafe.Pointer(&ts[0])), 0, 0, 0)
	}); err != nil {
		return err
	}
	if errno != 0 {
		return &os.PathError{Op: "utimensat", Path: f.Name(), Err: errno}
	}
	return nil
}

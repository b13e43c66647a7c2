//go:build unix

package procstat

import (
	"os"
	"syscall"
	"time"
)

// CPUTime returns the CPU time (user and system) this process used so
// far, or 0 where it cannot be read.
func CPUTime() time.Duration {
	user, sys := times()
	return user + sys
}

// SystemTime returns the CPU time this process spent in the kernel so
// far (part of CPUTime), or 0 where it cannot be read.
func SystemTime() time.Duration {
	_, sys := times()
	return sys
}

// times returns the user and system CPU time this process used so far,
// or zeros where they cannot be read.
func times() (user, sys time.Duration) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, 0
	}
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
}

// DropCaches writes what is dirty to the disk and drops the kernel's
// clean page, dentry and inode caches, so that what is read next comes
// from the disk, as after a reboot (Linux, root only: elsewhere it fails).
func DropCaches() error {
	syscall.Sync()
	return os.WriteFile("/proc/sys/vm/drop_caches", []byte("3"), 0)
}

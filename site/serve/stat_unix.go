//go:build unix

package serve

import (
	"io/fs"
	"syscall"
)

// inode returns the inode number of the file info describes, 0 when it is
// not known.
func inode(info fs.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}

// rootOpenFlags open a file through os.Root without following a symbolic
// link in the last element and without blocking on a FIFO.
const rootOpenFlags = syscall.O_RDONLY | syscall.O_NOFOLLOW | syscall.O_NONBLOCK

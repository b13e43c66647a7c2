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

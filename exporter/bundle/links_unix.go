//go:build unix

package bundle

import (
	"os"
	"syscall"
)

// hardLinks returns the number of hard links of the file of fi, or 1 when
// the file system does not say (afero's memory file system).
func hardLinks(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

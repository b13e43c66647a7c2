//go:build linux

package fswatch

import (
	"io/fs"
	"syscall"
	"time"
)

// changedAt returns the later of fi's modification time and its status
// change time (ctime). The status change time moves when a file or folder
// is renamed, when its stamps are set back (touch -d, cp -p) and when its
// content changes, and no call can set it back: a bundle folder renamed
// into place keeps its modification time but not its ctime.
func changedAt(fi fs.FileInfo) time.Time {
	t := fi.ModTime()
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		if c := time.Unix(st.Ctim.Sec, st.Ctim.Nsec); c.After(t) {
			t = c
		}
	}
	return t
}

//go:build linux

package filestamp

import (
	"io/fs"
	"syscall"
	"time"
)

// ChangeTime returns the status change time of fi, or the zero time when
// the file system does not say.
func ChangeTime(fi fs.FileInfo) time.Time {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return time.Unix(st.Ctim.Sec, st.Ctim.Nsec)
	}
	return time.Time{}
}

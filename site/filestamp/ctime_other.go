//go:build !linux

package filestamp

import (
	"io/fs"
	"time"
)

// ChangeTime returns the zero time: the change time is read on Linux only.
func ChangeTime(fi fs.FileInfo) time.Time { return time.Time{} }

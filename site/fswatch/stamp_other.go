//go:build !linux

package fswatch

import (
	"io/fs"
	"time"
)

// changedAt returns fi's modification time: the status change time is
// read on Linux only (see stamp_linux.go).
func changedAt(fi fs.FileInfo) time.Time { return fi.ModTime() }

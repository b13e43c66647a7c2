//go:build !linux

package exporter

import (
	"io"
	"os"
	"time"
)

// createNew reports false: only Linux has O_TMPFILE, so other systems write
// through a temporary file and a rename.
func createNew(dst string, data []byte, perm os.FileMode) (bool, error) { return false, nil }

// createNewFunc reports false, as createNew does.
func createNewFunc(dst string, perm os.FileMode, fill func(io.Writer) error) (bool, error) {
	return false, nil
}

// ctimeOf returns the zero time: the change time is read on Linux only.
func ctimeOf(fi os.FileInfo) time.Time { return time.Time{} }

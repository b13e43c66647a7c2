//go:build !linux

package write

import (
	"io"
	"os"
	"time"
)

// createNewFunc reports false: only Linux has O_TMPFILE, so other systems
// write through a temporary file and a rename.
func createNewFunc(dst string, perm os.FileMode, fill func(io.Writer) error) (bool, error) {
	return false, nil
}

// ctimeOf returns the zero time: the change time is read on Linux only.
func ctimeOf(fi os.FileInfo) time.Time { return time.Time{} }

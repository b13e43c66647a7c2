//go:build !linux

package write

import (
	"io"
	"os"
)

// createNewFunc reports false: only Linux has O_TMPFILE, so other systems
// write through a temporary file and a rename.
func createNewFunc(dst string, perm os.FileMode, fill func(io.Writer) error) (bool, error) {
	return false, nil
}

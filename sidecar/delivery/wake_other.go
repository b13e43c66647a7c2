//go:build !linux

package delivery

import (
	"os"
	"time"
)

// openNoFollow is 0 here: the wake file's guard against a symbolic link
// is Linux's O_NOFOLLOW (see wake_linux.go).
const openNoFollow = 0

// touch sets the time stamps of f to t, by its name.
func touch(f *os.File, t time.Time) error {
	return os.Chtimes(f.Name(), t, t)
}

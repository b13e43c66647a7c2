//go:build !linux

package exporter

import "os"

// createNew reports false: only Linux has O_TMPFILE, so other systems write
// through a temporary file and a rename.
func createNew(dst string, data []byte, perm os.FileMode) (bool, error) { return false, nil }

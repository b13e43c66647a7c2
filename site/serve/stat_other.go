//go:build !unix

package serve

import (
	"io/fs"
	"os"
)

// inode returns 0: the inode number is not known on this system.
func inode(fs.FileInfo) uint64 { return 0 }

// rootOpenFlags open a file through os.Root for reading.
const rootOpenFlags = os.O_RDONLY

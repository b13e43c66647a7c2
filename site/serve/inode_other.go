//go:build !unix

package serve

import "io/fs"

// inode returns 0: the inode number is not known on this system.
func inode(fs.FileInfo) uint64 { return 0 }

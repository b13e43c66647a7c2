package fswatch

import (
	"io/fs"
	"time"

	"github.com/guidepub/guidepub/site/filestamp"
)

// changedAt returns the later of fi's modification time and its status
// change time (ctime). The status change time moves when a file or folder
// is renamed, when its stamps are set back (touch -d, cp -p) and when its
// content changes, and no call can set it back: a bundle folder renamed
// into place keeps its modification time but not its ctime.
func changedAt(fi fs.FileInfo) time.Time {
	t := fi.ModTime()
	if c := filestamp.ChangeTime(fi); c.After(t) {
		t = c
	}
	return t
}

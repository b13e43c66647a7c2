package bundle

import (
	"io/fs"

	"github.com/spf13/afero"
)

// utf8BOM is the UTF-8 byte order mark, which Parse ignores at the start
// of guide.json.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// MsgFolderSymlink is the problem of a bundle folder that is a symbolic
// link: bundles are read through no link (a link could reach files
// outside the bundle source), so such a folder is reported, not skipped.
const MsgFolderSymlink = "the bundle folder is a symbolic link; guidepub follows no links: move or copy the folder itself here"

// checkFolder returns why the bundle folder dir cannot be read, or ""
// when it is a folder and no symbolic link.
func checkFolder(fsys afero.Fs, dir string) string {
	lst, ok := fsys.(afero.Lstater)
	if !ok {
		return ""
	}
	fi, _, err := lst.LstatIfPossible(dir)
	switch {
	case err != nil:
		return "" // readGuide says why
	case fi.Mode()&fs.ModeSymlink != 0:
		return MsgFolderSymlink
	case !fi.IsDir():
		return "not a folder: a bundle is a folder holding guide.json"
	}
	return ""
}

package fswatch

import "strings"

// temporarySuffixes end the names of temporary files that editors,
// browsers and upload tools write before the real file is in place, and of
// staging folders that an uploader renames into place once complete.
var temporarySuffixes = []string{"~", ".swp", ".swx", ".tmp", ".part", ".crdownload", ".partial", ".uploading", ".incomplete"}

// Temporary reports whether a file or folder named name (a single path
// element) is a temporary or staging name, never content: dot-files and
// dot-folders (".#lock", ".tmp-…", ".DS_Store"), vim's write test file
// "4913", and names ending in "~", ".swp", ".swx", ".tmp", ".part",
// ".crdownload", ".partial", ".uploading" or ".incomplete" (in any letter
// case). See docs/watching.md.
func Temporary(name string) bool {
	if strings.HasPrefix(name, ".") || name == "4913" {
		return true
	}
	lower := strings.ToLower(name)
	for _, s := range temporarySuffixes {
		if strings.HasSuffix(lower, s) {
			return true
		}
	}
	return false
}

package watch

import (
	"path/filepath"
	"strings"
)

// ignoredSuffixes end the names of temporary files that editors, browsers
// and upload tools write before the real file is in place, and of staging
// folders that an uploader renames into place once they are complete.
var ignoredSuffixes = []string{"~", ".swp", ".swx", ".tmp", ".part", ".crdownload", ".partial", ".uploading", ".incomplete"}

// Ignored reports whether a file or folder named name (a single path
// element) is one the Watcher never reacts to: dot-files and dot-folders
// (".#lock", ".tmp-…", ".DS_Store"), vim's write test file "4913", and names
// ending in "~", ".swp", ".swx", ".tmp", ".part", ".crdownload", ".partial",
// ".uploading" or ".incomplete" (the suffixes in any letter case). A bundle
// folder so named is a staging folder: it is published only once renamed
// (see docs/watching.md).
func Ignored(name string) bool {
	if strings.HasPrefix(name, ".") || name == "4913" {
		return true
	}
	lower := strings.ToLower(name)
	for _, s := range ignoredSuffixes {
		if strings.HasSuffix(lower, s) {
			return true
		}
	}
	return false
}

// IgnoredPath reports whether any element of the relative path rel
// (separated by the OS separator or '/') is Ignored.
func IgnoredPath(rel string) bool {
	for _, el := range strings.Split(filepath.ToSlash(rel), "/") {
		if el != "" && el != "." && Ignored(el) {
			return true
		}
	}
	return false
}

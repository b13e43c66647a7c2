package watch

import "github.com/guidepub/guidepub/site/fswatch"

// Ignored reports whether a file or folder named name (a single path
// element) is one the Watcher never reacts to: a temporary or staging name
// (fswatch.Temporary): dot-files and dot-folders (".#lock", ".tmp-…",
// ".DS_Store"), vim's write test file "4913", and names ending in "~",
// ".swp", ".swx", ".tmp", ".part", ".crdownload", ".partial", ".uploading"
// or ".incomplete" (the suffixes in any letter case). A bundle folder so
// named is a staging folder: it is published only once renamed (see
// docs/watching.md).
func Ignored(name string) bool { return fswatch.Temporary(name) }

// Package fswatch watches a folder tree for changes, for the exporter's
// watch command and for serve: recursively with file system events
// (fsnotify is not recursive), renewing watches after folders are renamed
// (Tree), batching changes by key with a quiet period and a maximum wait
// (Debouncer), and, when events cannot be had, scanning the tree for a
// digest of each top-level folder (Scan) to poll instead. See
// docs/watching.md.
package fswatch

// Package filestamp reads the stamps of a file that os.FileInfo does not
// name: its status change time (ctime), which no call can set back. The
// watcher uses it to see a folder renamed into place, the exporter to see
// a media file changed behind its back.
package filestamp

// Package privatetree is the private tree as the sidecar reads it: the
// guides' records, ready events and private documents the exporter wrote,
// in a folder (Folder) or in a bucket (Bucket). Both answer the same two
// questions, what version of a file is there (Stat) and its bytes from an
// offset (Open), so the sidecar serves the same answers from either.
//
// Nothing is cached here: every Stat asks the folder or the bucket, so a
// file the exporter removed (a private document a new hide withdrew) is
// not served once its removal is in the tree. The sidecar keeps only what
// it derives from a version (a decoded event, a document's ETag), keyed by
// that version.
package privatetree

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"time"
)

// Info is one version of a regular file of the tree.
type Info struct {
	Size    int64
	ModTime time.Time
	// Version changes whenever the content may have: the size and
	// modification time of a file in a folder (the exporter replaces files
	// by rename), the ETag of an object.
	Version string
	// SHA256 is the hex SHA-256 of the content when the tree knows it
	// without reading it (the exporter's metadata on an object), else "".
	SHA256 string
}

// File is an open version of a file: it reads from offset 0 and seeks.
type File interface {
	io.ReadSeekCloser
}

// Tree is a private tree. Names are slash paths relative to its root,
// already checked to be plain (no "..", no dot-file). Both methods return
// an error wrapping fs.ErrNotExist for a missing file, or for one that is
// not a regular file.
type Tree interface {
	Stat(ctx context.Context, name string) (Info, error)
	Open(ctx context.Context, name string) (File, Info, error)
	// String names the tree for logs (a folder, or a bucket URL without
	// its credentials).
	String() string
}

// MaxJSON bounds a record or event read whole (ReadAll): the exporter's
// are a few KB, so a bigger file is not one of them.
const MaxJSON = 16 << 20

// ReadAll returns the content of name, up to MaxJSON bytes, with its
// version.
func ReadAll(ctx context.Context, t Tree, name string) ([]byte, Info, error) {
	f, info, err := t.Open(ctx, name)
	if err != nil {
		return nil, Info{}, err
	}
	defer f.Close()
	if info.Size > MaxJSON {
		return nil, Info{}, errors.New(name + ": larger than a record or event can be")
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxJSON+1))
	if err != nil {
		return nil, Info{}, err
	}
	if len(b) > MaxJSON { // grown since it was looked at
		return nil, Info{}, errors.New(name + ": larger than a record or event can be")
	}
	return b, info, nil
}

// notExist wraps fs.ErrNotExist with the name.
func notExist(name string) error { return &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist} }

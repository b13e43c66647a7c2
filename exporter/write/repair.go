package write

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/site"
)

// processStart is when this process started, as the file system's clock
// sees it: a temporary file last written before it belongs to no write in
// progress of this process (see docs/robustness.md).
var processStart = time.Now()

// ProcessStart returns when this process started, as the file system's
// clock sees it: a temporary file last written before it belongs to no
// write in progress of this process.
func ProcessStart() time.Time { return processStart }

// RemoveStaleTemps deletes the temporary files an exporter killed in the
// middle of a write left behind in the public and private trees: regular
// files whose name starts with site.TempPrefix, last modified before this
// process started. Files of writes in progress (by this process, or
// another one writing right now) are newer and stay. It returns how many
// it deleted, and an error when a tree cannot be walked or a file deleted.
// Unless all, it looks only at the top folder of the private tree
// (where the marker is written; the records folder is cleaned as it is
// read, see records.Records), which is all a process that was not
// interrupted in the middle of a guide (no marker at start) can have
// left: the exporter asks for all when it found the marker (Verifying).
func (e *Writer) RemoveStaleTemps(all bool) (int, error) {
	if !all {
		return e.priv.removeStaleTempsTop(processStart)
	}
	n := 0
	var errs []error
	for _, t := range []Tree{e.pub, e.priv} {
		k, err := t.removeStaleTemps(processStart)
		n += k
		if err != nil {
			errs = append(errs, err)
		}
	}
	return n, errors.Join(errs...)
}

// removeStaleTemps deletes the temporary files of t last modified before
// cutoff, and returns how many.
func (t Tree) removeStaleTemps(cutoff time.Time) (int, error) {
	if _, err := t.FS.Stat(t.Root); errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	n := 0
	err := afero.Walk(t.FS, t.Root, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // deleted meanwhile
			}
			return err
		}
		if !fi.Mode().IsRegular() || !strings.HasPrefix(fi.Name(), site.TempPrefix) || !fi.ModTime().Before(cutoff) {
			return nil
		}
		if err := t.FS.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		n++
		return nil
	})
	if err != nil {
		return n, fmt.Errorf("remove stale temporary files under %s: %w", t.Root, err)
	}
	return n, nil
}

// interruptState tracks whether an export may have been interrupted in
// the middle of writing a guide. While a Writer writes, a marker file
// (Config.Marker) exists in the private tree; it is removed once no write is
// in progress and none failed. A Writer that finds the marker at start
// (the previous process was killed, or a write failed) removes the
// temporary files left in both trees and makes every media file the
// ordinary way (comparing it with its source) rather than trusting the
// guide's ledger, until Verified (the exporter calls it after an
// ExportAll without an I/O error). A file the interrupted export replaced
// shows a stamp its guide's ledger does not record, so that guide is not
// intact (Writer.Intact) and is exported again.
type interruptState struct {
	mu      sync.Mutex
	verify  bool // check every media file, whatever the ledger says
	writers int  // publishes in progress
	failed  bool // a publish ended early: keep the marker
	marked  bool // this Writer created the marker or found it
}

// markerExists reports whether the marker is in the private tree.
func (e *Writer) markerExists() bool {
	_, err := e.priv.FS.Stat(e.priv.Abs(e.marker))
	return err == nil
}

// Verifying reports whether the marker of an interrupted export was
// found and no full export has checked everything since.
func (e *Writer) Verifying() bool {
	e.interrupted.mu.Lock()
	defer e.interrupted.mu.Unlock()
	return e.interrupted.verify
}

// Begin records a publish starting, creating the marker first when
// no other publish is in progress. It returns an error when the marker
// cannot be written.
func (e *Writer) Begin() error {
	st := &e.interrupted
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.writers == 0 && !st.marked {
		data := []byte(fmt.Sprintf("pid %d since %s\n", os.Getpid(), time.Now().UTC().Format(time.RFC3339)))
		// Written in place (its name is hidden, which tree.write refuses):
		// only its existence matters.
		err := e.priv.FS.MkdirAll(e.priv.Root, 0o755)
		if err == nil {
			err = afero.WriteFile(e.priv.FS, e.priv.Abs(e.marker), data, e.priv.Perm)
		}
		if err == nil {
			// Its name survives a power loss before any file it covers
			// gets its name (durable.go).
			err = syncDir(e.priv.FS, e.priv.Root)
		}
		if err != nil {
			return fmt.Errorf("mark export in progress: %w", err)
		}
		st.marked = true
	}
	st.writers++
	return nil
}

// End records a publish ending (finished: every file written) and
// removes the marker when it was the last one and nothing failed or needs
// checking.
func (e *Writer) End(finished bool) {
	st := &e.interrupted
	st.mu.Lock()
	defer st.mu.Unlock()
	st.writers--
	if !finished {
		st.failed = true
	}
	e.unmarkLocked()
}

// Verified records that an ExportAll checked every guide without an I/O
// error: no sibling is left to check.
func (e *Writer) Verified() {
	st := &e.interrupted
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.verify {
		st.verify, st.marked = false, st.marked || e.markerExists()
		st.failed = false
	}
	e.unmarkLocked()
}

// unmarkLocked removes the marker when nothing is in progress, failed or
// to be checked. The caller holds e.interrupted.mu.
func (e *Writer) unmarkLocked() {
	st := &e.interrupted
	if st.writers > 0 || st.failed || st.verify || !st.marked {
		return
	}
	if err := e.priv.FS.Remove(e.priv.Abs(e.marker)); err == nil || errors.Is(err, fs.ErrNotExist) {
		st.marked = false
	}
}

// removeStaleTempsTop deletes the temporary files directly in t's root
// folder last modified before cutoff, and returns how many.
func (t Tree) removeStaleTempsTop(cutoff time.Time) (int, error) {
	entries, err := afero.ReadDir(t.FS, t.Root)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("remove stale temporary files in %s: %w", t.Root, err)
	}
	n := 0
	for _, fi := range entries {
		if fi.Mode().IsRegular() && strings.HasPrefix(fi.Name(), site.TempPrefix) && fi.ModTime().Before(cutoff) {
			if err := t.FS.Remove(filepath.Join(t.Root, fi.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return n, fmt.Errorf("remove stale temporary files in %s: %w", t.Root, err)
			}
			n++
		}
	}
	return n, nil
}

// siblingAgrees reports whether the compressed sibling of document p in
// encoding enc exists and decodes to data.
func (t Tree) siblingAgrees(p string, enc site.Encoding, data []byte) bool {
	z, err := t.Read(p + enc.Ext)
	if err != nil {
		return false
	}
	got, err := decodeSibling(enc, z, len(data))
	return err == nil && bytes.Equal(got, data)
}

// decodeSibling returns z decoded from enc, reading at most limit+1 bytes
// so that a sibling larger than its document is caught without decoding
// it all.
func decodeSibling(enc site.Encoding, z []byte, limit int) ([]byte, error) {
	r, release, err := enc.NewReader(bytes.NewReader(z))
	if err != nil {
		return nil, err
	}
	defer release()
	return io.ReadAll(io.LimitReader(r, int64(limit)+1))
}

package write

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/spf13/afero"
)

// Durability on power loss (see docs/robustness.md#power-loss). A write
// replaces a file atomically (writeFunc); on its own that protects readers
// and a killed process, not a power loss, after which a file renamed into
// place may be empty if its bytes were still in the page cache. So:
//
//   - every write flushes the file to stable storage (fsync) before it
//     gets its name, so a name never points at bytes that may not be there;
//   - the folders of a guide's files are flushed once, after all of them
//     are written and before the guide's record is written, so the record
//     and the ready event never name a file whose name may be lost;
//   - a guide's record is flushed with its folder each time it is written, and
//     the marker of writes in progress with its folder when it is created
//     (repair.go), before any file it covers gets its name.
//
// One folder flush per guide instead of one per file is the cheaper
// part of the rule: a name not yet flushed can only be lost (the
// previous version stays), never point at missing bytes, and nothing
// names the new version before its folders are flushed.

// SyncHook, when set by a test, is called after each step of the rule
// above with the step ("sync" a file, "rename" or "link" it into place,
// "hardlink" another name to a file in place, "syncdir" a folder) and the
// file or folder it concerns.
var SyncHook func(step, name string)

func syncStep(step, name string) {
	if h := SyncHook; h != nil {
		h(step, name)
	}
}

// syncFile flushes f, written under the name name, to stable storage.
func syncFile(f interface{ Sync() error }, name string) error {
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", name, err)
	}
	syncStep("sync", name)
	return nil
}

// syncDir flushes the folder dir of fsys to stable storage, so that the
// names created, replaced or removed in it survive a power loss. A file
// system that cannot flush a folder (EINVAL) is not an error.
func syncDir(fsys afero.Fs, dir string) error {
	d, err := fsys.Open(dir)
	if err != nil {
		return fmt.Errorf("sync folder %s: %w", dir, err)
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil && !errors.Is(err, syscall.EINVAL) {
		return fmt.Errorf("sync folder %s: %w", dir, err)
	}
	syncStep("syncdir", dir)
	return nil
}

// syncFolders flushes, once each, the folders of t holding the files
// paths (slash-separated, relative to t) and every folder above them up
// to t's root, which holds the names of folders created for them. The
// flushes run writeParallel at a time: the rule needs them all done before
// the guide's record is written, in no particular order, and flushes made
// together cost little more than one (one after the other, the twenty-odd
// folders of a two-view guide took 20 to 45 ms between its status
// document and its ready event; docs/benchmarks.md#webhook-lag). It
// returns the errors of the folders that could not be flushed.
func (t Tree) syncFolders(paths []string) error {
	seen := map[string]bool{}
	var dirs []string
	for _, p := range paths {
		for dir := path.Dir(p); !seen[dir]; dir = path.Dir(dir) {
			seen[dir] = true
			dirs = append(dirs, dir)
			if dir == "." {
				break
			}
		}
	}
	errs := make([]error, len(dirs))
	sem := make(chan struct{}, writeParallel)
	var wg sync.WaitGroup
	for i, dir := range dirs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			errs[i] = syncDir(t.FS, t.Abs(dir))
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// SyncDir flushes the folder p of the tree (see syncDir).
func (t Tree) SyncDir(p string) error { return syncDir(t.FS, t.Abs(p)) }

// WriteSynced is Write followed by a flush of p's folder: for a guide's
// record, which names what is published.
func (t Tree) WriteSynced(p string, data []byte) error {
	if err := t.Write(p, data); err != nil {
		return err
	}
	return syncDir(t.FS, filepath.Dir(t.Abs(p)))
}

package fswatch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// ErrOverflow is reported by Tree.Run when the kernel lost events: the
// caller must look at the whole tree again.
var ErrOverflow = fsnotify.ErrEventOverflow

// ErrCannotWatch is wrapped in the error Tree.Run reports when a new
// folder cannot be watched (too many watches, say): events can no longer
// be trusted and the caller should poll instead.
var ErrCannotWatch = errors.New("cannot watch a new folder")

// Config is what Watch needs. Dir is required.
type Config struct {
	// Dir is the root of the tree, a folder of the operating system.
	Dir string
	// Skip reports whether a file or folder of this name (one path
	// element) is neither watched nor reported. Nil skips nothing.
	Skip func(name string) bool
	// NewEvents replaces fsnotify.NewWatcher: tests make it fail to see
	// the caller's polling fallback.
	NewEvents func() (*fsnotify.Watcher, error)
	// RootOnly makes Watch watch Dir itself only, which is quick at any
	// size: the caller then adds the folders already there with
	// Tree.AddExisting, typically in the background.
	RootOnly bool
}

// Change is one change in the tree.
type Change struct {
	// Path is the changed file or folder, relative to the root, with '/'
	// separators.
	Path string
	// Moved is true for a rename or removal, and for the creation of a
	// folder (or of something gone before it could be looked at): a
	// watched folder may have moved, and the watches under Path's
	// top-level folder should be renewed (Tree.Renew) once the burst of
	// changes has settled. A file created or renamed into place is not
	// Moved: no watch can have moved with it.
	Moved bool
}

// Tree watches every folder of a tree with file system events. Create it
// with Watch, read its changes with Run, release it with Close.
type Tree struct {
	root string
	skip func(string) bool
	ev   *fsnotify.Watcher

	mu     sync.Mutex // serialises Renew with the adds of Run
	closed bool
}

// Watch starts watching cfg.Dir and every folder below it that is not
// skipped (symbolic links are not followed). It returns an error when file
// system events cannot be set up.
func Watch(cfg Config) (*Tree, error) {
	if cfg.Dir == "" {
		return nil, errors.New("fswatch: no folder")
	}
	root, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("fswatch %s: %w", cfg.Dir, err)
	}
	if cfg.Skip == nil {
		cfg.Skip = func(string) bool { return false }
	}
	if cfg.NewEvents == nil {
		cfg.NewEvents = fsnotify.NewWatcher
	}
	ev, err := cfg.NewEvents()
	if err != nil {
		return nil, err
	}
	t := &Tree{root: root, skip: cfg.Skip, ev: ev}
	add := t.add
	if cfg.RootOnly {
		add = t.ev.Add
	}
	if err := add(root); err != nil {
		ev.Close()
		return nil, err
	}
	return t, nil
}

// add watches dir and every folder below it that is not skipped.
func (t *Tree) add(dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p != dir {
				return nil // removed while we walked
			}
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if p != t.root && t.skip(d.Name()) {
			return filepath.SkipDir
		}
		if err := t.ev.Add(p); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return filepath.SkipDir
			}
			return fmt.Errorf("watch %s: %w", p, err)
		}
		return nil
	})
}

// AddExisting watches the top-level folders named (paths relative to the
// root: those present when Watch was called with RootOnly), and every
// folder below them, one at a time. A folder may change before its watch
// is in place, so once it is, the folder's files and folders are looked
// at: when one was modified at or after since (pass a time a little before
// Watch was called: the file system's clock is coarse), changed is called
// with the folder's name. Changes made after the watch was added arrive
// through Run as usual, and so do the folders created after Watch. It
// stops early, returning nil, when ctx is done or the tree is closed, and
// returns an error wrapping ErrCannotWatch when a folder cannot be
// watched.
func (t *Tree) AddExisting(ctx context.Context, folders []string, since time.Time, changed func(folder string)) error {
	for _, f := range folders {
		if ctx.Err() != nil {
			return nil
		}
		dir := filepath.Join(t.root, f)
		t.mu.Lock()
		if t.closed {
			t.mu.Unlock()
			return nil
		}
		err := t.add(dir)
		t.mu.Unlock()
		if errors.Is(err, fs.ErrNotExist) {
			continue // gone: the root's watch saw it go
		}
		if err != nil {
			return fmt.Errorf("%w: %w", ErrCannotWatch, err)
		}
		if modifiedSince(dir, since, t.skip) {
			changed(f)
		}
	}
	return nil
}

// modifiedSince reports whether dir, or a file or folder below it that
// skip does not report, was modified at or after since. An entry that
// cannot be read counts as modified.
func modifiedSince(dir string, since time.Time, skip func(string) bool) bool {
	found := false
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			found = found || !errors.Is(err, fs.ErrNotExist)
			return nil
		}
		if p != dir && skip(d.Name()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			found = found || !errors.Is(err, fs.ErrNotExist)
			return nil
		}
		if !fi.ModTime().Before(since) {
			found = true
			return filepath.SkipAll
		}
		return nil
	})
	return found
}

// Run calls change for each change in the tree, in the order the kernel
// saw them, and report for each error (ErrOverflow, or ErrCannotWatch
// wrapped, among others), until ctx is done or Close is called. Changes
// to permissions only and changes of skipped names are left out. A new
// folder is watched, with everything already inside it, before change is
// called.
func (t *Tree) Run(ctx context.Context, change func(Change), report func(error)) {
	for {
		select {
		case <-ctx.Done():
			return
		case e, ok := <-t.ev.Events:
			if !ok {
				return
			}
			t.event(e, change, report)
		case err, ok := <-t.ev.Errors:
			if !ok {
				return
			}
			report(err)
		}
	}
}

// event handles one file system event.
func (t *Tree) event(e fsnotify.Event, change func(Change), report func(error)) {
	if e.Op == fsnotify.Chmod {
		return // permissions only: no content changed
	}
	rel, err := filepath.Rel(t.root, e.Name)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return
	}
	rel = filepath.ToSlash(rel)
	for _, el := range strings.Split(rel, "/") {
		if t.skip(el) {
			return
		}
	}
	moved := e.Has(fsnotify.Rename) || e.Has(fsnotify.Remove)
	if e.Has(fsnotify.Create) {
		fi, err := os.Lstat(e.Name)
		if err != nil || fi.IsDir() {
			moved = true
		}
		if err == nil && fi.IsDir() {
			// A new folder: files and folders may have been created in it
			// before its watch was added.
			t.mu.Lock()
			err := t.add(e.Name)
			t.mu.Unlock()
			if err != nil {
				report(fmt.Errorf("%w: %w", ErrCannotWatch, err))
			}
		}
	}
	change(Change{Path: rel, Moved: moved})
}

// Renew renews the watches of the top-level folders named (paths relative
// to the root): every watch on or below them is dropped, and so is every
// watch whose folder no longer exists under its name, then the folders
// present are watched afresh. Call it once a burst of Moved changes has
// settled. It returns an error wrapping ErrCannotWatch when a folder
// cannot be watched.
//
// Why: fsnotify keeps watches by path, the kernel by folder. After a
// watched folder is renamed, fsnotify (v1.10) still files its watch, and
// those of its sub-folders, under the old names, and it drops the watch
// when the folder's own move event arrives, even when the folder was
// meanwhile watched again under its new name (the kernel hands back the
// same watch). The folder would never be heard from again. Dropping every
// stale watch first and adding the tree again gives fresh watches filed
// under the right names.
func (t *Tree) Renew(folders []string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil
	}
	renew := make(map[string]bool, len(folders))
	for _, f := range folders {
		renew[f] = true
	}
	for _, p := range t.ev.WatchList() {
		rel, err := filepath.Rel(t.root, p)
		if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
			continue
		}
		top, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
		fi, err := os.Lstat(p)
		if renew[top] || err != nil || !fi.IsDir() {
			t.ev.Remove(p) // an error means the kernel had dropped it already
		}
	}
	for _, f := range folders {
		dir := filepath.Join(t.root, filepath.FromSlash(f))
		if t.skip(f) {
			continue
		}
		if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
			continue
		}
		if err := t.add(dir); err != nil {
			return fmt.Errorf("%w: %w", ErrCannotWatch, err)
		}
	}
	return nil
}

// Watched returns the folders watched now, relative to the root, for
// tests and diagnostics.
func (t *Tree) Watched() []string {
	var out []string
	for _, p := range t.ev.WatchList() {
		if rel, err := filepath.Rel(t.root, p); err == nil {
			out = append(out, filepath.ToSlash(rel))
		}
	}
	return out
}

// Close stops the watches; Run returns soon after.
func (t *Tree) Close() error {
	t.mu.Lock()
	t.closed = true
	t.mu.Unlock()
	return t.ev.Close()
}

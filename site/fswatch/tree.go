package fswatch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
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
	// Moved: no watch can have moved with it; nor is a folder renamed
	// into place from a name that was never watched (a skipped name,
	// such as a staging folder "x.partial").
	Moved bool
	// Renamed is true for a file or folder renamed into place from
	// another name under a watched folder: it was complete before it got
	// its name, so it needs no quiet period. A file or folder created or
	// written in place, or moved in from outside the watched folders, is
	// not Renamed.
	Renamed bool
}

// Tree watches every folder of a tree with file system events. Create it
// with Watch, read its changes with Run, release it with Close.
type Tree struct {
	root string
	skip func(string) bool
	ev   *fsnotify.Watcher

	mu     sync.Mutex // serialises Renew with the adds of Run
	closed bool
	// watched holds, by top-level folder (relative to the root), the
	// folders watched on or below it, so that Renew costs what one
	// bundle folder holds, not what the tree holds.
	watched map[string][]string
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
	t := &Tree{root: root, skip: cfg.Skip, ev: ev, watched: make(map[string][]string)}
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
		t.index(p)
		return nil
	})
}

// index files the watched folder p under its top-level folder. The
// caller holds mu, or is Watch.
func (t *Tree) index(p string) {
	rel, ok := strings.CutPrefix(p, t.root+string(filepath.Separator))
	if !ok {
		return // the root
	}
	top, _, _ := strings.Cut(rel, string(filepath.Separator))
	list := t.watched[top]
	if n := len(list); n > 0 && list[n-1] == p {
		return // added again right away (a folder and its creation event)
	}
	t.watched[top] = append(list, p)
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
// skip does not report, was modified, renamed or had its stamps set at or
// after since (changedAt). An entry that cannot be read counts as
// modified.
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
		if !changedAt(fi).Before(since) {
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
	renamed := false
	if e.Has(fsnotify.Create) {
		from, isRename := renamedFrom(e)
		fi, err := os.Lstat(e.Name)
		renamed = isRename && err == nil
		switch {
		case err != nil:
			moved = true
		case fi.IsDir():
			// A folder renamed from a name never watched brought no
			// watch with it; any other new folder may have.
			moved = !isRename || t.mayBeWatched(from)
			// Files and folders may have been created in it before its
			// watch was added.
			t.mu.Lock()
			err := t.add(e.Name)
			t.mu.Unlock()
			if err != nil {
				report(fmt.Errorf("%w: %w", ErrCannotWatch, err))
			}
		}
	}
	change(Change{Path: rel, Moved: moved, Renamed: renamed})
}

// renamedFrom returns the path that the file or folder created by e was
// renamed from, when e is the second half of a rename within the watched
// folders. fsnotify pairs the two halves of a rename (by the kernel's
// cookie) but, in v1.10, shows the old name only in Event.String, which
// is where it is read from (TestRenamedIntoPlace fails should that
// change).
func renamedFrom(e fsnotify.Event) (string, bool) {
	plain := fmt.Sprintf("%-13s %q", e.Op.String(), e.Name)
	rest, ok := strings.CutPrefix(e.String(), plain+" ← ")
	if !ok {
		return "", false
	}
	from, err := strconv.Unquote(rest)
	return from, err == nil
}

// mayBeWatched reports whether the folder at path p (absolute) may have
// been watched: it is below the root and no element of it is skipped.
func (t *Tree) mayBeWatched(p string) bool {
	rel, ok := strings.CutPrefix(p, t.root+string(filepath.Separator))
	if !ok {
		return false
	}
	for _, el := range strings.Split(rel, string(filepath.Separator)) {
		if t.skip(el) {
			return false
		}
	}
	return true
}

// Renew renews the watches of the top-level folders named (paths relative
// to the root): every watch on or below them is dropped, then the folders
// present are watched afresh. Call it once a burst of Moved changes has
// settled, with the top-level folders of those changes. Its cost is that
// of the folders named (the Tree files its watches by top-level folder),
// not that of the tree. It returns an error wrapping ErrCannotWatch when a
// folder cannot be watched.
//
// Why: fsnotify keeps watches by path, the kernel by folder. After a
// watched folder is renamed, fsnotify (v1.10) still files its watch, and
// those of its sub-folders, under the old names, and it drops the watch
// when the folder's own move event arrives, even when the folder was
// meanwhile watched again under its new name (the kernel hands back the
// same watch). The folder would never be heard from again. Dropping every
// stale watch first and adding the tree again gives fresh watches filed
// under the right names. A folder moved from one top-level folder to
// another gives a Moved change in each, so both are renewed: every watch
// filed under an old name is dropped.
func (t *Tree) Renew(folders []string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil
	}
	return t.renew(folders)
}

// RenewAll renews, as Renew does, every top-level folder watched so far
// and the folders named (those present now): after events were lost, any
// watch may be filed under an old name.
func (t *Tree) RenewAll(present []string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil
	}
	folders := append([]string(nil), present...)
	for top := range t.watched {
		folders = append(folders, top)
	}
	return t.renew(folders)
}

// renew is Renew with mu held.
func (t *Tree) renew(folders []string) error {
	folders = slices.Compact(slices.Sorted(slices.Values(folders)))
	for _, f := range folders {
		top, _, _ := strings.Cut(f, "/")
		for _, p := range t.watched[top] {
			t.ev.Remove(p) // an error means the kernel had dropped it already
		}
		delete(t.watched, top)
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

package serve

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/site"
)

// ReloadDirs is Reload for a tree where only the top-level folders dirs
// (view ids and aliases) changed: it re-reads those folders, reusing what
// the current snapshot holds for files whose size and modification time
// did not change, and keeps every other entry as it is. A folder that no
// longer exists is no longer served. Exporting one guide into a large tree
// then costs a walk of that guide's folders, not of the whole tree.
//
// It returns an error, and keeps the current snapshot, when a name is not a
// single visible path element or a folder cannot be read.
func (s *Server) ReloadDirs(dirs ...string) error {
	names := make(map[string]bool, len(dirs))
	for _, d := range dirs {
		if d == "" || d == "." || d == ".." || strings.ContainsAny(d, `/\`) || site.IsHidden(d) {
			return fmt.Errorf("serve: reload %q: not a top-level folder name", d)
		}
		names[d] = true
	}
	if len(names) == 0 {
		return nil
	}
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	prev := s.current.Load()
	part := loader{
		fsys:        &onlyDirs{Fs: s.loader.fsys, root: filepath.Clean(s.loader.root), names: names},
		root:        s.loader.root,
		memoryLimit: s.loader.memoryLimit,
	}
	fresh, err := part.load(prev)
	if err != nil {
		return err
	}
	// Copy the current entries wholesale, then drop those of the reloaded
	// folders, found through the index by top-level folder: cheaper than
	// rebuilding a map of the whole tree.
	snap := &snapshot{entries: maps.Clone(prev.entries), byTop: maps.Clone(prev.byTop), memory: prev.memory, files: prev.files}
	for top := range names {
		for _, name := range prev.byTop[top] {
			mem, n := prev.entries[name].held()
			delete(snap.entries, name)
			snap.memory -= mem
			snap.files -= n
		}
		delete(snap.byTop, top)
	}
	for name, e := range fresh.entries {
		snap.entries[name] = e
	}
	for top, list := range fresh.byTop {
		snap.byTop[top] = list
	}
	snap.memory += fresh.memory
	snap.files += fresh.files
	s.current.Store(snap)
	return nil
}

// held returns the bytes e holds in memory and the number of files it
// stands for (its identity and each sibling).
func (e *entry) held() (memory int64, files int) {
	memory, files = int64(len(e.identity.data)), 1
	for _, r := range e.encoded {
		if r != nil {
			memory += int64(len(r.data))
			files++
		}
	}
	return memory, files
}

// onlyDirs is a file system whose root folder lists only the names kept;
// everything else passes through. Walking it walks only those folders.
type onlyDirs struct {
	afero.Fs
	root  string
	names map[string]bool
}

func (o *onlyDirs) Open(name string) (afero.File, error) {
	f, err := o.Fs.Open(name)
	if err != nil || filepath.Clean(name) != o.root {
		return f, err
	}
	return &keptDir{File: f, names: o.names}, nil
}

// LstatIfPossible keeps the loader from following symbolic links.
func (o *onlyDirs) LstatIfPossible(name string) (os.FileInfo, bool, error) {
	if l, ok := o.Fs.(afero.Lstater); ok {
		return l.LstatIfPossible(name)
	}
	fi, err := o.Fs.Stat(name)
	return fi, false, err
}

// keptDir is the root folder of onlyDirs, listing only the kept names.
type keptDir struct {
	afero.File
	names map[string]bool
}

func (d *keptDir) Readdirnames(n int) ([]string, error) {
	all, err := d.File.Readdirnames(n)
	kept := all[:0]
	for _, name := range all {
		if d.names[name] {
			kept = append(kept, name)
		}
	}
	return kept, err
}

func (d *keptDir) Readdir(n int) ([]os.FileInfo, error) {
	all, err := d.File.Readdir(n)
	kept := all[:0]
	for _, fi := range all {
		if d.names[fi.Name()] {
			kept = append(kept, fi)
		}
	}
	return kept, err
}

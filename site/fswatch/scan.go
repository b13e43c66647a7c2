package fswatch

import (
	"encoding/binary"
	"errors"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"
)

// Snapshot maps each top-level folder of a tree (a bundle folder, say) to
// a digest of its files: names, sizes, modification times and types.
// Keeping a digest rather than the listing keeps a poller small over many
// folders.
type Snapshot map[string]uint64

// Folders returns the names of the top-level folders under root (not
// skipped, directories, symbolic links not followed), sorted. It returns
// the error of reading root. A nil skip skips nothing.
func Folders(root string, skip func(name string) bool) ([]string, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() && (skip == nil || !skip(e.Name())) {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// Recent returns, in the order given, the folders named (relative to
// root) whose own stamps (modification or status change) are at or after
// since: a folder renamed into place (a staging folder "x.partial"
// renamed to "x"), created, or with a file or folder created, renamed or
// deleted in it (guide.json renamed into place, say). A file rewritten in
// place leaves its folder's stamps alone: Tree.AddExisting finds that
// one. It costs one Lstat per folder; a folder that cannot be read is
// left out.
func Recent(root string, folders []string, since time.Time) []string {
	var out []string
	for _, f := range folders {
		fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(f)))
		if err == nil && fi.IsDir() && !changedAt(fi).Before(since) {
			out = append(out, f)
		}
	}
	return out
}

// Scan returns the snapshot of every top-level folder under root, leaving
// out the names skip reports. It fails only when root itself cannot be
// read, so that an unreachable mount is not mistaken for every folder
// being deleted.
func Scan(root string, skip func(name string) bool) (Snapshot, error) {
	if skip == nil {
		skip = func(string) bool { return false }
	}
	folders, err := Folders(root, skip)
	if err != nil {
		return nil, err
	}
	snap := make(Snapshot, len(folders))
	for _, f := range folders {
		d, err := digestFolder(filepath.Join(root, f), skip)
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted while we looked: it is gone
		}
		snap[f] = d
	}
	return snap, nil
}

// digestFolder hashes the listing of the folder dir, recursively, leaving
// out the names skip reports. An entry that cannot be read is hashed with a marker, so a
// folder that becomes readable again counts as changed. It returns an error
// only when dir itself is missing or not a folder.
func digestFolder(dir string, skip func(string) bool) (uint64, error) {
	fi, err := os.Lstat(dir)
	if err != nil {
		return 0, err
	}
	if !fi.IsDir() {
		return 0, fs.ErrNotExist
	}
	h := fnv.New64a()
	var buf [8]byte
	writeInt := func(v int64) {
		binary.LittleEndian.PutUint64(buf[:], uint64(v))
		h.Write(buf[:])
	}
	var walk func(dir, rel string)
	walk = func(dir, rel string) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			h.Write([]byte{0, '!', 0})
			return
		}
		sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
		for _, e := range entries {
			name := e.Name()
			if skip(name) {
				continue
			}
			h.Write([]byte(rel))
			h.Write([]byte(name))
			h.Write([]byte{0})
			info, err := e.Info()
			if err != nil {
				h.Write([]byte{'?'})
				continue
			}
			writeInt(int64(info.Mode().Type()))
			if e.IsDir() {
				walk(filepath.Join(dir, name), rel+name+"/")
				continue
			}
			writeInt(info.Size())
			writeInt(info.ModTime().UnixNano())
		}
	}
	walk(dir, "")
	return h.Sum64(), nil
}

// Changed returns, sorted, the folders that differ between the snapshots
// old and cur: new, changed or gone.
func Changed(old, cur Snapshot) []string {
	var out []string
	for f, d := range cur {
		if od, ok := old[f]; !ok || od != d {
			out = append(out, f)
		}
	}
	for f := range old {
		if _, ok := cur[f]; !ok {
			out = append(out, f)
		}
	}
	sort.Strings(out)
	return out
}

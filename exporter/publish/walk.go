package publish

import (
	"cmp"
	"errors"
	"io/fs"
	"iter"
	"path"
	"path/filepath"
	"slices"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/site"
)

// localFile is one file of the public tree to upload, with its key.
type localFile struct {
	key, rel string
	info     fs.FileInfo
}

// localFiles yields the files of the public tree that publish uploads, in
// key order (bytewise, as S3 lists), holding the names of one folder per
// level at a time: the tree is never held in memory. Hidden files,
// symbolic links and compressed siblings are left out.
func localFiles(fsys afero.Fs, root string, keys keyer) iter.Seq2[localFile, error] {
	files := sortedWalk(fsys, root, keys)
	if !keys.pagesAsObjects {
		return files
	}
	// A page's key ("vKT301A") sorts before its folder's other keys but
	// after keys such as "vKT301A-2/…" that the walk yields first: pages
	// come from a walk of their own, merged in.
	return mergeSorted(files, pageFiles(fsys, root, keys))
}

// sortedWalk yields every uploaded file under root in key order; with
// keys.pagesAsObjects, pages are left to pageFiles.
func sortedWalk(fsys afero.Fs, root string, keys keyer) iter.Seq2[localFile, error] {
	return func(yield func(localFile, error) bool) {
		var walk func(dir string) bool
		walk = func(dir string) bool {
			entries, err := readDirSorted(fsys, filepath.Join(root, filepath.FromSlash(dir)), func(e dirEntry) string {
				if e.dir {
					return e.name + "/" // "a/x" sorts after "a-b" and "a.c"
				}
				return e.name
			})
			if err != nil {
				return yield(localFile{}, err)
			}
			for _, e := range entries {
				rel := path.Join(dir, e.name)
				if site.IsHidden(rel) {
					continue
				}
				switch {
				case e.dir:
					if !walk(rel) {
						return false
					}
				case e.regular:
					if _, _, sib := site.SplitEncoded(rel); sib {
						continue
					}
					if _, page := site.PageKindOf(rel); page && keys.pagesAsObjects {
						continue
					}
					fi, err := lstat(fsys, filepath.Join(root, filepath.FromSlash(rel)))
					if err != nil {
						if errors.Is(err, fs.ErrNotExist) {
							continue // removed since the folder was read
						}
						return yield(localFile{}, err)
					}
					if !fi.Mode().IsRegular() {
						continue
					}
					if !yield(localFile{keys.key(rel), rel, fi}, nil) {
						return false
					}
				}
			}
			return true
		}
		walk("")
	}
}

// pageFiles yields the pages of the tree by their object keys, in key
// order. Pages sit at <id>/index.html, u/<id>/index.html and
// embed/<id>/index.html only.
func pageFiles(fsys afero.Fs, root string, keys keyer) iter.Seq2[localFile, error] {
	return func(yield func(localFile, error) bool) {
		isContainer := func(name string) bool { return name == site.UnbrandedDir || name == site.EmbedDir }
		top, err := readDirSorted(fsys, root, func(e dirEntry) string {
			if isContainer(e.name) {
				return e.name + "/"
			}
			return e.name
		})
		if err != nil {
			yield(localFile{}, err)
			return
		}
		page := func(dir string) bool {
			rel := dir + "/" + site.PageFile
			if _, ok := site.PageKindOf(rel); !ok {
				return true
			}
			fi, err := lstat(fsys, filepath.Join(root, filepath.FromSlash(rel)))
			if err != nil || !fi.Mode().IsRegular() {
				return true
			}
			return yield(localFile{keys.key(rel), rel, fi}, nil)
		}
		for _, e := range top {
			if !e.dir || site.IsHidden(e.name) {
				continue
			}
			if !isContainer(e.name) {
				if !page(e.name) {
					return
				}
				continue
			}
			inner, err := readDirSorted(fsys, filepath.Join(root, e.name), func(e dirEntry) string { return e.name })
			if err != nil {
				yield(localFile{}, err)
				return
			}
			for _, sub := range inner {
				if sub.dir && !site.IsHidden(sub.name) && !page(e.name+"/"+sub.name) {
					return
				}
			}
		}
	}
}

// dirEntry is what the walks keep of a folder's entry: its name and
// kind, not its whole FileInfo, so that a folder of a million entries
// costs little more than their names.
type dirEntry struct {
	name         string
	dir, regular bool
}

// readDirSorted returns the entries of dir sorted by sortKey, without
// following symbolic links. A missing dir has no entries.
func readDirSorted(fsys afero.Fs, dir string, sortKey func(dirEntry) string) ([]dirEntry, error) {
	f, err := fsys.Open(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	defer f.Close()
	var entries []dirEntry
	if rd, ok := f.(interface {
		ReadDir(int) ([]fs.DirEntry, error)
	}); ok {
		// An operating system folder: the kinds come with the names.
		des, err := rd.ReadDir(-1)
		if err != nil {
			return nil, err
		}
		entries = make([]dirEntry, len(des))
		for i, de := range des {
			entries[i] = dirEntry{de.Name(), de.IsDir(), de.Type().IsRegular()}
		}
	} else {
		fis, err := f.Readdir(-1)
		if err != nil {
			return nil, err
		}
		entries = make([]dirEntry, len(fis))
		for i, fi := range fis {
			entries[i] = dirEntry{fi.Name(), fi.IsDir(), fi.Mode().IsRegular()}
		}
	}
	slices.SortFunc(entries, func(a, b dirEntry) int { return cmp.Compare(sortKey(a), sortKey(b)) })
	return entries, nil
}

// mergeSorted merges two key-ordered sequences into one.
func mergeSorted(a, b iter.Seq2[localFile, error]) iter.Seq2[localFile, error] {
	return func(yield func(localFile, error) bool) {
		nextA, stopA := iter.Pull2(a)
		defer stopA()
		nextB, stopB := iter.Pull2(b)
		defer stopB()
		fa, errA, okA := nextA()
		fb, errB, okB := nextB()
		for okA || okB {
			switch {
			case okA && errA != nil:
				yield(localFile{}, errA)
				return
			case okB && errB != nil:
				yield(localFile{}, errB)
				return
			case okA && (!okB || fa.key <= fb.key):
				if !yield(fa, nil) {
					return
				}
				fa, errA, okA = nextA()
			default:
				if !yield(fb, nil) {
					return
				}
				fb, errB, okB = nextB()
			}
		}
	}
}

package write

import (
	"fmt"
	"slices"
	"sync"

	"github.com/guidepub/guidepub/exporter/render"
	"github.com/guidepub/guidepub/site"
)

// sharedFiles are the files of the whole tree a Writer has put in place
// (render.SharedFiles: the stylesheet). They are the same for every
// guide, so each is checked and compressed once per Writer, not once per
// guide or page.
type sharedFiles struct {
	mu   sync.Mutex
	done map[string]bool // path -> in place
}

// putShared publishes each of files, unless this Writer already did: its
// compressed siblings, then itself, each written only when the tree does
// not hold those bytes already, and the siblings of encodings no longer
// configured removed. It runs before a guide's own files, so a shared
// file is in place before any page that links it and before any status.
// Shared files are in no guide's record, so removing a guide never
// removes them; nothing removes them (their names are hashes of their
// bytes, so pages written by an earlier version keep theirs). Their
// siblings are always compressed with the final settings: no record
// could say they are not.
func (w *guideWriter) putShared(files []render.File) error {
	s := &w.e.shared
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range files {
		if s.done[f.Path] {
			continue
		}
		docs, err := w.prepareDocs([]render.File{f}, nil, Final) // at Final, never gives way
		if err != nil {
			return fmt.Errorf("shared file %s: %w", f.Path, err)
		}
		written, err := w.put(w.e.pub, f, f.Data, docs[0])
		if err != nil {
			return fmt.Errorf("shared file %s: %w", f.Path, err)
		}
		for _, enc := range site.Encodings {
			if p := f.Path + enc.Ext; !slices.Contains(w.e.encodings, enc) && w.e.pub.Exists(p) {
				if err := removeFile(w.res, w.e.pub, p, nil, true); err != nil {
					return fmt.Errorf("shared file %s: %w", f.Path, err)
				}
			}
		}
		if err := w.e.pub.syncFolders(written); err != nil {
			return fmt.Errorf("shared file %s: %w", f.Path, err)
		}
		if s.done == nil {
			s.done = map[string]bool{}
		}
		s.done[f.Path] = true
	}
	return nil
}

package exporter

import (
	"fmt"
	"slices"
	"sync"

	"github.com/guidepub/guidepub/site"
	"github.com/guidepub/guidepub/site/viewpage"
)

// sharedFiles is what an Exporter knows of the files of the whole tree,
// which belong to no guide: the stylesheet every page links
// (docs/pages.md#the-stylesheet).
type sharedFiles struct {
	mu sync.Mutex
	// stylesheet is set once the stylesheet is in the tree, written or
	// found there by this Exporter: it is the same for every guide, so it
	// is checked and compressed once per Exporter, not per guide or page.
	stylesheet bool
}

// putStylesheet publishes viewpage.Stylesheet at viewpage.StylesheetPath
// unless this Exporter already did: its compressed siblings, then itself,
// each written only when the tree does not hold those bytes already (and
// the siblings of encodings no longer configured removed). It
// runs before a guide's files are written, so the stylesheet is in place
// before any page that links it and before any status. It is in no
// guide's record, so removing a guide never removes it; nothing removes
// it (a name is a hash of the bytes, so pages rendered by an earlier
// version keep theirs). It returns an error when the hide table has no
// shared row for it or a write fails.
func (w *guideWriter) putStylesheet() error {
	s := &w.e.shared
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stylesheet {
		return nil
	}
	f := outFile{path: viewpage.StylesheetPath, data: viewpage.Stylesheet(), doc: true}
	if row, _, ok := site.PublicFileOf(f.path); !ok || row.Group != site.GroupShared {
		return fmt.Errorf("public file %s has no row of the shared files in the hide table (site.PublicFiles)", f.path)
	}
	written, err := w.put(w.e.pub, f, f.data, w.prepareDocs([]outFile{f})[0])
	if err != nil {
		return fmt.Errorf("stylesheet: %w", err)
	}
	// The siblings of encodings no longer configured go, as a
	// document's do.
	for _, enc := range site.Encodings {
		if p := f.path + enc.Ext; !slices.Contains(w.e.cfg.Encodings, enc) && w.e.pub.exists(p) {
			if err := removeFile(w.res, w.e.pub, p, nil, true); err != nil {
				return fmt.Errorf("stylesheet: %w", err)
			}
		}
	}
	if err := w.e.pub.syncFolders(written); err != nil {
		return fmt.Errorf("stylesheet: %w", err)
	}
	s.stylesheet = true
	return nil
}

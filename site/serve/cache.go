package serve

import (
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/maypok86/otter/v2"

	"github.com/guidepub/guidepub/site"
)

// The cache holds entries of documents and small files, up to
// Config.CacheBytes of them (otter's W-TinyLFU policy picks what to drop).
// Whether a cached entry may be served without looking at its files is
// decided by three counters:
//
//   - Server.epoch, bumped by Reload and when the watcher starts or fails:
//     an entry read in an earlier epoch is checked before it is served;
//   - entry.marks, bumped when the watcher or ReloadDirs reports a change
//     of one of its files or of a folder above them;
//   - Server.gen, bumped before every such report: an entry whose read
//     overlapped a report is cached already marked, so a change that
//     happened while it was read is never missed.
//
// When the tree cannot be watched, an entry is also checked once it is
// older than Config.PollInterval. A check compares the stamps of its files
// with the ones it was read with; if all agree the entry is served, else
// it is read again.

// newCache returns the cache for a budget of bytes, nil for zero.
func newCache(bytes int64) *otter.Cache[string, *entry] {
	if bytes <= 0 {
		return nil
	}
	return otter.Must(&otter.Options[string, *entry]{
		MaximumWeight: uint64(bytes),
		Weigher:       func(_ string, e *entry) uint32 { return e.weight() },
	})
}

// readMark is what a read or a check of an entry saw before it looked at
// any file.
type readMark struct {
	gen, epoch uint64
	at         int64
}

// mark returns the counters now, to be taken before reading files.
func (s *Server) mark() readMark {
	return readMark{gen: s.gen.Load(), epoch: s.epoch.Load(), at: s.now()}
}

// now is the time on the Server's monotonic clock, in nanoseconds.
func (s *Server) now() int64 { return int64(time.Since(s.started)) }

// remember records what e was read against and caches it if it fits.
func (s *Server) remember(e *entry, at readMark) {
	e.epoch.Store(at.epoch)
	e.checked.Store(at.at)
	if s.gen.Load() != at.gen {
		e.marks.Store(1) // a change was reported during the read
	}
	if s.cache != nil && int64(e.weight()) <= s.cfg.CacheBytes {
		s.cache.Set(e.name, e)
	}
}

// reweigh has the cache count e's bytes again after a representation was
// added, if e is still the cached entry of its path.
func (s *Server) reweigh(e *entry) {
	if s.cache == nil {
		return
	}
	s.cache.ComputeIfPresent(e.name, func(old *entry) (*entry, otter.ComputeOp) {
		if old != e {
			return old, otter.CancelOp
		}
		return e, otter.WriteOp
	})
}

// cached returns the entry cached for name when it may be served: fresh,
// or checked now and found unchanged. It returns nil otherwise.
func (s *Server) cached(name string) *entry {
	if s.cache == nil {
		return nil
	}
	e, ok := s.cache.GetIfPresent(name)
	if !ok {
		return nil
	}
	if s.fresh(e) || s.revalidate(e) {
		return e
	}
	return nil
}

// fresh reports whether e may be served without looking at its files.
func (s *Server) fresh(e *entry) bool {
	if e.marks.Load() != 0 || e.epoch.Load() != s.epoch.Load() {
		return false
	}
	if w := s.window.Load(); w >= 0 {
		return s.now()-e.checked.Load() < w
	}
	return true
}

// revalidate compares the stamps of e's files with the tree's and, when
// none changed, makes e fresh again.
func (s *Server) revalidate(e *entry) bool {
	at := s.mark()
	m := e.marks.Load()
	for i := range e.stamps {
		name := e.name
		if i > 0 {
			if !e.document {
				break
			}
			name += site.Encodings[i-1].Ext
		}
		st, err := s.src.stat(name)
		if err != nil || st != e.stamps[i] {
			return false
		}
	}
	// A change reported since m was read marks e again: keep it stale.
	if m != 0 && !e.marks.CompareAndSwap(m, 0) {
		return false
	}
	e.epoch.Store(at.epoch)
	e.checked.Store(at.at)
	return true
}

// changedFile marks the cached entry of the file p (a document, one of its
// siblings, or a media file) as changed.
func (s *Server) changedFile(p string) {
	s.gen.Add(1)
	if s.cache == nil {
		return
	}
	if doc, _, ok := site.SplitEncoded(p); ok {
		p = doc
	}
	if e, ok := s.cache.GetIfPresent(p); ok {
		e.marks.Add(1)
	}
}

// changedUnder marks every cached entry at or under the folders dirs as
// changed; "" stands for the whole tree.
func (s *Server) changedUnder(dirs []string) {
	s.gen.Add(1)
	for _, d := range dirs {
		if d == "" {
			s.epoch.Add(1)
			return
		}
	}
	if s.cache == nil {
		return
	}
	for name, e := range s.cache.All() {
		for _, d := range dirs {
			if name == d || (strings.HasPrefix(name, d) && name[len(d)] == '/') {
				e.marks.Add(1)
				break
			}
		}
	}
}

// Reload makes the Server check every cached file against the tree before
// serving it again; files not cached are always read as they are. Use it
// after the tree changed when the Server does not watch it.
func (s *Server) Reload() {
	s.gen.Add(1)
	s.epoch.Add(1)
}

// ReloadDirs is Reload for the folders dirs only (view ids, aliases, or
// deeper folders such as "u/<id>"): the cached files under them are
// checked again before they are served. Exporting one guide into a large
// tree then costs nothing for the others. It returns an error when a name
// is not a clean, relative, visible folder path.
func (s *Server) ReloadDirs(dirs ...string) error {
	for _, d := range dirs {
		if d == "" || d == "." || strings.ContainsRune(d, '\\') || path.Clean(d) != d ||
			strings.HasPrefix(d, "/") || strings.HasPrefix(d, "../") || d == ".." || site.IsHidden(d) {
			return fmt.Errorf("serve: reload %q: not a folder path inside the tree", d)
		}
	}
	if len(dirs) > 0 {
		s.changedUnder(dirs)
	}
	return nil
}

package exporter

import (
	"errors"
	"fmt"
	"time"

	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/exporter/render"
	"github.com/guidepub/guidepub/exporter/write"
	"github.com/guidepub/guidepub/site"
)

// GuideResult is the outcome of exporting or removing one bundle.
type GuideResult struct {
	Folder, GuideID string
	Revision        string // site.GuideRecord.Revision
	Changed         bool   // some published byte (public or private) changed
	Ready           bool   // default view ready: site.EventPath written
	// NextChange is when to export the guide again: the earliest future
	// expiresAt of its views, or now when it has Quick siblings to
	// finish (a second or more later when their finishing gave way to
	// an upload: giveway.go); zero if never.
	NextChange time.Time
	Views      int   // views published (the alias not counted)
	Written    int   // files written
	Unchanged  int   // files already up to date
	Deleted    int   // files deleted
	Bytes      int64 // bytes written
	// Quick is how many public compressed siblings were written with
	// quick settings (Config.QuickSiblings), or are still quick when
	// their finishing gave way: the next export replaces them.
	Quick int
	// Recompressed is true when the export replaced quick siblings, or
	// some of them before it gave way, and the guide's revision is the
	// one it had: its documents and media are as they were, only their
	// compressed bytes changed.
	Recompressed bool
	// Changes are the public files this export wrote or removed, in
	// the order it did so, all of them even when it failed or stopped
	// half-way: what a live publisher sends to the bucket.
	// Exporter.ExportAllEach hands them out and leaves them out of its
	// report.
	Changes []FileChange
	Err     error // *bundle.Error when rejected; an I/O error otherwise
}

// FileChange is one public file an export wrote or removed (Path
// relative to Config.OutDir).
type FileChange = write.FileChange

// ChangedIDs returns the public ids (view ids and aliases: the public
// tree's top-level folders, site.PublicIDOf) under which r wrote or
// removed a file, each once, in the order of r.Changes.
func (r *GuideResult) ChangedIDs() []string {
	ids := []string{}
	seen := map[string]bool{}
	for _, c := range r.Changes {
		if id := site.PublicIDOf(c.Path); !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids
}

// Guide returns the guide's id ("" for a bundle that did not say one)
// and its bundle folder.
func (r GuideResult) Guide() (id, folder string) { return r.GuideID, r.Folder }

// ChangedFiles returns the paths of r.Changes: the public files the
// export wrote or removed, in the order it did so.
func (r GuideResult) ChangedFiles() []string {
	out := make([]string, len(r.Changes))
	for i, c := range r.Changes {
		out[i] = c.Path
	}
	return out
}

// addCounts adds what writing or removing files did to r.
func (r *GuideResult) addCounts(c write.Counts) {
	r.Written += c.Written
	r.Unchanged += c.Unchanged
	r.Deleted += c.Deleted
	r.Bytes += c.Bytes
	r.Changes = append(r.Changes, c.Changes...)
}

// Report sums up an ExportAll run.
type Report struct {
	Guides                                       []GuideResult // by folder name
	Views, Written, Unchanged, Deleted, Rejected int
	Bytes                                        int64
	Duration                                     time.Duration
}

// Summary returns one line: guides exported and views, files written,
// unchanged and deleted, guides removed, bundles rejected, bytes written
// and seconds taken.
func (r *Report) Summary() string {
	exported, removed, failed := 0, 0, 0
	for _, g := range r.Guides {
		switch {
		case g.Err != nil:
			failed++
		case g.Views == 0:
			removed++
		default:
			exported++
		}
	}
	s := fmt.Sprintf("exported %d guides, %d views: %d files written, %d unchanged, %d deleted; %d guides removed, %d rejected",
		exported, r.Views, r.Written, r.Unchanged, r.Deleted, removed, r.Rejected)
	if other := failed - r.Rejected; other > 0 {
		s += fmt.Sprintf(", %d failed", other)
	}
	return s + fmt.Sprintf("; %s written in %.2fs", render.FormatBytes(r.Bytes), r.Duration.Seconds())
}

func (r *Report) add(g GuideResult) {
	r.Guides = append(r.Guides, g)
	var be *bundle.Error
	if errors.As(g.Err, &be) {
		r.Rejected++
	}
	r.Views += g.Views
	r.Written += g.Written
	r.Unchanged += g.Unchanged
	r.Deleted += g.Deleted
	r.Bytes += g.Bytes
}

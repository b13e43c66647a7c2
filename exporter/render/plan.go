package render

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/exporter/media"
	"github.com/guidepub/guidepub/site"
)

// URLs are the public hosts documents link to (see
// docs/documents.md#base-addresses).
type URLs struct {
	View, Unbranded, Embed, Base string
}

// Settings are what the plan of a guide depends on besides its bundle
// and the time.
type Settings struct {
	URLs URLs
	// SourceName is the autofill ...Source value of every measure.
	SourceName string
	// Limits bound the size of one rendered file (DocumentBytes; zero
	// reads as its default, bundle.DefaultLimits).
	Limits bundle.Limits
}

// Plan is everything the export of one guide publishes: each file with
// its bytes, or the bundle file it is made from.
type Plan struct {
	// Files are in the order of their stages (Stage), the order in
	// which they are written: each view's public media, documents and
	// pages in the guide's default language, then its statuses (the
	// default view first); then the pages in the other languages; then the
	// private media and the ready event. Nothing names a file before it
	// is there, and a view's status, once it says ready, finds every
	// document, page and media file its documents link. The guide's
	// record is not among them: it names the revision, known once the
	// files are written (Record).
	Files []File
	// Shared are the files of the whole tree that the guide's pages link
	// (the stylesheet): no guide's, in no record, written before Files.
	Shared     []File
	IDs        []string  // public top-level folders: view ids and alias (PublicIDs)
	Ready      bool      // the default view is ready: the ready event is among Files
	Views      int       // views published (the alias not counted)
	NextChange time.Time // earliest future expiresAt of its views (zero if none)
	// Visibility is the digest of what decides which kinds of files and
	// fields each view shows (see Visibility), kept in the guide's record.
	Visibility string
}

// File is one file the export of a guide publishes.
type File struct {
	Private bool   // in the private tree, else the public one
	Path    string // slash-separated, relative to the tree
	Data    []byte // content, or nil for a copy of Src
	Src     string // bundle file to copy when Data is nil
	Doc     bool   // a document: written with compressed siblings
	// Format, for a public image or PDF, is its format: it is stripped
	// of private metadata rather than copied (docs/output.md#images).
	Format media.Format
	Width  int // a rendition of Src this wide (media.Renditions)
	// Stage orders the writes: every file of a stage is in place before
	// any file of a later stage is written (see Plan.Files). The files of
	// view n of the plan (the default view is 0) are at
	// StageView+n*StagesPerView, its statuses at
	// StageStatus+n*StagesPerView.
	Stage int
}

// The stages of the files of a view (see File.Stage).
const (
	StageView     = 0 // media, documents, pages in the default language
	StageStatus   = 1 // the view's status (and the alias's)
	StagesPerView = 2
)

// Guide returns the plan of the loaded bundle b at now: every document,
// page and media file of each view (and the alias), the ready event and
// the private media it links to. It reads nothing but b and s (media are
// named, not read). It returns a *bundle.Error when a rendered file is
// larger than s.Limits allows, and an error when the guide has no
// default view, a document cannot be rendered or the hide table refuses
// a public file (CheckPublic).
func Guide(b *bundle.Bundle, s Settings, now time.Time) (*Plan, error) {
	g := &b.Guide
	def := g.DefaultView()
	if def == nil {
		return nil, fmt.Errorf("guide %s has no default view", g.GuideID)
	}
	r := &renderer{g: g, media: b.Media, urls: s.URLs, sourceName: s.SourceName, now: now}
	p := &Plan{IDs: g.PublicIDs(), Views: len(g.Views), Visibility: Visibility(g, now)}
	public, err := r.views(b, s, p)
	if err != nil {
		return nil, err
	}
	p.Files = public
	if err := CheckPublic(g, now, p.Files); err != nil {
		return nil, fmt.Errorf("guide %s: %w", g.GuideID, err)
	}
	if p.Shared, err = SharedFiles(); err != nil {
		return nil, err
	}
	if ViewStatus(g, def, now) == site.StatusReady {
		p.Ready = true
		ev, priv := r.event(def)
		data, err := MarshalJSON(ev)
		if err != nil {
			return nil, fmt.Errorf("render event: %w", err)
		}
		last := p.Files[len(p.Files)-1].Stage + 1
		for _, m := range priv {
			p.Files = append(p.Files, mediaFile(b, site.PrivateDocPath(g.GuideID, m.Dst), m, true))
		}
		p.Files = append(p.Files, File{Private: true, Path: site.EventPath(g.GuideID), Data: data})
		stage(p.Files[len(public):], last)
	}
	// The record is written after the others, with a revision of fixed
	// length.
	rec, err := MarshalJSON(Record(g, strings.Repeat("0", RevisionLen), p.Ready))
	if err != nil {
		return nil, fmt.Errorf("render record: %w", err)
	}
	private := append(p.Files[len(public):len(p.Files):len(p.Files)], File{Private: true, Path: site.RecordPath(g.GuideID), Data: rec})
	if problems := tooLarge(b.Folder, s.Limits, private); len(problems) > 0 {
		return nil, &bundle.Error{Folder: b.Folder, Problems: problems}
	}
	return p, nil
}

// views renders the documents, pages and media of every view of b (and
// of the alias) and sets p.NextChange. It returns the public files in the
// order of their stages (see Stage): the default view first, then the
// others in the bundle's order.
func (r *renderer) views(b *bundle.Bundle, s Settings, p *Plan) ([]File, error) {
	g, now := r.g, r.now
	def := g.DefaultView()
	var chunks [][]File // each view's files up to its statuses, the default view's first
	var later []File    // pages in other languages than the default
	for i := range g.Views {
		v := &g.Views[i]
		vd, err := r.renderView(v)
		if err != nil {
			return nil, fmt.Errorf("render view %s: %w", v.ViewID, err)
		}
		var media, docs, statuses []File
		for _, m := range vd.Media {
			media = append(media, mediaFile(b, site.MediaFile(v.ViewID, m.Dst), m, false))
		}
		ids := []string{v.ViewID}
		if v == def && g.Alias != "" && g.Alias != v.ViewID {
			// The alias serves the default view's documents; they link to
			// the view's own media, so the alias needs no media copies.
			ids = append(ids, g.Alias)
		}
		for _, id := range ids {
			for _, name := range site.Documents {
				if data, ok := vd.Docs[name]; ok {
					f := File{Path: site.ViewFile(id, name), Data: data, Doc: true}
					if name == site.StatusFile {
						statuses = append(statuses, f)
					} else {
						docs = append(docs, f)
					}
				}
			}
		}
		pages, otherPages, err := r.renderPages(&vd.built, ids)
		if err != nil {
			return nil, fmt.Errorf("render view %s: %w", v.ViewID, err)
		}
		docs = append(docs, pages...)
		// Checked view by view, so that a huge guide is rejected after
		// rendering one view, not all of them.
		if problems := tooLarge(b.Folder, s.Limits, slices.Concat(docs, statuses, otherPages)); len(problems) > 0 {
			return nil, &bundle.Error{Folder: b.Folder, Problems: problems}
		}
		chunk := slices.Concat(stage(media, StageView), stage(docs, StageView), stage(statuses, StageStatus))
		if v == def {
			chunks = slices.Insert(chunks, 0, chunk)
		} else {
			chunks = append(chunks, chunk)
		}
		later = append(later, otherPages...)
		if v.ExpiresAt != nil && !v.Locked && v.ExpiresAt.After(now) &&
			(p.NextChange.IsZero() || v.ExpiresAt.Before(p.NextChange)) {
			p.NextChange = *v.ExpiresAt
		}
	}
	var out []File
	for n, chunk := range chunks {
		for _, f := range chunk {
			f.Stage += n * StagesPerView
			out = append(out, f)
		}
	}
	return append(out, stage(later, len(chunks)*StagesPerView)...), nil
}

// stage returns files with Stage set to n.
func stage(files []File, n int) []File {
	for i := range files {
		files[i].Stage = n
	}
	return files
}

// tooLarge returns a problem for every file of files, rendered for the
// bundle in folder, larger than the limit of one file
// (Limits.DocumentBytes): documents, view pages, the ready event, the
// record. Media (no data: copies of the bundle's files) are not held to it.
func tooLarge(folder string, lim bundle.Limits, files []File) []bundle.Problem {
	max := lim.WithDefaults().DocumentBytes
	var problems []bundle.Problem
	for _, f := range files {
		if f.Data == nil || len(f.Data) <= max {
			continue
		}
		name := f.Path
		if f.Private {
			name += " (private)"
		}
		problems = append(problems, bundle.Problem{File: folder + "/" + bundle.FileName,
			Message: fmt.Sprintf("the file %s would be %s, more than the limit of %s for one file (raise it with --max-document-size)",
				name, FormatBytes(int64(len(f.Data))), FormatBytes(int64(max)))})
	}
	return problems
}

// Status returns what b's result says without rendering anything: whether
// its default view is ready at now, and the earliest future expiry of its
// views (zero if none), when it must be exported again.
func Status(b *bundle.Bundle, now time.Time) (ready bool, next time.Time) {
	g := &b.Guide
	if def := g.DefaultView(); def != nil {
		ready = ViewStatus(g, def, now) == site.StatusReady
	}
	for _, v := range g.Views {
		if v.ExpiresAt != nil && !v.Locked && v.ExpiresAt.After(now) && (next.IsZero() || v.ExpiresAt.Before(next)) {
			next = *v.ExpiresAt
		}
	}
	return ready, next
}

// NamedFiles lists every file guide.json names, sorted, once each: the
// inputs of its plan besides guide.json.
func NamedFiles(g *bundle.Guide) []string {
	var out []string
	for _, p := range g.Media.Photos {
		out = append(out, p.File)
		if p.Small != nil {
			out = append(out, p.Small.File)
		}
	}
	if bi := g.Media.BannerImage; bi != nil {
		out = append(out, bi.File)
	}
	for _, lang := range sortedKeys(g.Media.Documents) {
		d := g.Media.Documents[lang]
		out = append(out, d.Files()...)
	}
	for _, v := range g.Views {
		for _, d := range v.Plans {
			out = append(out, d.Files()...)
		}
	}
	out = slices.DeleteFunc(out, func(s string) bool { return s == "" })
	slices.Sort(out)
	return slices.Compact(out)
}

// RevisionLen is the length of a revision (hex SHA-256).
const RevisionLen = 64

// Record returns the private site.GuideRecord of g at revision.
func Record(g *bundle.Guide, revision string, ready bool) site.GuideRecord {
	webhooks := g.Webhooks
	if webhooks == nil {
		webhooks = []site.Webhook{}
	}
	viewIDs := make([]string, len(g.Views))
	for i, v := range g.Views {
		viewIDs[i] = v.ViewID
	}
	return site.GuideRecord{GuideID: g.GuideID, OwnerID: g.OwnerID, WorkOrderID: g.WorkOrderID, Alias: g.Alias,
		DefaultViewID: g.DefaultView().ViewID, ViewIDs: viewIDs, Revision: revision, Ready: ready, Webhooks: webhooks}
}

// FormatBytes prints n with a binary unit ("512 B", "1.5 KiB").
func FormatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

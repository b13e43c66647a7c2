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
	// Files are in the order they are written: public media, documents
	// and pages, private media, the ready event (nothing names a file
	// before it is there). The guide's record is not among them: it
	// names the revision, known once the files are written (Record).
	Files []File
	// Shared are the files of the whole tree that the guide's pages link
	// (the stylesheet): no guide's, in no record, written before Files.
	Shared     []File
	IDs        []string  // public top-level folders: view ids and alias (PublicIDs)
	Ready      bool      // the default view is ready: the ready event is among Files
	Views      int       // views published (the alias not counted)
	NextChange time.Time // earliest future expiresAt of its views (zero if none)
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
}

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
	p := &Plan{IDs: PublicIDs(g), Views: len(g.Views)}
	mediaFiles, docs, err := r.views(b, s, p)
	if err != nil {
		return nil, err
	}
	p.Files = append(mediaFiles, docs...)
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
		for _, m := range priv {
			p.Files = append(p.Files, mediaFile(b, site.PrivateDocPath(g.GuideID, m.Dst), m, true))
		}
		p.Files = append(p.Files, File{Private: true, Path: site.EventPath(g.GuideID), Data: data})
	}
	// The record is written after the others, with a revision of fixed
	// length.
	rec, err := MarshalJSON(Record(g, strings.Repeat("0", RevisionLen), p.Ready))
	if err != nil {
		return nil, fmt.Errorf("render record: %w", err)
	}
	private := append(p.Files[len(mediaFiles)+len(docs):len(p.Files):len(p.Files)], File{Private: true, Path: site.RecordPath(g.GuideID), Data: rec})
	if problems := tooLarge(b.Folder, s.Limits, private); len(problems) > 0 {
		return nil, &bundle.Error{Folder: b.Folder, Problems: problems}
	}
	return p, nil
}

// views renders the documents, pages and media of every view of b (and
// of the alias) and sets p.NextChange.
func (r *renderer) views(b *bundle.Bundle, s Settings, p *Plan) (mediaFiles, docs []File, err error) {
	g, now := r.g, r.now
	def := g.DefaultView()
	addView := func(folder string, vd viewDocs, withMedia bool) {
		for _, name := range site.Documents {
			if data, ok := vd.Docs[name]; ok {
				docs = append(docs, File{Path: site.ViewFile(folder, name), Data: data, Doc: true})
			}
		}
		if withMedia {
			for _, m := range vd.Media {
				mediaFiles = append(mediaFiles, mediaFile(b, site.MediaFile(folder, m.Dst), m, false))
			}
		}
	}
	for i := range g.Views {
		v := &g.Views[i]
		first := len(docs)
		vd, err := r.renderView(v)
		if err != nil {
			return nil, nil, fmt.Errorf("render view %s: %w", v.ViewID, err)
		}
		addView(v.ViewID, vd, true)
		ids := []string{v.ViewID}
		if v == def && g.Alias != "" && g.Alias != v.ViewID {
			// The alias serves the default view's documents; they link to
			// the view's own media, so the alias needs no media copies.
			addView(g.Alias, vd, false)
			ids = append(ids, g.Alias)
		}
		pages, err := r.renderPages(&vd.built, ids)
		if err != nil {
			return nil, nil, fmt.Errorf("render view %s: %w", v.ViewID, err)
		}
		docs = append(docs, pages...)
		// Checked view by view, so that a huge guide is rejected after
		// rendering one view, not all of them.
		if problems := tooLarge(b.Folder, s.Limits, docs[first:]); len(problems) > 0 {
			return nil, nil, &bundle.Error{Folder: b.Folder, Problems: problems}
		}
		if v.ExpiresAt != nil && !v.Locked && v.ExpiresAt.After(now) &&
			(p.NextChange.IsZero() || v.ExpiresAt.Before(p.NextChange)) {
			p.NextChange = *v.ExpiresAt
		}
	}
	return mediaFiles, docs, nil
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

// PublicIDs returns the top-level public folders guide g claims: its view
// ids and its alias.
func PublicIDs(g *bundle.Guide) []string {
	ids := make([]string, 0, len(g.Views)+1)
	for _, v := range g.Views {
		ids = append(ids, v.ViewID)
	}
	if g.Alias != "" && !slices.Contains(ids, g.Alias) {
		ids = append(ids, g.Alias)
	}
	return ids
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

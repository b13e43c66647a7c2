package render

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/exporter/media"
	"github.com/guidepub/guidepub/site"
	"github.com/guidepub/guidepub/site/viewpage"
)

// joinURL appends the slash-separated path p to base.
func joinURL(base, p string) string { return strings.TrimRight(base, "/") + "/" + p }

// ViewStatus returns the status of view v of g at now (see docs/documents.md#statuses):
// locked when the view is locked or its expiry has passed, not-ready while
// the guide has no summary, ready otherwise.
func ViewStatus(g *bundle.Guide, v *bundle.View, now time.Time) string {
	switch {
	case v.Locked || (v.ExpiresAt != nil && !now.Before(*v.ExpiresAt)):
		return site.StatusLocked
	case g.Summary == nil:
		return site.StatusNotReady
	}
	return site.StatusReady
}

// MarshalJSON encodes v as UTF-8 JSON without HTML escaping, ending with
// exactly one newline. It returns an error only for values JSON cannot
// encode (NaN, infinities).
func MarshalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// autofillLanguage returns the language whose documents the autofill media
// records use: "en" when present, else the first of site.Languages present,
// else the first other key in sorted order, or "" when there are none.
func autofillLanguage(docs map[string]bundle.Documents) string {
	for _, l := range site.Languages {
		if _, ok := docs[l]; ok {
			return l
		}
	}
	keys := sortedKeys(docs)
	if len(keys) > 0 {
		return keys[0]
	}
	return ""
}

// languages returns the keys of docs: site.Languages order first, then any
// other key sorted.
func languages(docs map[string]bundle.Documents) []string {
	var out []string
	for _, l := range site.Languages {
		if _, ok := docs[l]; ok {
			out = append(out, l)
		}
	}
	known := map[string]bool{}
	for _, l := range site.Languages {
		known[l] = true
	}
	for _, k := range sortedKeys(docs) {
		if !known[k] {
			out = append(out, k)
		}
	}
	return out
}

// fileExt returns the lower-case extension of the bundle file rel, or "" if
// it has characters other than ASCII letters and digits (published names
// must be safe in URLs).
func fileExt(rel string) string {
	ext := strings.ToLower(path.Ext(rel))
	if len(ext) < 2 {
		return ""
	}
	for _, c := range ext[1:] {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return ""
		}
	}
	return ext
}

// Published names of media files, relative to a view's doc folder (public)
// or to the guide's private doc folder. They depend only on ids and keys,
// so a re-export with the same bundle gives the same names.

func langDocName(lang, key, src string) string { return lang + "/" + key + fileExt(src) }

func floorPageName(lang, key string, f bundle.FloorImage) string {
	return lang + "/" + key + "-" + strconv.Itoa(f.ID) + fileExt(f.File)
}

func photoName(p bundle.Photo) string { return "photos/" + p.ID + fileExt(p.File) }

func smallPhotoName(p bundle.Photo) string {
	return "photos/" + p.ID + "-small" + fileExt(p.Small.File)
}

// mediaCopy is a bundle file published under another name.
type mediaCopy struct {
	Dst string // relative to the view's (or the guide's private) doc folder
	Src string // relative to the bundle folder
	// Width is a rendition's width (see images.go), 0 for the file itself.
	Width int
}

// viewDocs is what one view publishes: documents by file name
// (site.StatusFile...) and media copies into its doc folder, with the
// built view they were rendered from, which its pages reuse.
type viewDocs struct {
	Docs  map[string][]byte
	Media []mediaCopy
	built builtView
}

// builtView is what the documents and pages of one view are rendered
// from, built once per view.
type builtView struct {
	v      *bundle.View
	status string
	// summary is the view's public summary: nil unless the view is ready
	// and shows its measurements.
	summary *site.Summary
	// autofill is the autofill document of a ready view, built even when
	// the document itself is hidden (the pages take their media from it),
	// and floorPages the JPEG floor pages it links to.
	autofill   site.AutofillDoc
	floorPages []mediaCopy
}

// renderer renders the documents of one guide.
type renderer struct {
	g          *bundle.Guide
	media      map[string]media.Info // the bundle's files, by path
	urls       URLs
	sourceName string
	now        time.Time
	// rendered holds the renditions of each view's images by the image's
	// URL, for its pages (see images.go).
	rendered map[string]map[string][]viewpage.Rendition
}

// buildView builds the summary and autofill of view v, when its status
// at r.now calls for them.
func (r *renderer) buildView(v *bundle.View) builtView {
	b := builtView{v: v, status: ViewStatus(r.g, v, r.now)}
	if b.status != site.StatusReady {
		return b
	}
	if !v.Hides(bundle.HideMeasurements) {
		b.summary = publicSummary(r.g.Summary, v.Hides(bundle.HideRoomDimensions))
	}
	b.autofill, b.floorPages = r.autofill(v)
	b.floorPages = sortCopies(append(b.floorPages, r.planPages(v)...))
	return b
}

// renderView returns the documents and media of view v, published under
// the folder id (v.ViewID, or the guide's alias for the default view).
// Documents always link to v.ViewID, so the alias copies are identical. A
// view that is not ready publishes its status and summary, both
// {"status": X}, and no other document or media (see
// docs/documents.md#statuses).
func (r *renderer) renderView(v *bundle.View) (viewDocs, error) {
	out := viewDocs{Docs: map[string][]byte{}, built: r.buildView(v)}
	ready := out.built.status == site.StatusReady
	for _, d := range site.ViewDocuments {
		if !site.Publishes(d.Kind, v.Hidden, ready, false) {
			continue
		}
		render, ok := viewRenderers[d.File]
		if !ok {
			return out, fmt.Errorf("no renderer for view document %s", d.File)
		}
		data, copies, err := render(&out.built)
		if err != nil {
			return out, fmt.Errorf("%s: %w", d.File, err)
		}
		if data != nil {
			out.Docs[d.File] = data
			out.Media = append(out.Media, copies...)
		}
	}
	if !ready {
		return out, nil
	}
	out.Media = append(out.Media, r.publicMedia(v)...)
	out.Media = sortCopies(out.Media)
	return out, nil
}

// viewRenderer renders one view document of the built view b and lists
// the media files it links to; nil data leaves the document out.
type viewRenderer func(b *builtView) (data []byte, copies []mediaCopy, err error)

// viewRenderers renders each of site.ViewDocuments, by file.
var viewRenderers = map[string]viewRenderer{
	site.StatusFile:   renderStatus,
	site.SummaryFile:  renderSummary,
	site.AutofillFile: renderAutofill,
}

func renderStatus(b *builtView) ([]byte, []mediaCopy, error) {
	data, err := MarshalJSON(site.StatusDoc{Status: b.status})
	return data, nil, err
}

// renderSummary renders the summary: the status alone for a view that is
// not ready, else with the measurements (room dimensions emptied when the
// view hides them).
func renderSummary(b *builtView) ([]byte, []mediaCopy, error) {
	if b.status != site.StatusReady {
		return renderStatus(b)
	}
	if b.summary == nil {
		return nil, nil, errors.New("no summary: the view hides its measurements")
	}
	data, err := MarshalJSON(site.SummaryDoc{Status: b.status, Summary: b.summary})
	return data, nil, err
}

// renderAutofill renders the autofill document of a ready view, with the
// JPEG floor pages it links to; a view that is not ready has none.
func renderAutofill(b *builtView) ([]byte, []mediaCopy, error) {
	if b.status != site.StatusReady {
		return nil, nil, nil
	}
	data, err := MarshalJSON(b.autofill)
	return data, b.floorPages, err
}

// publicMedia lists the public media files view v may show, as the hide
// table allows (docs/output.md#the-hide-table): per language the public
// single-file document kinds; every photo, its small copy and its
// renditions; the banner image (banner.go).
func (r *renderer) publicMedia(v *bundle.View) []mediaCopy {
	var out []mediaCopy
	add := func(kind site.FileKind, dst, src string) {
		if src != "" && site.Shows(kind, v.Hidden) {
			out = append(out, mediaCopy{Dst: dst, Src: src})
		}
	}
	docs := r.g.ViewDocuments(v)
	for _, lang := range languages(docs) {
		d := docs[lang]
		for _, k := range site.DocumentKinds {
			if !k.FloorPages {
				add(site.DocumentFile(k.Key), langDocName(lang, k.Key, d.File(k.Key)), d.File(k.Key))
			}
		}
	}
	for _, p := range r.g.Media.Photos {
		add(site.FilePhoto, photoName(p), p.File)
		if p.Small != nil {
			add(site.FilePhotoSmall, smallPhotoName(p), p.Small.File)
		}
		copies, _ := r.renditions(v, site.FilePhoto, photoName(p), p.File)
		out = append(out, copies...)
	}
	return append(out, r.bannerMedia(v)...)
}

// sortCopies sorts media copies by destination and drops duplicate
// destinations (the first source wins), so the list is deterministic
// whatever order produced it.
func sortCopies(m []mediaCopy) []mediaCopy {
	slices.SortStableFunc(m, func(a, b mediaCopy) int { return strings.Compare(a.Dst, b.Dst) })
	return slices.CompactFunc(m, func(a, b mediaCopy) bool { return a.Dst == b.Dst })
}

// sortedKeys returns the keys of m in sorted order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

package render

import (
	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/exporter/media"
	"github.com/guidepub/guidepub/site"
	"github.com/guidepub/guidepub/site/viewpage"
)

// Images: what the exporter publishes of a bundle's images beyond the
// files themselves (see docs/output.md#images). Public images are
// stripped of private metadata; photos and floor pages get renditions.

// fileInfo returns what the bundle file src holds, as checked when the
// bundle loaded.
func (r *renderer) fileInfo(src string) media.Info { return r.media[src] }

// mediaType returns the autofill MediaType of the bundle file src: its
// format as the file shows it.
func (r *renderer) mediaType(src string) string { return string(r.fileInfo(src).Format) }

// renditions returns the renditions of the bundle image src published as
// dst, a file of kind of, in view v: their copies (to publish) and their
// records (for the view's pages), ascending width, none for an image no
// wider than the smallest rendition, or whose kind has no renditions the
// view shows (docs/output.md#the-hide-table).
func (r *renderer) renditions(v *bundle.View, of site.FileKind, dst, src string) ([]mediaCopy, []viewpage.Rendition) {
	info := r.fileInfo(src)
	row, _ := site.PublicFileByKind(of)
	if !info.Format.IsImage() || !site.Shows(row.Renditions, v.Hidden) {
		return nil, nil
	}
	viewID := v.ViewID
	var copies []mediaCopy
	var recs []viewpage.Rendition
	for _, w := range media.RenditionWidths(info.Width) {
		name := site.RenditionFile(dst, w)
		copies = append(copies, mediaCopy{Dst: name, Src: src, Width: w})
		recs = append(recs, viewpage.Rendition{URL: joinURL(r.urls.View, site.MediaFile(viewID, name)),
			Width: w, Height: media.RenditionHeight(info.Width, info.Height, w)})
	}
	return copies, recs
}

// addRenditions records the renditions of the image published at url for
// view viewID's pages.
func (r *renderer) addRenditions(viewID, url string, recs []viewpage.Rendition) {
	if len(recs) == 0 {
		return
	}
	if r.rendered == nil {
		r.rendered = map[string]map[string][]viewpage.Rendition{}
	}
	if r.rendered[viewID] == nil {
		r.rendered[viewID] = map[string][]viewpage.Rendition{}
	}
	r.rendered[viewID][url] = recs
}

// mediaFile returns the File publishing the media copy m of bundle b at
// p: a public image or PDF is stripped of its metadata, a rendition made;
// other files are copied as they are.
func mediaFile(b *bundle.Bundle, p string, m mediaCopy, private bool) File {
	f := File{Private: private, Path: p, Src: m.Src, Width: m.Width}
	if info := b.Media[m.Src]; !private && (info.Format.IsImage() || info.Format == media.PDF) {
		f.Format = info.Format
	}
	return f
}

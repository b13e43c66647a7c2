package exporter

import (
	"fmt"

	"github.com/guidepub/guidepub/site"
	"github.com/guidepub/guidepub/site/viewpage"
)

// renderPages renders the branded, unbranded and embedded pages of the
// built view b for the top-level ids (the view id, and the alias of the
// default view): the same pages, stored under each id's paths, all naming
// the view's own URLs (see docs/pages.md). Pages are built from the
// summary and autofill the view's documents were rendered from, so what a
// view hides is absent from them too.
func (r *renderer) renderPages(b *builtView, ids []string) ([]outFile, error) {
	v, status := b.v, b.status
	// The summary is nil unless the view is ready and shows its
	// measurements. The autofill object gives the pages the media URLs and
	// sizes, even when the autofill document itself is hidden; the pages
	// leave out what the view hides.
	d := viewpage.Docs{Status: status, Summary: b.summary}
	if len(b.autofill.Value) == 1 {
		d.Autofill = &b.autofill.Value[0]
	}
	prop := r.g.Property
	in := viewpage.FromDocs(d, viewpage.Extra{
		ViewID: v.ViewID, Units: viewUnits(r.g, v), Hidden: v.Hidden,
		Expired:  status == site.StatusLocked && !v.Locked,
		Property: &prop, Banner: r.g.Banner,
		BrandedURL:   joinURL(r.urls.View, v.ViewID),
		UnbrandedURL: joinURL(r.urls.Unbranded, v.ViewID),
		EmbedURL:     joinURL(r.urls.Embed, v.ViewID),
		Renditions:   r.rendered[v.ViewID],
	})
	var out []outFile
	for i, k := range viewpage.Kinds {
		data, err := viewpage.Render(k, &in)
		if err != nil {
			return nil, fmt.Errorf("page %s: %w", k, err)
		}
		for _, id := range ids {
			out = append(out, outFile{path: site.PagePaths(id)[i], data: data, doc: true})
		}
	}
	return out, nil
}

package render

import (
	"fmt"

	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/site"
	"github.com/guidepub/guidepub/site/viewpage"
)

// renderPages renders the branded, unbranded and embedded pages of the
// built view b for the top-level ids (the view id, and the alias of the
// default view): the same pages, stored under each id's paths, all naming
// the view's own URLs (see docs/pages.md). Pages are built from the
// summary and autofill the view's documents were rendered from, so what a
// view hides is absent from them too. It returns the pages in the
// guide's default language (def) apart from those in its other languages
// (other), which the documents do not link: they are written after the
// statuses (Stage).
func (r *renderer) renderPages(b *builtView, ids []string) (def, other []File, err error) {
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
	// Before Renditions is read: it records the banner image's renditions.
	bannerImage := r.bannerImage(v)
	in := viewpage.FromDocs(d, viewpage.Extra{
		ViewID: v.ViewID, Units: viewUnits(r.g, v), Hidden: v.Hidden,
		Expired:  status == site.StatusLocked && !v.Locked,
		Property: &prop, Banner: r.g.Banner, BannerImage: bannerImage,
		BrandedURL:   joinURL(r.urls.View, v.ViewID),
		UnbrandedURL: joinURL(r.urls.Unbranded, v.ViewID),
		EmbedURL:     joinURL(r.urls.Embed, v.ViewID),
		Languages:    languages(r.g.Media.Documents),
		Default:      r.g.DefaultLanguage,
		Documents:    r.pageDocuments(v),
		Renditions:   r.rendered[v.ViewID],
	})
	for _, lang := range in.Languages {
		for i, k := range viewpage.Kinds {
			data, err := viewpage.Render(k, &in, lang)
			if err != nil {
				return nil, nil, fmt.Errorf("page %s (%s): %w", k, lang, err)
			}
			for _, id := range ids {
				if lang == in.Default() {
					def = append(def, File{Path: site.PagePaths(id)[i], Data: data, Doc: true})
				} else {
					other = append(other, File{Path: site.LanguagePagePaths(id, lang)[i], Data: data, Doc: true})
				}
			}
		}
	}
	return def, other, nil
}

// pageDocuments lists the floor plan documents view v publishes, in every
// language, with their public URLs: the PDFs (see publicMedia) and the JPEG
// floor pages (see planPages). FromDocs drops what the view hides.
func (r *renderer) pageDocuments(v *bundle.View) []viewpage.LanguageDocs {
	docURL := func(rel string) string { return joinURL(r.urls.View, site.MediaFile(v.ViewID, rel)) }
	var out []viewpage.LanguageDocs
	docs := r.g.ViewDocuments(v)
	for _, lang := range languages(docs) {
		d := docs[lang]
		ld := viewpage.LanguageDocs{Lang: lang}
		for _, k := range floorPlanKinds() {
			if !k.FloorPages {
				if src := d.File(k.Key); src != "" {
					ld.PDFs = append(ld.PDFs, viewpage.PDF{Units: k.Units, URL: docURL(langDocName(lang, k.Key, src))})
				}
				continue
			}
			for _, f := range d.FloorImages(k.Key) {
				ld.Pages = append(ld.Pages, viewpage.PlanPage{Units: k.Units, FloorID: f.ID, Floor: f.FloorName, URL: docURL(floorPageName(lang, k.Key, f)), Width: f.Width, Height: f.Height})
			}
		}
		out = append(out, ld)
	}
	return out
}

// planPages lists the JPEG floor pages of every language for view v: the
// pages show them (a page in a language without plan pages shows another
// language's). They are published with the autofill document, which lists
// those of its own language: the hide table removes them with the
// autofill or the floor plans.
func (r *renderer) planPages(v *bundle.View) []mediaCopy {
	if !site.Shows(site.FileFloorPage, v.Hidden) {
		return nil
	}
	var out []mediaCopy
	docs := r.g.ViewDocuments(v)
	for _, lang := range languages(docs) {
		d := docs[lang]
		for _, k := range floorPlanKinds() {
			if k.FloorPages {
				for _, f := range d.FloorImages(k.Key) {
					out = append(out, mediaCopy{Dst: floorPageName(lang, k.Key, f), Src: f.File})
				}
			}
		}
	}
	return out
}

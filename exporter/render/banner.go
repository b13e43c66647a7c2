package render

import (
	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/site"
	"github.com/guidepub/guidepub/site/viewpage"
)

// The banner image (media.bannerImage: the agent's photo or the
// brokerage's logo) is a public file kind of its own: published in every
// ready view's doc folder like a photo (stripped of its metadata, with
// renditions when it is wide enough), shown on the branded page only
// (never on the unbranded or embedded page, which follow MLS rules; see
// docs/pages.md), and removed by no hidden feature: a view shows its
// guide's banner whatever it hides (its row of the hide table,
// site.FileBannerImage).

// bannerName is the published name of the banner image img, relative to
// a view's doc folder.
func bannerName(img *bundle.Image) string { return "banner" + fileExt(img.File) }

// bannerMedia lists the copies of the guide's banner image for view v:
// the image and its renditions; none when the guide has no banner image.
func (r *renderer) bannerMedia(v *bundle.View) []mediaCopy {
	img := r.g.Media.BannerImage
	if img == nil || r.g.Banner == nil || !site.Shows(site.FileBannerImage, v.Hidden) {
		return nil
	}
	copies, _ := r.renditions(v, site.FileBannerImage, bannerName(img), img.File)
	return append([]mediaCopy{{Dst: bannerName(img), Src: img.File}}, copies...)
}

// bannerImage returns the banner image as the pages of view v show it,
// with its renditions recorded for srcset; nil when the guide has none.
func (r *renderer) bannerImage(v *bundle.View) *viewpage.Rendition {
	img := r.g.Media.BannerImage
	if img == nil || r.g.Banner == nil || !site.Shows(site.FileBannerImage, v.Hidden) {
		return nil
	}
	url := joinURL(r.urls.View, site.MediaFile(v.ViewID, bannerName(img)))
	_, recs := r.renditions(v, site.FileBannerImage, bannerName(img), img.File)
	r.addRenditions(v.ViewID, url, recs)
	return &viewpage.Rendition{URL: url, Width: img.Width, Height: img.Height}
}

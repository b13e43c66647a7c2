package render

import (
	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/site"
)

// privateFile is a media file of the private tree: a bundle file copied to
// site.PrivateDocPath(guideID, Dst).
type privateFile = mediaCopy

// event returns the ready event of the guide (see docs/documents.md#ready-event) and the
// private documents it links to. def is the default view, whose public doc
// folder holds the public documents; a public document the default view
// hides is published privately instead, so the event stays complete while
// the view shows nothing it hides.
func (r *renderer) event(def *bundle.View) (site.ReadyEvent, []privateFile) {
	g := r.g
	var priv []privateFile
	// A public document the default view publishes as it is is linked
	// there; one it hides, or replaces by its own plans, is published
	// privately.
	pub := func(key, dst, src string) string {
		if src == "" {
			return ""
		}
		if !site.Shows(site.DocumentFile(key), def.Hidden) || def.Plans != nil && site.IsPlanKind(key) {
			priv = append(priv, privateFile{Dst: dst, Src: src})
			return site.PrivateURL(r.urls.View, g.GuideID, dst)
		}
		return joinURL(r.urls.View, site.MediaFile(def.ViewID, dst))
	}
	private := func(dst, src string) string {
		if src == "" {
			return ""
		}
		priv = append(priv, privateFile{Dst: dst, Src: src})
		return site.PrivateURL(r.urls.View, g.GuideID, dst)
	}
	floors := func(lang, key string, fs []bundle.FloorImage) []site.FloorImage {
		var out []site.FloorImage
		for _, f := range fs {
			out = append(out, site.FloorImage{ID: f.ID, FloorName: f.FloorName, URL: private(floorPageName(lang, key, f), f.File)})
		}
		return out
	}
	mediaURLs := map[string]site.MediaURLs{}
	for _, lang := range languages(g.Media.Documents) {
		d := g.Media.Documents[lang]
		name := func(key, src string) string { return langDocName(lang, key, src) }
		var urls site.MediaURLs
		for _, k := range site.DocumentKinds {
			switch {
			case k.FloorPages:
				urls.SetFloors(k.Key, floors(lang, k.Key, d.FloorImages(k.Key)))
			case k.Public:
				urls.SetURL(k.Key, pub(k.Key, name(k.Key, d.File(k.Key)), d.File(k.Key)))
			default:
				urls.SetURL(k.Key, private(name(k.Key, d.File(k.Key)), d.File(k.Key)))
			}
		}
		mediaURLs[lang] = urls
	}
	guideType := g.Package
	if guideType == "" {
		guideType = "standard"
	}
	addons := append([]string{}, g.Addons...)
	bi := site.BillingInfo{GuideType: guideType, Package: g.Package, Addons: addons}
	if g.BillableArea != nil {
		ft, m := g.BillableArea.SqFeet, g.BillableArea.SqMeters
		bi.BillableAreaSqFeet, bi.BillableAreaSqMeters = &ft, &m
	}
	ev := site.ReadyEvent{
		Type:          site.EventReady,
		GuideID:       g.GuideID,
		DefaultViewID: def.ViewID,
		GuideAlias:    g.Alias,
		WorkOrderID:   g.WorkOrderID,
		URLs: site.URLs{
			PublicURL:    joinURL(r.urls.View, def.ViewID),
			UnbrandedURL: joinURL(r.urls.Unbranded, def.ViewID),
			EmbeddedURL:  joinURL(r.urls.Embed, def.ViewID),
			ManageURL:    joinURL(r.urls.Base, "guides/"+g.GuideID),
			MediaURLs:    mediaURLs,
		},
		Property:    g.Property,
		Summary:     publicSummary(g.Summary, false),
		BillingInfo: bi,
		Banner:      g.Banner,
	}
	priv = sortCopies(priv)
	return ev, priv
}

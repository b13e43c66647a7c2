package viewpage

import (
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/guidepub/guidepub/site"
)

// Kind is one of the three pages of a view.
type Kind int

// The pages of a view.
const (
	Branded Kind = iota
	Unbranded
	Embedded
)

// Kinds lists every Kind.
var Kinds = []Kind{Branded, Unbranded, Embedded}

// String returns the kind's name: "branded", "unbranded" or "embedded".
func (k Kind) String() string {
	switch k {
	case Branded:
		return "branded"
	case Unbranded:
		return "unbranded"
	case Embedded:
		return "embedded"
	}
	return "kind" + strconv.Itoa(int(k))
}

// Hidden features a view may list (package site's); a hidden feature is
// left out of every page.
const (
	HideMeasurements   = site.HideMeasurements
	HideRoomDimensions = site.HideRoomDimensions
	HideAddress        = site.HideAddress
	HideFloorPlans     = site.HideFloorPlans
	HidePhotos         = site.HidePhotos
	HideVideo          = site.HideVideo
	HideAutofill       = site.HideAutofill
)

// Units systems (package site's).
const (
	Imperial = site.UnitsImperial
	Metric   = site.UnitsMetric
)

// Docs are the view's already rendered public documents.
type Docs struct {
	// Status is the view's status (site.StatusReady...).
	Status string
	// Summary is the summary of data/summary, nil when it is hidden.
	Summary *site.Summary
	// Autofill is the view's autofill object. The exporter builds it even
	// when the autofill document itself is hidden; its Media records give
	// the page the published photo URLs and sizes and the video.
	Autofill *site.Autofill
}

// Extra is what a page needs that the documents lack.
type Extra struct {
	ViewID string
	// Units is Imperial or Metric: the system shown first.
	Units  string
	Hidden []string
	// Expired tells a locked view that expired from one locked by hand.
	Expired  bool
	Property *site.Property
	Banner   *site.Banner
	// BannerImage is the agent's photo or logo as published (nil for
	// none): shown beside the banner on the branded page only, never on
	// the unbranded or embedded page (docs/pages.md#mls-rules).
	BannerImage *Rendition
	// BrandedURL, UnbrandedURL and EmbedURL are the absolute URLs of the
	// view's three pages in the default language; a page in another
	// language adds "/<lang>" (site.LanguagePagePaths).
	BrandedURL, UnbrandedURL, EmbedURL string
	// Languages are the languages the guide has documents in; pages are
	// rendered in each of them that has a catalogue (PageLanguages).
	// Default is the one served at the URLs above ("" picks the first of
	// Languages with a catalogue, English first).
	Languages []string
	Default   string
	// Documents are the guide's published floor plan documents in every
	// language, in the order of Languages.
	Documents  []LanguageDocs
	Renditions map[string][]Rendition // by the image's published URL (as in the autofill's Media records), ascending width
}

// LanguageDocs are the published floor plan documents of one language.
type LanguageDocs struct {
	Lang string
	// PDFs are the floor plan PDFs (Units is Imperial or Metric).
	PDFs []PDF
	// Pages are the JPEG floor plan pages, one per floor and unit system.
	// They are published with the autofill document, so a view hiding it
	// shows none.
	Pages []PlanPage
}

// PDF is one published floor plan PDF.
type PDF struct{ Units, URL string }

// PlanPage is one published floor plan page image.
type PlanPage struct {
	Units string
	// FloorID and Floor are the id and the name of the floor it draws;
	// the page shows the plan beside that floor's rooms.
	FloorID       int
	Floor         string
	URL           string
	Width, Height int
}

// Input is everything one view's pages show, with hidden features already
// removed. Build it with FromDocs.
type Input struct {
	ViewID                             string
	Status                             string
	Expired                            bool
	Units                              string
	BrandedURL, UnbrandedURL, EmbedURL string
	// Languages are the page languages, the default first.
	Languages []string
	// Hidden are the features the view hides: their data is already gone
	// from the other fields, and the pages' words (alt text, title,
	// description) follow them too, never saying what is not shown.
	Hidden  []string
	Address *Address
	Geo     *site.Location
	// Summary holds the measurements (mm and mm²), nil when they are
	// hidden; room dimensions are gone when those are hidden.
	Summary    *site.Summary
	Documents  []LanguageDocs
	Photos     []Photo
	Video      string
	Banner     *Banner
	Renditions map[string][]Rendition
}

// Address is the property's postal address.
type Address struct {
	Full, Street, City, Region, PostalCode, Country string
}

// Link is a labelled URL.
type Link struct{ Label, URL string }

// Photo is one gallery photo: the small rendition shown, the full one linked.
type Photo struct {
	URL                     string
	Width, Height           int
	ThumbURL                string
	ThumbWidth, ThumbHeight int
	Preferred               bool
}

// Banner is the agent banner with its links checked.
type Banner struct {
	Name, Title, Company string
	Phones               []Phone
	Emails               []string
	// Website and Social URLs are http or https; anything else is kept as
	// text only (WebsiteText).
	Website     string
	WebsiteText string
	Social      []Link
	// Image is the agent's photo or logo, nil for none; only the branded
	// page shows it.
	Image *Rendition
}

// Phone is a labelled number and its tel: digits.
type Phone struct{ Label, Number, Dial string }

func hides(hidden []string, f string) bool { return slices.Contains(hidden, f) }

// pageLanguages returns the languages of langs that have a catalogue,
// def first (def itself when it has one), or DefaultLanguage alone.
func pageLanguages(langs []string, def string) []string {
	var out []string
	for _, l := range langs {
		if slices.Contains(PageLanguages, l) && !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	if !slices.Contains(PageLanguages, def) {
		def = ""
		if slices.Contains(out, DefaultLanguage) {
			def = DefaultLanguage
		} else if len(out) > 0 {
			def = out[0]
		} else {
			def = DefaultLanguage
		}
	}
	out = slices.DeleteFunc(out, func(l string) bool { return l == def })
	return append([]string{def}, out...)
}

// FromDocs builds the pages' input from the view's documents and extras,
// dropping every hidden feature.
func FromDocs(d Docs, e Extra) Input {
	in := Input{
		ViewID: e.ViewID, Status: d.Status, Expired: e.Expired, Units: e.Units,
		BrandedURL: e.BrandedURL, UnbrandedURL: e.UnbrandedURL, EmbedURL: e.EmbedURL,
		Languages: pageLanguages(e.Languages, e.Default),
	}
	if in.Units != Metric {
		in.Units = Imperial
	}
	if d.Status != site.StatusReady {
		return in
	}
	h := e.Hidden
	in.Hidden = slices.Clone(h)
	if e.Property != nil && !hides(h, HideAddress) {
		p := e.Property
		street := strings.TrimSpace(p.StreetNumber + " " + p.StreetName)
		if unit := deref(p.Unit); unit != "" {
			street = unit + "-" + street
		}
		in.Address = &Address{Full: p.FullAddress, Street: street, City: p.City, Region: p.StateProvince, PostalCode: p.PostalCode, Country: p.Country}
		if p.Location != nil {
			loc := *p.Location
			in.Geo = &loc
		}
	}
	if d.Summary != nil && !hides(h, HideMeasurements) {
		in.Summary = d.Summary
		if hides(h, HideRoomDimensions) {
			in.Summary = withoutDims(d.Summary)
		}
	}
	// Files are linked as the hide table allows (site.PublicFiles).
	for _, ld := range e.Documents {
		out := LanguageDocs{Lang: ld.Lang}
		for _, p := range ld.PDFs {
			if httpURL(p.URL) && site.Shows(pdfKind(p.Units), h) {
				out.PDFs = append(out.PDFs, p)
			}
		}
		for _, p := range ld.Pages {
			if httpURL(p.URL) && site.Shows(site.FileFloorPage, h) {
				out.Pages = append(out.Pages, p)
			}
		}
		if len(out.PDFs)+len(out.Pages) > 0 {
			in.Documents = append(in.Documents, out)
		}
	}
	if d.Autofill != nil {
		media(&in, d.Autofill.Media, h)
	}
	if len(e.Renditions) > 0 {
		in.Renditions = e.Renditions
	}
	if e.Banner != nil {
		in.Banner = banner(e.Banner)
		if bi := e.BannerImage; bi != nil && httpURL(bi.URL) && bi.Width > 0 && bi.Height > 0 {
			in.Banner.Image = bi
		}
	}
	return in
}

// pdfKind returns the public file kind of the floor plan PDF in units, ""
// (never shown) for other units.
func pdfKind(units string) site.FileKind {
	for _, k := range site.DocumentKinds {
		if k.Public && !k.FloorPages && k.Units != "" && k.Units == units {
			return site.DocumentFile(k.Key)
		}
	}
	return ""
}

// withoutDims returns a copy of s with every room's dimensions removed.
func withoutDims(s *site.Summary) *site.Summary {
	c := *s
	c.Buildings = slices.Clone(s.Buildings)
	for i := range c.Buildings {
		b := &c.Buildings[i]
		b.Floors = slices.Clone(b.Floors)
		for j := range b.Floors {
			f := &b.Floors[j]
			f.Rooms = slices.Clone(f.Rooms)
			for k := range f.Rooms {
				f.Rooms[k].Dims = nil
			}
		}
	}
	return &c
}

func media(in *Input, ms []site.Media, h []string) {
	byID := map[string]int{}
	for _, m := range ms {
		switch m.MediaCategory {
		case site.MediaPhoto:
			if !site.Shows(site.FilePhoto, h) || !httpURL(m.MediaURL) {
				continue
			}
			pref := m.PreferredPhotoYN != nil && *m.PreferredPhotoYN
			i, ok := byID[m.MediaObjectID]
			if !ok || m.MediaObjectID == "" {
				byID[m.MediaObjectID] = len(in.Photos)
				in.Photos = append(in.Photos, Photo{URL: m.MediaURL, Width: m.ImageWidth, Height: m.ImageHeight, ThumbURL: m.MediaURL, ThumbWidth: m.ImageWidth, ThumbHeight: m.ImageHeight, Preferred: pref})
				continue
			}
			p := &in.Photos[i]
			if m.ImageWidth*m.ImageHeight < p.ThumbWidth*p.ThumbHeight {
				p.ThumbURL, p.ThumbWidth, p.ThumbHeight = m.MediaURL, m.ImageWidth, m.ImageHeight
			} else {
				p.URL, p.Width, p.Height = m.MediaURL, m.ImageWidth, m.ImageHeight
			}
		case site.MediaVideo:
			if !hides(h, HideVideo) && httpURL(m.MediaURL) {
				in.Video = m.MediaURL
			}
		}
	}
	slices.SortStableFunc(in.Photos, func(a, b Photo) int {
		switch {
		case a.Preferred == b.Preferred:
			return 0
		case a.Preferred:
			return -1
		}
		return 1
	})
}

// httpURL reports whether s is an absolute http or https URL.
func httpURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// deref returns *s, or "" for a field the bundle left out.
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func banner(b *site.Banner) *Banner {
	out := &Banner{Name: b.FullName, Title: deref(b.Title), Company: deref(b.Company), Emails: b.Emails}
	for _, p := range b.Phones {
		var dial strings.Builder
		for i, c := range p.Number {
			if (c >= '0' && c <= '9') || (c == '+' && i == 0) {
				dial.WriteRune(c)
			}
		}
		out.Phones = append(out.Phones, Phone{Label: p.Label, Number: p.Number, Dial: dial.String()})
	}
	if website := deref(b.Website); httpURL(website) {
		out.Website = website
	} else {
		out.WebsiteText = website
	}
	for _, s := range b.SocialLinks {
		if httpURL(s.Link) {
			out.Social = append(out.Social, Link{Label: s.Label, URL: s.Link})
		}
	}
	return out
}

// nbsp keeps a number with its unit on one line.
const nbsp = "\u00a0"

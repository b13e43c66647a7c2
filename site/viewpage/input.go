package viewpage

import (
	"math"
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
	// the page the published media URLs and sizes.
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
	// BrandedURL, UnbrandedURL and EmbedURL are the absolute URLs of the
	// view's three pages.
	BrandedURL, UnbrandedURL, EmbedURL string
	Renditions                         map[string][]Rendition // by the image's published URL (as in the autofill's Media records), ascending width
}

// Input is everything one view's pages show, with hidden features already
// removed. Build it with FromDocs.
type Input struct {
	ViewID                             string
	Status                             string
	Expired                            bool
	Units                              string
	BrandedURL, UnbrandedURL, EmbedURL string
	Address                            *Address
	Geo                                *site.Location
	Standard                           string
	// Systems holds the measurements in the view's units first, then the
	// other system; empty when measurements are hidden.
	Systems    []System
	FloorPlans []FloorPlan
	PDFs       []Link
	Photos     []Photo
	Video      string
	Banner     *Banner
}

// Address is the property's postal address.
type Address struct {
	Full, Street, City, Region, PostalCode, Country string
}

// System is the measurements in one unit system.
type System struct {
	Units     string // Imperial or Metric
	Label     string // "Imperial (ft, sq ft)"
	AreaUnit  string
	LenUnit   string
	Buildings []Building
	// Total is the interior area of all buildings, "" when unknown.
	Total string
}

// Building is one building's areas and floors.
type Building struct {
	Name     string
	Measures []Measure
	Floors   []Floor
}

// Floor is one floor's areas and rooms.
type Floor struct {
	Name     string
	Measures []Measure
	Rooms    []Room
}

// Measure is one labelled, formatted value.
type Measure struct{ Label, Value string }

// Room is one row of a room table.
type Room struct {
	Name, Type, Dims, Area string
}

// FloorPlan is one floor plan page image.
type FloorPlan struct {
	Units         string
	Name          string
	URL           string
	Width, Height int
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
}

// Phone is a labelled number and its tel: digits.
type Phone struct{ Label, Number, Dial string }

// Conversion factors from mm and mm2.
const (
	mm2PerSqFoot  = 92903.04
	mm2PerSqMeter = 1e6
	mmPerFoot     = 304.8
	mmPerMeter    = 1000
)

func hides(hidden []string, f string) bool { return slices.Contains(hidden, f) }

// FromDocs builds the pages' input from the view's documents and extras,
// dropping every hidden feature.
func FromDocs(d Docs, e Extra) Input {
	in := Input{
		ViewID: e.ViewID, Status: d.Status, Expired: e.Expired, Units: e.Units,
		BrandedURL: e.BrandedURL, UnbrandedURL: e.UnbrandedURL, EmbedURL: e.EmbedURL,
	}
	if in.Units != Metric {
		in.Units = Imperial
	}
	if d.Status != site.StatusReady {
		return in
	}
	h := e.Hidden
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
		in.Standard = strings.ToUpper(d.Summary.MeasurementStandard)
		other := Metric
		if in.Units == Metric {
			other = Imperial
		}
		for _, u := range []string{in.Units, other} {
			in.Systems = append(in.Systems, system(d.Summary, u, hides(h, HideRoomDimensions)))
		}
	}
	if d.Autofill != nil {
		media(&in, d.Autofill.Media, h)
	}
	if e.Banner != nil {
		in.Banner = banner(e.Banner)
	}
	return in
}

func media(in *Input, ms []site.Media, h []string) {
	byID := map[string]int{}
	for _, m := range ms {
		switch m.MediaCategory {
		case site.MediaFloorPlan:
			if hides(h, HideFloorPlans) || !httpURL(m.MediaURL) {
				continue
			}
			units, _, _ := strings.Cut(m.ShortDescription, " ")
			if m.MediaType == "pdf" {
				in.PDFs = append(in.PDFs, Link{Label: units, URL: m.MediaURL})
				continue
			}
			if hides(h, HideAutofill) {
				// The floor plan pages are published with the autofill
				// document only; the PDFs stay.
				continue
			}
			n := len(in.FloorPlans) + 1
			if _, id, ok := strings.Cut(m.MediaObjectID, "-"); ok {
				if i, err := strconv.Atoi(id); err == nil {
					n = i
				}
			}
			in.FloorPlans = append(in.FloorPlans, FloorPlan{Units: units, Name: "Page " + strconv.Itoa(n), URL: m.MediaURL, Width: m.ImageWidth, Height: m.ImageHeight})
		case site.MediaPhoto:
			if hides(h, HidePhotos) || !httpURL(m.MediaURL) {
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

func system(s *site.Summary, units string, hideDims bool) System {
	sys := System{Units: units, AreaUnit: "sq ft", LenUnit: "ft", Label: "Imperial (ft, sq ft)"}
	areaF, lenF := mm2PerSqFoot, mmPerFoot
	if units == Metric {
		sys.AreaUnit, sys.LenUnit, sys.Label = "m²", "m", "Metric (m, m²)"
		areaF, lenF = mm2PerSqMeter, mmPerMeter
	}
	area := func(v float64) string { return num(round2(v/areaF)) + nbsp + sys.AreaUnit }
	length := func(v float64) string { return num(round2(v/lenF)) + nbsp + sys.LenUnit }
	add := func(ms *[]Measure, label string, v *float64, f func(float64) string) {
		if v != nil {
			*ms = append(*ms, Measure{label, f(*v)})
		}
	}
	total, haveTotal := 0.0, false
	for _, b := range s.Buildings {
		bb := Building{Name: b.Name}
		add(&bb.Measures, "Interior area, above grade", b.IntAreaAboveGrade, area)
		add(&bb.Measures, "Interior area, total", b.IntAreaTotal, area)
		add(&bb.Measures, "Exterior area, above grade", b.ExtAreaAboveGrade, area)
		add(&bb.Measures, "Exterior area, total", b.ExtAreaTotal, area)
		add(&bb.Measures, "Finished area, above grade", b.FinishedAreaAboveGrade, area)
		add(&bb.Measures, "Finished area, below grade", b.FinishedAreaBelowGrade, area)
		add(&bb.Measures, "Finished area, total", b.FinishedAreaTotal, area)
		add(&bb.Measures, "Unfinished area, above grade", b.UnfinishedAreaAboveGrade, area)
		add(&bb.Measures, "Unfinished area, below grade", b.UnfinishedAreaBelowGrade, area)
		add(&bb.Measures, "Unfinished area, total", b.UnfinishedAreaTotal, area)
		add(&bb.Measures, "Excluded area, above grade", b.ExcludedAreaAboveGrade, area)
		add(&bb.Measures, "Excluded area, total", b.ExcludedAreaTotal, area)
		add(&bb.Measures, "Wall thickness", b.WallThickness, length)
		if b.IntAreaTotal != nil {
			total += *b.IntAreaTotal
			haveTotal = true
		}
		for _, f := range b.Floors {
			ff := Floor{Name: f.Name}
			add(&ff.Measures, "Interior area", f.InteriorArea, area)
			add(&ff.Measures, "Exterior area", f.ExteriorArea, area)
			add(&ff.Measures, "Finished area", f.FinishedArea, area)
			add(&ff.Measures, "Unfinished area", f.UnfinishedArea, area)
			add(&ff.Measures, "Excluded area", f.ExcludedArea, area)
			add(&ff.Measures, "Perimeter", f.Perimeter, length)
			for _, r := range f.Rooms {
				rr := Room{Name: r.Name, Type: r.Type, Area: area(r.Area)}
				if !hideDims && len(r.Dims) == 2 {
					rr.Dims = num(round2(r.Dims[0]/lenF)) + nbsp + "×" + nbsp + num(round2(r.Dims[1]/lenF)) + nbsp + sys.LenUnit
				}
				ff.Rooms = append(ff.Rooms, rr)
			}
			bb.Floors = append(bb.Floors, ff)
		}
		sys.Buildings = append(sys.Buildings, bb)
	}
	if haveTotal {
		sys.Total = area(total)
	}
	return sys
}

// nbsp keeps a number with its unit on one line.
const nbsp = "\u00a0"

// num formats x as the autofill document prints it (shortest form).
func num(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

// round2 rounds x half away from zero to 2 decimals on its shortest
// decimal form, exactly as the autofill document rounds.
func round2(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	s := strconv.FormatFloat(x, 'f', -1, 64)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	intPart, frac, _ := strings.Cut(s, ".")
	if len(frac) <= 2 {
		return x
	}
	digits := []byte(intPart + frac[:2])
	if frac[2] >= '5' {
		i := len(digits) - 1
		for ; i >= 0; i-- {
			if digits[i] == '9' {
				digits[i] = '0'
				continue
			}
			digits[i]++
			break
		}
		if i < 0 {
			digits = append([]byte{'1'}, digits...)
		}
	}
	n := len(digits)
	out := string(digits[:n-2]) + "." + string(digits[n-2:])
	if neg {
		out = "-" + out
	}
	v, err := strconv.ParseFloat(out, 64)
	if err != nil || v == 0 {
		return 0
	}
	return v
}

package viewpage

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/guidepub/guidepub/site"
)

// ContentType is the media type of every page.
const ContentType = "text/html; charset=utf-8"

//go:embed page.css
var css []byte

// Stylesheet returns a copy of the style sheet every view page links (its
// screen and print rules): the bytes to publish at StylesheetPath. The 404
// page keeps its own inline style, so that it needs no other file.
func Stylesheet() []byte { return bytes.Clone(css) }

// StylesheetPath is where the pages expect Stylesheet, relative to the
// public tree (and to the view URL): a name made of a hash of its bytes
// (site.StylesheetPath), so that it can be cached for good and a new
// style sheet never meets the pages of an old one.
var StylesheetPath = site.StylesheetPath(css)

//go:embed page.html
var pageHTML string

var tmpl = template.Must(template.New("viewpage").Funcs(template.FuncMap{
	"notFoundCSS": func() template.CSS { return notFoundCSS },
	"floorOf":     func(p *page, f floorView) floorData { return floorData{P: p, F: f} },
}).Parse(pageHTML))

// floorData is what the floor template gets: the page (its printer) and
// the floor.
type floorData struct {
	P *page
	F floorView
}

// notFoundCSS is the style of the 404 page: short, so that the page fits
// in one nginx configuration string (4 KB).
const notFoundCSS template.CSS = `body{margin:0;font:1rem/1.5 system-ui,sans-serif;color:#1b1f24}main{max-width:40rem;margin:4rem auto;padding:1rem}h1{font-size:1.6rem}h2{font-size:1.1rem;margin:1.5rem 0 0}p{margin:.25rem 0}`

// NotFoundCSP is the Content-Security-Policy of the 404 page.
var NotFoundCSP = func() string {
	sum := sha256.Sum256([]byte(notFoundCSS))
	return "default-src 'none'; img-src data:; style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
}()

// NotFound is the page a browser gets for a path that names nothing
// (404): one short message in every page language, English first, sent
// with NotFoundCSP. Servers send it to requests that accept text/html and
// keep the JSON body for the others.
var NotFound = func() []byte {
	var ps []printer
	for _, l := range PageLanguages {
		ps = append(ps, newPrinter(l))
	}
	var buf bytes.Buffer
	if err := tmpl.ExecuteTemplate(&buf, "notfound", ps); err != nil {
		panic("viewpage: not-found page: " + err.Error())
	}
	return buf.Bytes()
}()

// CSP returns the Content-Security-Policy to send with a page of kind k.
// mediaOrigin is the origin the view's media are served from (the origin
// of the branded view URL, for example "https://view.example.com"); "" when
// it is the page's own. Pages run no script, load only the stylesheet of
// their own origin (StylesheetPath) and images (data: only for the empty
// favicon, so browsers do not ask for /favicon.ico), and only the
// unbranded and embedded pages may be framed (docs/pages.md).
// connect-src 'self' lets crawlers that fetch /robots.txt from the page's
// context (Lighthouse does) read it; with no script it opens nothing else.
func CSP(k Kind, mediaOrigin string) string {
	img := "'self'"
	if mediaOrigin != "" {
		img += " " + mediaOrigin
	}
	fa := "*"
	if k == Branded {
		fa = "'none'"
	}
	return "default-src 'none'; img-src " + img + " data:; style-src 'self'" +
		"; script-src 'none'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors " + fa
}

// FrameOptions returns the X-Frame-Options value for kind k: "DENY" for
// the branded page, "" (send no header) for the unbranded page (which the
// autofill's Unbranded Virtual Tour record frames) and the embedded page
// (which the Branded Virtual Tour record frames).
func FrameOptions(k Kind) string {
	if k == Branded {
		return "DENY"
	}
	return ""
}

// Ready reports whether the view's data is shown.
func (in *Input) Ready() bool { return in.Status == site.StatusReady }

// Default returns the default page language: the one served at the
// view's page URLs without a language segment.
func (in *Input) Default() string {
	if len(in.Languages) == 0 {
		return DefaultLanguage
	}
	return in.Languages[0]
}

// StylesheetURL returns the URL of the pages' stylesheet: StylesheetPath
// below the view URL (BrandedURL without its view id), where the export
// publishes it with the view's documents; pages link it by path on their
// own origin, as they link the view's media.
func (in *Input) StylesheetURL() string {
	base, ok := strings.CutSuffix(in.BrandedURL, "/"+in.ViewID)
	if !ok || in.ViewID == "" {
		base = ""
	}
	return base + "/" + StylesheetPath
}

// PageURL returns the absolute URL of the page of kind k in language lang:
// the kind's URL for the default language, with "/<lang>" added for the
// others (see docs/pages.md#languages).
func (in *Input) PageURL(k Kind, lang string) string {
	u := in.BrandedURL
	switch k {
	case Unbranded:
		u = in.UnbrandedURL
	case Embedded:
		u = in.EmbedURL
	}
	if lang == in.Default() {
		return u
	}
	return strings.TrimRight(u, "/") + "/" + lang
}

// page is the template's data.
type page struct {
	printer
	Kind Kind
	In   *Input
	// StyleHref is the link to the stylesheet, a path on the page's own
	// origin (Input.StylesheetURL).
	StyleHref   string
	Title       string
	Heading     string
	Description string
	Message     string
	NoIndex     bool
	OG          bool
	URL         string
	Canonical   string
	Alternates  []alternate
	Image       *Photo
	Hero        *photoView
	JSONLD      template.JS
	MapURL      string
	Video       string
	Banner      *Banner
	// BannerImage is the agent's photo or logo: on the branded page only.
	BannerImage *img
	FullGuide   string
	Facts       string
	Headline    *figure
	headlineMM2 float64
	Others      []figure
	Standard    string
	Units       [2]string // the labels of the primary and secondary systems
	Plans       []planView
	PlanLinks   []Link
	linkUnits   string
	PDFs        []Link
	Buildings   []buildingView
	// Floors are the floors shown in the floor plan section, each beside
	// its plan (arrangeFloors); empty when the view shows no plan page,
	// and the floors stay in their Buildings.
	Floors []floorView
	Photos []photoView
}

// alternate is the page in another language.
type alternate struct {
	Lang, Name, URL string
	Current         bool
}

// figure is a measure in both unit systems: the view's first.
type figure struct{ Label, Value, Other string }

type planView struct {
	FloorID          int
	Floor, Alt, Href string
	Img              img
	// First is the first plan of the page: loaded at once, with priority.
	First bool
}

// img is an <img>'s source attributes.
type img struct {
	Src, SrcSet, Sizes string
	Width, Height      int
}

type buildingView struct {
	Name     string
	Measures []figure
	Floors   []floorView
}

type floorView struct {
	ID       int
	Name     string
	Measures []figure
	Rooms    []roomView
	// N numbers the floor's heading; Level is its heading level (3 or 4).
	N, Level int
	// Building is the name of the building the floor starts, when the
	// floor plan section shows several buildings.
	Building string
	Plan     *planView
}

type roomView struct {
	Name, Type string
	Dims       figure
	Area       figure
}

type photoView struct {
	ID, Alt, Href string
	Thumb, Full   img
}

// Render returns the page of kind k in language lang for the view in
// (lang one of in.Languages; any other renders the default). The bytes
// depend only on k, lang and in.
func Render(k Kind, in *Input, lang string) ([]byte, error) {
	if !slices.Contains(in.Languages, lang) {
		lang = in.Default()
	}
	p := page{printer: newPrinter(lang), Kind: k, In: in, NoIndex: k != Branded}
	if k != Branded && k != Unbranded && k != Embedded {
		return nil, fmt.Errorf("view page %s: unknown kind %d", in.ViewID, k)
	}
	p.URL = in.PageURL(k, lang)
	p.StyleHref = p.Local(in.StylesheetURL())
	if len(in.Languages) > 1 {
		for _, l := range in.Languages {
			p.Alternates = append(p.Alternates, alternate{Lang: l, Name: LanguageName(l), URL: in.PageURL(k, l), Current: l == lang})
		}
	}
	if !in.Ready() {
		p.NoIndex = true
		p.Title = p.T("notAvailableTitle")
		switch {
		case in.Status == site.StatusNotReady:
			p.Title = p.T("notReadyTitle")
			p.Heading = p.T("notReadyHeading")
			p.Message = p.T("notReadyMessage")
		case in.Expired:
			p.Heading = p.T("expiredHeading")
			p.Message = p.T("expiredMessage")
		default:
			p.Heading = p.T("lockedHeading")
			p.Message = p.T("lockedMessage")
		}
		return execute(&p, in.ViewID, k)
	}
	p.Heading = p.T("guide")
	place := ""
	if a := in.Address; a != nil {
		place = a.Full
		if place == "" {
			place = a.Street
		}
		if place != "" {
			p.Heading = place
		}
	}
	p.measurements()
	p.plans(lang)
	p.arrangeFloors()
	p.photos(place)
	p.Facts = p.facts()
	p.describe(place)
	if len(in.Photos) > 0 {
		p.Image = &in.Photos[0]
	}
	p.agent()
	if k == Embedded {
		p.FullGuide = in.PageURL(Branded, lang)
	}
	p.OG = k != Embedded
	if k == Branded {
		p.Canonical = p.URL
		ld, err := jsonLD(in, p.URL, p.Headline != nil, p.headlineMM2)
		if err != nil {
			return nil, fmt.Errorf("view page %s: %w", in.ViewID, err)
		}
		p.JSONLD = ld
	}
	return execute(&p, in.ViewID, k)
}

// describe sets the page's title and description: words naming floor
// plans, measurements and room dimensions only when the view shows them,
// the place when there is one, the headline area.
func (p *page) describe(place string) {
	in := p.In
	title := in.words("title", HideMeasurements, HideFloorPlans)
	p.Title = p.T(title, p.Heading)
	if place == "" && title != "title" {
		p.Title = p.Heading // not "Property guide – property guide"
	}
	description := in.words("description", HideMeasurements, HideRoomDimensions, HideFloorPlans)
	if place != "" {
		p.Description = p.T(description, place)
	} else {
		p.Description = p.T(description + "NoAddress")
	}
	if h := p.Headline; h != nil {
		p.Description += " " + h.Label + ": " + h.Value + "."
	}
}

// words returns the message id of words that name what the features
// claims are: id itself, or its plain form (id + "Plain") when the view
// hides one of them, so that no page says it shows what the view hides.
func (in *Input) words(id string, claims ...string) string {
	for _, f := range claims {
		if hides(in.Hidden, f) {
			return id + "Plain"
		}
	}
	return id
}

// agent sets what the branded and embedded pages add: the agent banner
// (with the banner image on the branded page only), the video and the
// map. The unbranded page is what an MLS shows and frames: no agent, no
// video, no map, no way out of the page's origin (docs/pages.md).
func (p *page) agent() {
	in := p.In
	if p.Kind == Unbranded {
		return
	}
	p.Banner = in.Banner
	if bi := in.Banner; p.Kind == Branded && bi != nil && bi.Image != nil {
		// At most 10rem wide, 3.5rem high, beside the agent's name.
		im := p.image(bi.Image.URL, bi.Image.Width, bi.Image.Height, "10rem")
		p.BannerImage = &im
	}
	p.Video = in.Video
	if in.Geo != nil {
		lat := strconv.FormatFloat(in.Geo.Lat, 'f', -1, 64)
		lng := strconv.FormatFloat(in.Geo.Lng, 'f', -1, 64)
		p.MapURL = "https://www.openstreetmap.org/?mlat=" + url.QueryEscape(lat) + "&mlon=" + url.QueryEscape(lng) + "#map=18/" + lat + "/" + lng
	}
}

// facts returns the line under the headline areas: the number of rooms
// and of photos.
func (p *page) facts() string {
	var facts []string
	if rooms := roomCount(p.In.Summary); rooms > 0 {
		facts = append(facts, p.count("rooms", rooms))
	}
	if len(p.In.Photos) > 0 {
		facts = append(facts, p.count("photos", len(p.In.Photos)))
	}
	return strings.Join(facts, " · ")
}

// count returns "n things" from the message id ("rooms"), or its
// singular form (id + ".one") for one thing.
func (p *page) count(id string, n int) string {
	if n == 1 {
		return p.T(id + ".one")
	}
	return p.T(id, n)
}

func roomCount(s *site.Summary) int {
	n := 0
	if s != nil {
		for _, b := range s.Buildings {
			for _, f := range b.Floors {
				n += len(f.Rooms)
			}
		}
	}
	return n
}

// systems returns the view's unit system and the other one.
func (p *page) systems() (string, string) {
	if p.In.Units == Metric {
		return Metric, Imperial
	}
	return Imperial, Metric
}

// both formats v (mm² when area, else mm) in both unit systems.
func (p *page) both(label string, v float64, area bool) figure {
	u1, u2 := p.systems()
	f := p.length
	if area {
		f = p.area
	}
	return figure{Label: label, Value: f(v, u1), Other: f(v, u2)}
}

// headlineField returns the summary field the headline shows for
// standard: finished area above grade (ANSI Z765), interior area (RMS and
// anything else).
func headlineField(standard string, b *site.Building) (string, *float64) {
	if strings.EqualFold(standard, "ansi") {
		return "headlineANSI", b.FinishedAreaAboveGrade
	}
	return "headlineRMS", b.IntAreaTotal
}

func (p *page) measurements() {
	s := p.In.Summary
	if s == nil {
		return
	}
	u1, u2 := p.systems()
	p.Units = [2]string{p.T(u1 + "Units"), p.T(u2 + "Units")}
	p.Standard = strings.ToUpper(s.MeasurementStandard)
	main := -1
	for i, b := range s.Buildings {
		if b.IsMainBuilding {
			main = i
			break
		}
	}
	if main < 0 && len(s.Buildings) > 0 {
		main = 0
	}
	for i := range s.Buildings {
		b := &s.Buildings[i]
		key, v := headlineField(s.MeasurementStandard, b)
		if v == nil {
			continue
		}
		if i == main {
			h := p.both(p.T(key), *v, true)
			p.Headline, p.headlineMM2 = &h, *v
		} else {
			p.Others = append(p.Others, p.both(b.Name, *v, true))
		}
	}
	for _, b := range s.Buildings {
		bv := buildingView{Name: b.Name}
		add := func(ms *[]figure, id string, v *float64, area bool) {
			if v != nil {
				*ms = append(*ms, p.both(p.T(id), *v, area))
			}
		}
		add(&bv.Measures, "intAreaAboveGrade", b.IntAreaAboveGrade, true)
		add(&bv.Measures, "intAreaTotal", b.IntAreaTotal, true)
		add(&bv.Measures, "extAreaAboveGrade", b.ExtAreaAboveGrade, true)
		add(&bv.Measures, "extAreaTotal", b.ExtAreaTotal, true)
		add(&bv.Measures, "finishedAreaAboveGrade", b.FinishedAreaAboveGrade, true)
		add(&bv.Measures, "finishedAreaBelowGrade", b.FinishedAreaBelowGrade, true)
		add(&bv.Measures, "finishedAreaTotal", b.FinishedAreaTotal, true)
		add(&bv.Measures, "unfinishedAreaAboveGrade", b.UnfinishedAreaAboveGrade, true)
		add(&bv.Measures, "unfinishedAreaBelowGrade", b.UnfinishedAreaBelowGrade, true)
		add(&bv.Measures, "unfinishedAreaTotal", b.UnfinishedAreaTotal, true)
		add(&bv.Measures, "excludedAreaAboveGrade", b.ExcludedAreaAboveGrade, true)
		add(&bv.Measures, "excludedAreaTotal", b.ExcludedAreaTotal, true)
		add(&bv.Measures, "wallThickness", b.WallThickness, false)
		for _, f := range b.Floors {
			fv := floorView{ID: f.ID, Name: f.Name}
			add(&fv.Measures, "interiorArea", f.InteriorArea, true)
			add(&fv.Measures, "exteriorArea", f.ExteriorArea, true)
			add(&fv.Measures, "finishedArea", f.FinishedArea, true)
			add(&fv.Measures, "unfinishedArea", f.UnfinishedArea, true)
			add(&fv.Measures, "excludedArea", f.ExcludedArea, true)
			add(&fv.Measures, "perimeter", f.Perimeter, false)
			for _, r := range f.Rooms {
				rv := roomView{Name: r.Name, Type: p.roomType(r.Type), Area: p.both("", r.Area, true)}
				if strings.EqualFold(rv.Type, r.Name) {
					rv.Type = "" // "Kitchen" needs no "Kitchen" under it
				}
				if len(r.Dims) == 2 {
					rv.Dims = figure{Value: p.dims(r.Dims[0], r.Dims[1], u1), Other: p.dims(r.Dims[0], r.Dims[1], u2)}
				}
				fv.Rooms = append(fv.Rooms, rv)
			}
			bv.Floors = append(bv.Floors, fv)
		}
		p.Buildings = append(p.Buildings, bv)
	}
}

// roomType returns the room type in words: the catalogue's name of a
// known type, the type split into words otherwise ("WalkInCloset" reads
// "Walk in closet").
func (p *page) roomType(t string) string {
	if t == "" {
		return ""
	}
	if s, ok := p.message("type." + t); ok {
		return s
	}
	var b strings.Builder
	for i, r := range t {
		if i > 0 && r >= 'A' && r <= 'Z' {
			b.WriteByte(' ')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// plans picks the floor plan pages to show in lang: those of the view's
// units in lang, else in the first language that has them, else those of
// the other units; one per floor, in the documents' order. Every PDF of
// every language is linked, labelled with its units and language.
func (p *page) plans(lang string) {
	docs := p.In.Documents
	u1, u2 := p.systems()
	pick := func(units string) ([]PlanPage, string) {
		order := slices.Clone(docs)
		slices.SortStableFunc(order, func(a, b LanguageDocs) int {
			switch {
			case a.Lang == b.Lang:
				return 0
			case a.Lang == lang:
				return -1
			case b.Lang == lang:
				return 1
			}
			return 0
		})
		for _, d := range order {
			var out []PlanPage
			for _, pg := range d.Pages {
				if pg.Units == units {
					out = append(out, pg)
				}
			}
			if len(out) > 0 {
				return out, d.Lang
			}
		}
		return nil, ""
	}
	shown, from := pick(u1)
	other := u2
	if shown == nil {
		shown, from = pick(u2)
		other = u1
	}
	for i, pg := range shown {
		// The plan is 3/5 of the page's width beside its rooms from 60rem
		// on (page.css).
		alt := p.In.words("planAlt", HideRoomDimensions, HideMeasurements)
		p.Plans = append(p.Plans, planView{FloorID: pg.FloorID, Floor: pg.Floor, Alt: p.T(alt, pg.Floor), Href: p.href(pg.URL), First: i == 0,
			Img: p.image(pg.URL, pg.Width, pg.Height, "(min-width: 72rem) 42rem, (min-width: 60rem) 58vw, calc(100vw - 2rem)")})
	}
	p.linkUnits = other
	if from != "" {
		for _, d := range docs {
			if d.Lang != from {
				continue
			}
			for _, pg := range d.Pages {
				if pg.Units == other {
					p.PlanLinks = append(p.PlanLinks, Link{Label: pg.Floor, URL: p.href(pg.URL)})
				}
			}
		}
	}
	for _, d := range docs {
		for _, pdf := range d.PDFs {
			p.PDFs = append(p.PDFs, Link{Label: p.T("pdfLabel", p.T("pdf."+pdf.Units), LanguageName(d.Lang)), URL: p.href(pdf.URL)})
		}
	}
}

// arrangeFloors puts each floor plan beside its floor's rooms. With plan
// pages, the floors leave their buildings for the floor plan section, in
// the summary's order, each with the plan of its id (or, failing that, of
// its name), the building's name heading its first floor when there are
// several buildings; plans of no floor of the summary (or of a view
// hiding its measurements) follow on their own. Without plan pages, the
// floors stay under their buildings in the measurements.
func (p *page) arrangeFloors() {
	n := 0
	next := func(f *floorView, level int) {
		f.N, f.Level = n, level
		n++
	}
	if len(p.Plans) == 0 {
		for i := range p.Buildings {
			for j := range p.Buildings[i].Floors {
				next(&p.Buildings[i].Floors[j], 4)
			}
		}
		return
	}
	used := make([]bool, len(p.Plans))
	find := func(f floorView) *planView {
		for _, byID := range []bool{true, false} {
			for i, pl := range p.Plans {
				if !used[i] && ((byID && pl.FloorID == f.ID) || (!byID && pl.Floor == f.Name)) {
					used[i] = true
					return &p.Plans[i]
				}
			}
		}
		return nil
	}
	many := len(p.Buildings) > 1
	for i := range p.Buildings {
		b := &p.Buildings[i]
		for j, f := range b.Floors {
			level := 3
			if many {
				level = 4
				if j == 0 {
					f.Building = b.Name
				}
			}
			next(&f, level)
			f.Plan = find(f)
			p.Floors = append(p.Floors, f)
		}
		b.Floors = nil
	}
	for i := range p.Plans {
		if !used[i] {
			f := floorView{Name: p.Plans[i].Floor, Plan: &p.Plans[i]}
			next(&f, 3)
			p.Floors = append(p.Floors, f)
		}
	}
}

// OtherUnits introduces the floor plan pages listed as links.
func (p *page) OtherUnits() string {
	return p.T("planOtherUnits", p.T(p.linkUnits))
}

// image returns the attributes of an <img> showing the published image u
// (w × h): with srcset and sizes when it has renditions. orig is the
// full-size published image a small copy u was made from (a photo's
// original, for its thumbnail and the top photo): its renditions count
// too, and it is itself the widest candidate, so a screen wider than every
// rendition (an 800 px top photo at 1280 px) shows the original rather than
// a rendition upscaled. A browser takes the narrowest candidate as wide as
// it draws the image, so a phone still gets a rendition when one is.
func (p *page) image(u string, w, h int, sizes string, orig ...Rendition) img {
	out := img{Src: p.Local(u), Width: w, Height: h}
	rs := slices.Clone(p.In.Renditions[u])
	for _, o := range orig {
		rs = append(rs, p.In.Renditions[o.URL]...)
	}
	if len(rs) == 0 {
		return out
	}
	rs = append(rs, Rendition{URL: u, Width: w, Height: h})
	rs = append(rs, orig...)
	slices.SortStableFunc(rs, func(a, b Rendition) int { return a.Width - b.Width })
	rs = slices.CompactFunc(rs, func(a, b Rendition) bool { return a.Width == b.Width })
	var set []string
	for _, r := range rs {
		set = append(set, p.Local(r.URL)+" "+strconv.Itoa(r.Width)+"w")
	}
	out.SrcSet, out.Sizes = strings.Join(set, ", "), sizes
	return out
}

func (p *page) photos(place string) {
	n := len(p.In.Photos)
	for i, ph := range p.In.Photos {
		alt := p.T("photoAltNoAddress", i+1, n)
		if place != "" {
			alt = p.T("photoAlt", i+1, n, place)
		}
		if i == 0 {
			if place != "" {
				alt = p.T("mainPhotoAlt", place)
			} else {
				alt = p.T("mainPhotoAltNoAddress")
			}
		}
		orig := Rendition{URL: ph.URL, Width: ph.Width, Height: ph.Height}
		v := photoView{ID: "photo-" + strconv.Itoa(i+1), Alt: alt, Href: p.href(ph.URL),
			Thumb: p.image(ph.ThumbURL, ph.ThumbWidth, ph.ThumbHeight, "(min-width: 72rem) 17rem, 50vw", orig),
			Full:  p.image(ph.URL, ph.Width, ph.Height, "100vw"),
		}
		if i == 0 {
			// The top photo is 18rem wide beside the address from 60rem
			// on, 6.5rem below (page.css).
			hero := v
			hero.Thumb = p.image(ph.ThumbURL, ph.ThumbWidth, ph.ThumbHeight, "(min-width: 60rem) 18rem, 6.5rem", orig)
			p.Hero = &hero
		}
		p.Photos = append(p.Photos, v)
	}
}

// href returns the link to the published file u: as it is on the branded
// page (so a printed page writes out where it is), and on the page's own
// origin on the others (see Local).
func (p *page) href(u string) string {
	if p.Kind == Branded {
		return u
	}
	return p.Local(u)
}

// Gallery is the photos of the photo section: all of them, the top
// photo first (beside the address it is a thumbnail).
func (p *page) Gallery() []photoView { return p.Photos }

// Local returns u as a path when it is on the origin of the page itself
// or of the view's branded URL (where the media are published): images
// and links then stay on whatever host name the page was opened by, and
// the unbranded page never points at another site. Every host serving
// pages serves the whole public tree (docs/pages.md#no-request-leaves-the-pages-origin).
// Other URLs are returned as they are.
func (p *page) Local(u string) string {
	for _, base := range []string{p.URL, p.In.BrandedURL} {
		pu, err := url.Parse(base)
		if err != nil || pu.Scheme == "" || pu.Host == "" {
			continue
		}
		if origin := pu.Scheme + "://" + pu.Host; strings.HasPrefix(u, origin+"/") {
			return u[len(origin):]
		}
	}
	return u
}

// Abs returns the absolute URL of u on the page's origin, for the
// Open Graph image of the unbranded page, which must not name the view host.
func (p *page) Abs(u string) string {
	l := p.Local(u)
	if !strings.HasPrefix(l, "/") {
		return u
	}
	pu, err := url.Parse(p.URL)
	if err != nil || pu.Host == "" {
		return u
	}
	return pu.Scheme + "://" + pu.Host + l
}

func execute(p *page, viewID string, k Kind) ([]byte, error) {
	var buf bytes.Buffer
	if err := tmpl.ExecuteTemplate(&buf, "page", p); err != nil {
		return nil, fmt.Errorf("view page %s (%s): %w", viewID, k, err)
	}
	return buf.Bytes(), nil
}

// jsonLD returns the schema.org description of the residence with only the
// data the view shows, or "" when it shows none. json.Marshal escapes <, >
// and &, so the text cannot end the script element.
func jsonLD(in *Input, pageURL string, haveArea bool, areaMM2 float64) (template.JS, error) {
	type postal struct {
		Type       string `json:"@type"`
		Street     string `json:"streetAddress,omitempty"`
		Locality   string `json:"addressLocality,omitempty"`
		Region     string `json:"addressRegion,omitempty"`
		PostalCode string `json:"postalCode,omitempty"`
		Country    string `json:"addressCountry,omitempty"`
	}
	type geo struct {
		Type string  `json:"@type"`
		Lat  float64 `json:"latitude"`
		Lng  float64 `json:"longitude"`
	}
	type qv struct {
		Type     string  `json:"@type"`
		Value    float64 `json:"value"`
		UnitCode string  `json:"unitCode"`
	}
	type residence struct {
		Context   string  `json:"@context"`
		Type      string  `json:"@type"`
		Name      string  `json:"name,omitempty"`
		URL       string  `json:"url,omitempty"`
		Address   *postal `json:"address,omitempty"`
		Geo       *geo    `json:"geo,omitempty"`
		FloorSize *qv     `json:"floorSize,omitempty"`
		Rooms     int     `json:"numberOfRooms,omitempty"`
		Image     string  `json:"image,omitempty"`
	}
	r := residence{Context: "https://schema.org", Type: "SingleFamilyResidence", URL: pageURL}
	shown := false
	if a := in.Address; a != nil {
		r.Name = a.Full
		r.Address = &postal{Type: "PostalAddress", Street: a.Street, Locality: a.City, Region: a.Region, PostalCode: a.PostalCode, Country: a.Country}
		shown = true
	}
	if in.Geo != nil {
		r.Geo = &geo{Type: "GeoCoordinates", Lat: in.Geo.Lat, Lng: in.Geo.Lng}
	}
	if haveArea {
		r.FloorSize = &qv{Type: "QuantitativeValue", Value: math.Round(areaMM2 / site.MM2PerSqFoot), UnitCode: "FTK"}
		if in.Units == Metric {
			r.FloorSize = &qv{Type: "QuantitativeValue", Value: site.Round2(areaMM2 / site.MM2PerSqMeter), UnitCode: "MTK"}
		}
	}
	if n := roomCount(in.Summary); n > 0 {
		r.Rooms = n
		shown = true
	}
	if len(in.Photos) > 0 {
		r.Image = in.Photos[0].URL
		shown = true
	}
	if !shown {
		return "", nil
	}
	b, err := json.Marshal(r)
	if err != nil {
		return "", fmt.Errorf("json-ld: %w", err)
	}
	return template.JS(b), nil
}

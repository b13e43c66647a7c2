package viewpage

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"net/url"
	"strconv"
	"strings"

	"github.com/guidepub/guidepub/site"
)

// ContentType is the media type of every page.
const ContentType = "text/html; charset=utf-8"

//go:embed page.css
var css string

//go:embed page.html
var pageHTML string

var tmpl = template.Must(template.New("viewpage").Funcs(template.FuncMap{
	"inc": func(i int) int { return i + 1 },
}).Parse(pageHTML))

// styleHash is the CSP source of the inline style sheet.
var styleHash = func() string {
	sum := sha256.Sum256([]byte(css))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}()

// CSP returns the Content-Security-Policy to send with a page of kind k.
// mediaOrigin is the origin the view's media are served from (the origin
// of the branded view URL, for example "https://view.example.com"); "" when
// it is the page's own. Pages run no script, load only their own inline
// style and images (data: only for the empty favicon, so browsers do not
// ask for /favicon.ico), and only the embedded page may be framed.
// connect-src 'self' lets crawlers that fetch /robots.txt from the page's
// context (Lighthouse does) read it; with no script it opens nothing else.
func CSP(k Kind, mediaOrigin string) string {
	img := "'self'"
	if mediaOrigin != "" {
		img += " " + mediaOrigin
	}
	fa := "'none'"
	if k == Embedded {
		fa = "*"
	}
	return "default-src 'none'; img-src " + img + " data:; style-src " + styleHash +
		"; script-src 'none'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors " + fa
}

// FrameOptions returns the X-Frame-Options value for kind k: "DENY", or ""
// (send no header) for the embedded page.
func FrameOptions(k Kind) string {
	if k == Embedded {
		return ""
	}
	return "DENY"
}

// Ready reports whether the view's data is shown.
func (in *Input) Ready() bool { return in.Status == site.StatusReady }

// page is the template's data.
type page struct {
	Kind        Kind
	In          *Input
	CSS         template.CSS
	Title       string
	Heading     string
	Description string
	Lead        string
	Message     string
	NoIndex     bool
	OG          bool
	URL         string
	Canonical   string
	Image       *Photo
	Hero        *Photo
	JSONLD      template.JS
	Map         bool
	MapURL      string
	ShowVideo   bool
	PlansMain   []FloorPlan
	PlansOther  []FloorPlan
}

// Render returns the page of kind k for the view in. The bytes depend only
// on k and in.
func Render(k Kind, in *Input) ([]byte, error) {
	p := page{Kind: k, In: in, CSS: template.CSS(css), NoIndex: k != Branded}
	switch k {
	case Branded:
		p.URL = in.BrandedURL
	case Unbranded:
		p.URL = in.UnbrandedURL
	case Embedded:
		p.URL = in.EmbedURL
	default:
		return nil, fmt.Errorf("view page %s: unknown kind %d", in.ViewID, k)
	}
	if !in.Ready() {
		p.NoIndex = true
		p.Title = "Guide not available"
		switch {
		case in.Status == site.StatusNotReady:
			p.Title = "Guide not ready yet"
			p.Heading = "This guide is not ready yet"
			p.Message = "The measurements and floor plans of this property are still being prepared. Please come back later."
		case in.Expired:
			p.Heading = "This guide has expired"
			p.Message = "The link to this guide is no longer valid. Please ask the person who sent it for a new link."
		default:
			p.Heading = "This guide is not available"
			p.Message = "This guide has been locked by its owner. Please ask the person who sent it for a new link."
		}
		return execute(&p, in.ViewID, k)
	}
	p.Heading = "Property guide"
	if in.Address != nil {
		p.Heading = in.Address.Street
		if p.Heading == "" {
			p.Heading = in.Address.Full
		}
	}
	p.Title = p.Heading
	if in.Address != nil && in.Address.City != "" {
		p.Title += ", " + in.Address.City
	}
	p.Title += " – floor plans and measurements"
	var facts []string
	rooms := 0
	if len(in.Systems) > 0 {
		s := in.Systems[0]
		for _, b := range s.Buildings {
			for _, f := range b.Floors {
				rooms += len(f.Rooms)
			}
		}
		if s.Total != "" {
			facts = append(facts, s.Total+" interior")
		}
		if rooms > 0 {
			facts = append(facts, strconv.Itoa(rooms)+" rooms")
		}
	}
	if len(in.FloorPlans)+len(in.PDFs) > 0 {
		facts = append(facts, "floor plans")
	}
	if len(in.Photos) > 0 {
		facts = append(facts, strconv.Itoa(len(in.Photos))+" photos")
	}
	p.Lead = strings.Join(facts, " · ")
	p.Description = "Measured floor plans and room dimensions"
	if in.Address != nil && in.Address.Full != "" {
		p.Description += " of " + in.Address.Full
	}
	if p.Lead != "" {
		p.Description += ": " + strings.ReplaceAll(p.Lead, " · ", ", ")
	}
	p.Description += "."
	if len(in.Photos) > 0 {
		p.Hero = &in.Photos[0]
		p.Image = p.Hero
	}
	p.Map = k != Unbranded && in.Geo != nil
	if p.Map {
		lat := strconv.FormatFloat(in.Geo.Lat, 'f', -1, 64)
		lng := strconv.FormatFloat(in.Geo.Lng, 'f', -1, 64)
		p.MapURL = "https://www.openstreetmap.org/?mlat=" + url.QueryEscape(lat) + "&mlon=" + url.QueryEscape(lng) + "#map=18/" + lat + "/" + lng
	}
	p.ShowVideo = k != Unbranded
	for _, f := range in.FloorPlans {
		if f.Units == in.Units {
			p.PlansMain = append(p.PlansMain, f)
		} else {
			p.PlansOther = append(p.PlansOther, f)
		}
	}
	p.OG = k != Embedded
	if k == Branded {
		p.Canonical = in.BrandedURL
		ld, err := jsonLD(in, p.URL)
		if err != nil {
			return nil, fmt.Errorf("view page %s: %w", in.ViewID, err)
		}
		p.JSONLD = ld
	}
	return execute(&p, in.ViewID, k)
}

// Local returns u as a path when it is on the origin of the page itself:
// images then load from whatever host name the page was opened by
// (127.0.0.1 or localhost alike) and stay within the policy's img-src
// 'self'. Other URLs are returned as they are.
func (p *page) Local(u string) string {
	pu, err := url.Parse(p.URL)
	if err != nil || pu.Scheme == "" || pu.Host == "" {
		return u
	}
	if origin := pu.Scheme + "://" + pu.Host; strings.HasPrefix(u, origin+"/") {
		return u[len(origin):]
	}
	return u
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
func jsonLD(in *Input, pageURL string) (template.JS, error) {
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
	if len(in.Systems) > 0 {
		s := in.Systems[0]
		if v, ok := strings.CutSuffix(s.Total, nbsp+s.AreaUnit); ok {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				code := "FTK"
				if s.Units == Metric {
					code = "MTK"
				}
				r.FloorSize = &qv{Type: "QuantitativeValue", Value: f, UnitCode: code}
			}
		}
		for _, b := range s.Buildings {
			for _, f := range b.Floors {
				r.Rooms += len(f.Rooms)
			}
		}
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

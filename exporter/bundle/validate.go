package bundle

import (
	"encoding/base64"
	"fmt"
	"math"
	"net/mail"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/guidepub/guidepub/site"
)

// Addons lists the valid values of Guide.Addons (see docs/documents.md#the-bundle).
var Addons = []string{"vr", "streetview", "advmeas", "floorplanner"}

// Secret length bounds of a webhook secret, in decoded bytes (Standard
// Webhooks recommends 24 to 64).
const (
	minSecretBytes = 24
	maxSecretBytes = 64
)

// SecretPrefix starts every webhook secret (Standard Webhooks).
const SecretPrefix = "whsec_"

var countryCode = regexp.MustCompile(`^[A-Z]{2}$`)

// checker collects the semantic problems of a decoded guide.
type checker struct {
	problems []semanticProblem
}

// semanticProblem is a problem found in the decoded guide. An aggregate
// problem is about a list as a whole (no default view), so a bad value
// anywhere inside the list may be its cause.
type semanticProblem struct {
	Problem
	aggregate bool
}

func (c *checker) add(path, format string, args ...any) {
	c.problems = append(c.problems, semanticProblem{Problem: Problem{Path: path, Message: fmt.Sprintf(format, args...)}})
}

func (c *checker) addAggregate(path, format string, args ...any) {
	c.problems = append(c.problems, semanticProblem{Problem: Problem{Path: path, Message: fmt.Sprintf(format, args...)}, aggregate: true})
}

// validate returns the semantic problems of g (its JSON shape already
// checked), in guide.json order.
func validate(g *Guide) []semanticProblem {
	c := &checker{}
	c.id("$.guideId", "guide id", g.GuideID)
	viewIDs := map[string]bool{}
	for _, v := range g.Views {
		viewIDs[v.ViewID] = true
	}
	if g.Alias != "" {
		c.publicID("$.alias", "alias", g.Alias)
		if viewIDs[g.Alias] {
			c.add("$.alias", "alias %q is also a view id of this guide", g.Alias)
		}
	}
	if g.DefaultLanguage != "" && !slices.Contains(site.Languages, g.DefaultLanguage) {
		c.add("$.defaultLanguage", "unknown language %q (known: %s)", g.DefaultLanguage, strings.Join(site.Languages, ", "))
	}
	c.nonEmpty("$.ownerId", "owner id", g.OwnerID)
	c.nonEmpty("$.workOrderId", "work order id", g.WorkOrderID)
	c.addons(g.Addons)
	if g.BillableArea != nil {
		c.measures("$.billableArea", reflect.ValueOf(g.BillableArea).Elem())
	}
	c.property(&g.Property)
	if g.Banner != nil {
		c.banner(g.Banner)
	}
	if g.Summary != nil {
		c.summary(g.Summary)
	}
	c.media(&g.Media)
	if g.Media.BannerImage != nil && g.Banner == nil {
		c.add("$.banner", "missing: media.bannerImage is shown beside the banner, so it needs one")
	}
	c.views(g.Views)
	c.webhooks(g.Webhooks)
	return c.problems
}

func (c *checker) id(path, what, id string) {
	if !site.ValidID.MatchString(id) {
		c.add(path, "%s %q is not valid: use 1 to 64 letters, digits, '_' or '-'", what, id)
	}
}

// publicID checks an id that becomes a top-level public folder.
func (c *checker) publicID(path, what, id string) {
	c.id(path, what, id)
	if site.Reserved[strings.ToLower(id)] {
		c.add(path, "%s %q is reserved", what, id)
	}
}

func (c *checker) nonEmpty(path, what, s string) {
	if strings.TrimSpace(s) == "" {
		c.add(path, "%s must not be empty", what)
	}
}

func (c *checker) addons(addons []string) {
	seen := map[string]bool{}
	for i, a := range addons {
		p := fmt.Sprintf("$.addons[%d]", i)
		if !slices.Contains(Addons, a) {
			c.add(p, "unknown addon %q (known: %s)", a, strings.Join(Addons, ", "))
		} else if seen[a] {
			c.add(p, "addon %q is listed twice", a)
		}
		seen[a] = true
	}
}

func (c *checker) property(p *site.Property) {
	if !countryCode.MatchString(p.Country) {
		c.add("$.property.country", "country %q is not a 2-letter ISO 3166 code in capitals", p.Country)
	}
	if l := p.Location; l != nil {
		if math.IsNaN(l.Lat) || l.Lat < -90 || l.Lat > 90 {
			c.add("$.property.location.lat", "latitude %v is outside -90..90", l.Lat)
		}
		if math.IsNaN(l.Lng) || l.Lng < -180 || l.Lng > 180 {
			c.add("$.property.location.lng", "longitude %v is outside -180..180", l.Lng)
		}
	}
}

func (c *checker) banner(b *site.Banner) {
	if b.Website != nil && *b.Website != "" {
		c.webURL("$.banner.website", "website", *b.Website)
	}
	for i, e := range b.Emails {
		if msg := checkEmail(e); msg != "" {
			c.add(fmt.Sprintf("$.banner.emails[%d]", i), "email address %q %s", e, msg)
		}
	}
	for i, l := range b.SocialLinks {
		c.webURL(fmt.Sprintf("$.banner.socialLinks[%d].link", i), "link", l.Link)
	}
}

// checkEmail returns why s is not a bare email address (name@example.com)
// that can be linked as mailto:s, or "". net/mail parses it (RFC 5322);
// then a display name, quoting, spaces, an address literal ([192.0.2.1]),
// a domain without a dot, and the characters that would start a query or
// fragment of the mailto: link (RFC 6068: a hidden "?bcc=") are refused.
func checkEmail(s string) string {
	const bare = "is not a bare address such as name@example.com"
	a, err := mail.ParseAddress(s)
	if err != nil {
		return "is not valid: " + strings.TrimPrefix(err.Error(), "mail: ")
	}
	local, domain, _ := strings.Cut(a.Address, "@")
	switch {
	case a.Name != "" || a.Address != s:
		return bare
	case strings.ContainsAny(local, "?#%/&="):
		return bare
	case !strings.Contains(domain, ".") || strings.HasPrefix(domain, "["):
		return bare
	}
	for _, label := range strings.Split(domain, ".") {
		if label == "" || strings.HasPrefix(label, "-") || strings.HasSuffix(label, "-") {
			return bare
		}
		for _, r := range label {
			if r != '-' && !unicode.IsLetter(r) && !unicode.IsDigit(r) {
				return bare
			}
		}
	}
	return ""
}

// webURL checks an absolute http or https URL with a host.
func (c *checker) webURL(path, what, s string) {
	if msg := checkWebURL(s); msg != "" {
		c.add(path, "%s %q %s", what, s, msg)
	}
}

func checkWebURL(s string) string {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return "is not a URL"
	case u.Scheme != "http" && u.Scheme != "https":
		return "must be an absolute http or https URL"
	case u.Host == "" || u.Hostname() == "":
		return "has no host"
	case u.User != nil:
		return "must not carry a user name or password"
	}
	return ""
}

func (c *checker) summary(s *site.Summary) {
	if s.MeasurementStandard != site.StandardANSI && s.MeasurementStandard != site.StandardRMS {
		c.add("$.summary.measurementStandard", "measurement standard %q is not %q or %q",
			s.MeasurementStandard, site.StandardANSI, site.StandardRMS)
	}
	buildingIDs, floorIDs, roomIDs := map[int]string{}, map[int]string{}, map[int]string{}
	mains := 0
	for bi := range s.Buildings {
		b := &s.Buildings[bi]
		bp := fmt.Sprintf("$.summary.buildings[%d]", bi)
		c.uniqueInt(bp+".id", "building", b.ID, buildingIDs)
		c.measures(bp, reflect.ValueOf(b).Elem())
		if b.IsMainBuilding {
			mains++
		}
		for fi := range b.Floors {
			f := &b.Floors[fi]
			fp := fmt.Sprintf("%s.floors[%d]", bp, fi)
			c.uniqueInt(fp+".id", "floor", f.ID, floorIDs)
			c.measures(fp, reflect.ValueOf(f).Elem())
			for ri := range f.Rooms {
				r := &f.Rooms[ri]
				rp := fmt.Sprintf("%s.rooms[%d]", fp, ri)
				c.uniqueInt(rp+".id", "room", r.ID, roomIDs)
				c.measures(rp, reflect.ValueOf(r).Elem())
				if len(r.Dims) != 0 && len(r.Dims) != 2 {
					c.add(rp+".dims", "dims must be [] or [width, length], not %s", plural(len(r.Dims), "number"))
				}
				for di, d := range r.Dims {
					c.measure(fmt.Sprintf("%s.dims[%d]", rp, di), d)
				}
				for wi := range r.WallSegments {
					c.measures(fmt.Sprintf("%s.wallSegments[%d]", rp, wi), reflect.ValueOf(&r.WallSegments[wi]).Elem())
				}
			}
		}
	}
	if len(s.Buildings) > 0 && mains != 1 {
		c.addAggregate("$.summary.buildings", "%d buildings have isMainBuilding; exactly one must", mains)
	}
	c.standardFields(s)
}

// uniqueInt checks that id is not negative and not already in seen (which
// maps ids to the JSON path that claimed them first).
func (c *checker) uniqueInt(path, what string, id int, seen map[int]string) {
	if id < 0 {
		c.add(path, "%s id %d is negative", what, id)
	}
	if first, dup := seen[id]; dup {
		c.add(path, "%s id %d is already used at %s", what, id, first)
		return
	}
	seen[id] = path
}

// measures checks every float64 and *float64 field of the struct v:
// lengths and areas are finite and not negative.
func (c *checker) measures(path string, v reflect.Value) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := v.Field(i)
		name := jsonName(t.Field(i))
		switch {
		case f.Kind() == reflect.Float64:
			c.measure(path+keyPath(name), f.Float())
		case f.Kind() == reflect.Pointer && f.Type().Elem().Kind() == reflect.Float64 && !f.IsNil():
			c.measure(path+keyPath(name), f.Elem().Float())
		}
	}
}

func (c *checker) measure(path string, x float64) {
	if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
		c.add(path, "measure %s must be a finite number >= 0", strconv.FormatFloat(x, 'g', -1, 64))
	}
}

func (c *checker) media(m *Media) {
	photoIDs := map[string]string{}
	preferred := ""
	for i := range m.Photos {
		ph := &m.Photos[i]
		p := fmt.Sprintf("$.media.photos[%d]", i)
		c.id(p+".id", "photo id", ph.ID)
		if first, dup := photoIDs[ph.ID]; dup {
			c.add(p+".id", "photo id %q is already used at %s", ph.ID, first)
		} else {
			photoIDs[ph.ID] = p + ".id"
		}
		c.rel(p+".file", ph.File)
		c.size(p, ph.Width, ph.Height)
		if ph.Small != nil {
			c.rel(p+".small.file", ph.Small.File)
			c.size(p+".small", ph.Small.Width, ph.Small.Height)
		}
		if ph.Preferred {
			if preferred != "" {
				c.add(p+".preferred", "a second preferred photo; %s is already preferred", preferred)
			} else {
				preferred = p
			}
		}
	}
	if m.Video != "" {
		c.webURL("$.media.video", "video", m.Video)
	}
	if bi := m.BannerImage; bi != nil {
		c.rel("$.media.bannerImage.file", bi.File)
		c.size("$.media.bannerImage", bi.Width, bi.Height)
	}
	for _, lang := range sortedKeys(m.Documents) {
		p := "$.media.documents" + keyPath(lang)
		if !slices.Contains(site.Languages, lang) {
			c.add(p, "unknown language %q (known: %s)", lang, strings.Join(site.Languages, ", "))
		}
		d := m.Documents[lang]
		for _, k := range site.DocumentKinds {
			if k.FloorPages {
				c.floorImages(p+"."+k.Key, d.FloorImages(k.Key))
			} else if rel := d.File(k.Key); rel != "" {
				c.rel(p+"."+k.Key, rel)
			}
		}
	}
}

func (c *checker) floorImages(path string, imgs []FloorImage) {
	ids := map[int]string{}
	for i, f := range imgs {
		p := fmt.Sprintf("%s[%d]", path, i)
		c.uniqueInt(p+".id", "floor image", f.ID, ids)
		c.rel(p+".file", f.File)
		c.size(p, f.Width, f.Height)
	}
}

// size checks an image's pixel size as guide.json gives it: optional (0
// when absent; the file's own size is what is published), positive when
// given. checkFiles compares it with the file.
func (c *checker) size(path string, w, h int) {
	if w < 0 {
		c.add(path+".width", "width %d must be a positive number of pixels", w)
	}
	if h < 0 {
		c.add(path+".height", "height %d must be a positive number of pixels", h)
	}
}

func (c *checker) rel(path, rel string) {
	if msg := checkRel(rel); msg != "" {
		c.add(path, "%s: %q", msg, rel)
	}
}

func (c *checker) views(views []View) {
	if len(views) == 0 {
		c.add("$.views", "a guide needs at least one view")
		return
	}
	ids := map[string]string{}
	defaults := 0
	for i := range views {
		v := &views[i]
		p := fmt.Sprintf("$.views[%d]", i)
		c.publicID(p+".viewId", "view id", v.ViewID)
		if first, dup := ids[v.ViewID]; dup {
			c.add(p+".viewId", "view id %q is already used at %s", v.ViewID, first)
		} else {
			ids[v.ViewID] = p + ".viewId"
		}
		if v.Default {
			defaults++
		}
		if v.Units != "" && v.Units != UnitsImperial && v.Units != UnitsMetric {
			c.add(p+".units", "units %q is not %q or %q (or absent)", v.Units, UnitsImperial, UnitsMetric)
		}
		if v.ExpiresAt != nil {
			if y := v.ExpiresAt.UTC().Year(); y < 0 || y > 9999 {
				c.add(p+".expiresAt", "expiresAt is out of range in UTC")
			}
		}
		hidden := map[string]bool{}
		for hi, h := range v.Hidden {
			hp := fmt.Sprintf("%s.hidden[%d]", p, hi)
			switch {
			case !slices.Contains(HiddenFeatures, h):
				c.add(hp, "unknown hidden feature %q (known: %s)", h, strings.Join(HiddenFeatures, ", "))
			case hidden[h]:
				c.add(hp, "hidden feature %q is listed twice", h)
			}
			hidden[h] = true
		}
		if v.Plans != nil {
			c.plans(p+".plans", v)
		}
	}
	if defaults != 1 {
		c.addAggregate("$.views", "%d views have default: true; exactly one must", defaults)
	}
}

// plans checks a view's own floor plans: languages, floor plan kinds
// only, file paths and floor images; a view hiding floorPlans shows none.
func (c *checker) plans(path string, v *View) {
	if v.Hides(HideFloorPlans) {
		c.add(path, "a view hiding floorPlans shows no plans: remove its plans or the hidden feature")
	}
	var plan []string
	for _, k := range site.DocumentKinds {
		if site.IsPlanKind(k.Key) {
			plan = append(plan, k.Key)
		}
	}
	for _, lang := range sortedKeys(v.Plans) {
		p := path + keyPath(lang)
		if !slices.Contains(site.Languages, lang) {
			c.add(p, "unknown language %q (known: %s)", lang, strings.Join(site.Languages, ", "))
		}
		d := v.Plans[lang]
		for _, k := range site.DocumentKinds {
			switch {
			case !site.IsPlanKind(k.Key):
				if k.FloorPages && len(d.FloorImages(k.Key)) > 0 || !k.FloorPages && d.File(k.Key) != "" {
					c.add(p+"."+k.Key, "%s is not a floor plan: a view's plans take %s", k.Key, strings.Join(plan, ", "))
				}
			case k.FloorPages:
				c.floorImages(p+"."+k.Key, d.FloorImages(k.Key))
			case d.File(k.Key) != "":
				c.rel(p+"."+k.Key, d.File(k.Key))
			}
		}
	}
}

func (c *checker) webhooks(hooks []site.Webhook) {
	urls := map[string]string{}
	for i, h := range hooks {
		p := fmt.Sprintf("$.webhooks[%d]", i)
		c.webURL(p+".url", "webhook url", h.URL)
		if first, dup := urls[h.URL]; dup {
			c.add(p+".url", "webhook url is already listed at %s", first)
		} else {
			urls[h.URL] = p + ".url"
		}
		if h.Secret != "" {
			if msg := checkSecret(h.Secret); msg != "" {
				c.add(p+".secret", "%s", msg)
			}
		}
	}
}

// checkSecret returns why s is not a Standard Webhooks secret, or "".
// The secret itself never appears in the message.
func checkSecret(s string) string {
	b64, ok := strings.CutPrefix(s, SecretPrefix)
	if !ok {
		return "webhook secret must start with " + SecretPrefix
	}
	key, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return "webhook secret is not " + SecretPrefix + " followed by standard base64"
	}
	if len(key) < minSecretBytes || len(key) > maxSecretBytes {
		return fmt.Sprintf("webhook secret decodes to %d bytes; it must be %d to %d", len(key), minSecretBytes, maxSecretBytes)
	}
	return ""
}

// jsonName returns the JSON key of a struct field.
func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "" {
		return f.Name
	}
	return name
}

// keyPath returns the JSON path step for an object key: ".key" for a plain
// identifier (letters, digits and '_', not starting with a digit), else
// `["key"]`.
func keyPath(key string) string {
	plain := key != ""
	for i := 0; i < len(key) && plain; i++ {
		c := key[i]
		plain = c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && '0' <= c && c <= '9'
	}
	if plain {
		return "." + key
	}
	return "[" + strconv.Quote(key) + "]"
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// plural returns "1 thing" or "n things".
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return strconv.Itoa(n) + " " + thing + "s"
}

package leaksweep

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/exporter/media"
	"github.com/guidepub/guidepub/site"
)

// A canary is "zq" and 12 lower-case hexadecimal digits: valid in an id,
// a URL, a file name and any text, unchanged by JSON and HTML escaping and
// by the pages' room type wording, and found in any byte stream by
// canaryPattern alone.
var canaryPattern = regexp.MustCompile(`zq[0-9a-f]{12}`)

// canaries makes canaries from a seed that a failed sweep logs, so that
// GUIDEPUB_SWEEP_SEED=<seed> runs it again with the same ones.
type canaries struct {
	rng  *rand.Rand
	seen map[string]bool
}

func newCanaries(t *testing.T) *canaries {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("GUIDEPUB_SWEEP_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("GUIDEPUB_SWEEP_SEED: %v", err)
		}
		seed = v
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("canaries from GUIDEPUB_SWEEP_SEED=%d", seed)
		}
	})
	return &canaries{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), seen: map[string]bool{}}
}

// next returns a canary no earlier call returned.
func (c *canaries) next() string {
	for {
		s := fmt.Sprintf("zq%012x", c.rng.Uint64()&(1<<48-1))
		if !c.seen[s] {
			c.seen[s] = true
			return s
		}
	}
}

// coordinate returns a coordinate within ±limit with nine random decimals,
// as JSON and the pages print it.
func (c *canaries) coordinate(limit int) string {
	s := fmt.Sprintf("%d.%08d%d", 10+c.rng.IntN(limit-10), c.rng.IntN(1e8), 1+c.rng.IntN(9))
	if c.rng.IntN(2) == 0 {
		s = "-" + s
	}
	return s
}

// field is one free-text field (or a group of them) of guide.json.
type field struct {
	// pattern matches the fields' paths as walkStrings writes them
	// (path.Match: "*" is one element).
	pattern string
	// hiddenBy are the hidden features each of which must remove the
	// field from every public byte.
	hiddenBy []string
	// public is set on a field that some public byte shows when the view
	// hides none of hiddenBy; the others must never be public.
	public bool
	// set writes the canary c into the fields of g and returns what shows
	// it in output (c itself, unless the field's format wraps it). nil:
	// the corpus sets it (file and folder names, which name files).
	set func(g *bundle.Guide, c string) string
	// coordinate: the canary is a number (see canaries.coordinate).
	coordinate bool
}

// fields lists every free-text field of guide.json (TestFieldsCoverGuide
// checks that none is missing), with the hidden features that remove it.
// Adding a field to the bundle format is adding a row here.
var fields = []field{
	{pattern: "guideId", set: func(g *bundle.Guide, c string) string { g.GuideID = c; return c }},
	{pattern: "alias", public: true, set: func(g *bundle.Guide, c string) string { g.Alias = c; return c }},
	{pattern: "ownerId", set: func(g *bundle.Guide, c string) string { g.OwnerID = c; return c }},
	{pattern: "workOrderId", set: func(g *bundle.Guide, c string) string { g.WorkOrderID = c; return c }},
	{pattern: "package", set: func(g *bundle.Guide, c string) string { g.Package = c; return c }},
	{pattern: "$schema", set: func(g *bundle.Guide, c string) string {
		g.Schema = "https://" + c + ".example/guide.schema.json"
		return c
	}},
	{pattern: "property/fullAddress", hiddenBy: []string{site.HideAddress}, public: true, set: func(g *bundle.Guide, c string) string { g.Property.FullAddress = c; return c }},
	{pattern: "property/city", hiddenBy: []string{site.HideAddress}, public: true, set: func(g *bundle.Guide, c string) string { g.Property.City = c; return c }},
	{pattern: "property/postalCode", hiddenBy: []string{site.HideAddress}, public: true, set: func(g *bundle.Guide, c string) string { g.Property.PostalCode = c; return c }},
	{pattern: "property/stateProvince", hiddenBy: []string{site.HideAddress}, public: true, set: func(g *bundle.Guide, c string) string { g.Property.StateProvince = c; return c }},
	{pattern: "property/streetName", hiddenBy: []string{site.HideAddress}, public: true, set: func(g *bundle.Guide, c string) string { g.Property.StreetName = c; return c }},
	{pattern: "property/streetNumber", hiddenBy: []string{site.HideAddress}, public: true, set: func(g *bundle.Guide, c string) string { g.Property.StreetNumber = c; return c }},
	{pattern: "property/unit", hiddenBy: []string{site.HideAddress}, public: true, set: func(g *bundle.Guide, c string) string { g.Property.Unit = &c; return c }},
	{pattern: "property/location/lat", hiddenBy: []string{site.HideAddress}, public: true, coordinate: true, set: func(g *bundle.Guide, c string) string {
		g.Property.Location.Lat, _ = strconv.ParseFloat(c, 64)
		return c
	}},
	{pattern: "property/location/lng", hiddenBy: []string{site.HideAddress}, public: true, coordinate: true, set: func(g *bundle.Guide, c string) string {
		g.Property.Location.Lng, _ = strconv.ParseFloat(c, 64)
		return c
	}},
	// The banner is the branded and embedded pages' (never the unbranded
	// page's, a rule of its own: docs/pages.md#mls-rules); no hidden
	// feature removes it.
	{pattern: "banner/fullName", public: true, set: func(g *bundle.Guide, c string) string { g.Banner.FullName = c; return c }},
	{pattern: "banner/title", public: true, set: func(g *bundle.Guide, c string) string { g.Banner.Title = &c; return c }},
	{pattern: "banner/company", public: true, set: func(g *bundle.Guide, c string) string { g.Banner.Company = &c; return c }},
	{pattern: "banner/phones/#/label", public: true, set: func(g *bundle.Guide, c string) string { g.Banner.Phones[0].Label = c; return c }},
	{pattern: "banner/phones/#/number", public: true, set: func(g *bundle.Guide, c string) string { g.Banner.Phones[0].Number = "+1 555 " + c; return c }},
	{pattern: "banner/emails/#", public: true, set: func(g *bundle.Guide, c string) string { g.Banner.Emails[0] = c + "@example.com"; return c }},
	{pattern: "banner/website", public: true, set: func(g *bundle.Guide, c string) string {
		w := "https://" + c + ".example/"
		g.Banner.Website = &w
		return c
	}},
	{pattern: "banner/socialLinks/#/label", public: true, set: func(g *bundle.Guide, c string) string { g.Banner.SocialLinks[0].Label = c; return c }},
	{pattern: "banner/socialLinks/#/link", public: true, set: func(g *bundle.Guide, c string) string {
		g.Banner.SocialLinks[0].Link = "https://" + c + ".example/social"
		return c
	}},
	// Names and room types are shown by the summary, the autofill and the
	// pages: no one hidden feature removes them.
	{pattern: "summary/buildings/#/name", public: true, set: func(g *bundle.Guide, c string) string { g.Summary.Buildings[0].Name = c; return c }},
	{pattern: "summary/buildings/#/floors/#/name", public: true, set: func(g *bundle.Guide, c string) string {
		for i := range g.Summary.Buildings[0].Floors {
			g.Summary.Buildings[0].Floors[i].Name = c + " " + strconv.Itoa(i+1)
		}
		return c
	}},
	{pattern: "summary/buildings/#/floors/#/rooms/#/name", public: true, set: func(g *bundle.Guide, c string) string {
		eachRoom(g, func(r *site.Room) { r.Name = c + " " + strconv.Itoa(r.ID) })
		return c
	}},
	{pattern: "summary/buildings/#/floors/#/rooms/#/type", public: true, set: func(g *bundle.Guide, c string) string {
		eachRoom(g, func(r *site.Room) { r.Type = c })
		return c
	}},
	{pattern: "media/photos/#/id", hiddenBy: []string{site.HidePhotos}, public: true, set: func(g *bundle.Guide, c string) string {
		for i := range g.Media.Photos {
			g.Media.Photos[i].ID = c + "-" + strconv.Itoa(i+1)
		}
		return c
	}},
	{pattern: "media/video", hiddenBy: []string{site.HideVideo}, public: true, set: func(g *bundle.Guide, c string) string {
		g.Media.Video = "https://" + c + ".example/watch"
		return c
	}},
	{pattern: "media/documents/@/*/#/floorName", hiddenBy: []string{site.HideFloorPlans, site.HideAutofill}, public: true, set: func(g *bundle.Guide, c string) string {
		for lang, d := range g.Media.Documents {
			for _, k := range site.DocumentKinds {
				if k.FloorPages {
					fs := d.FloorImages(k.Key)
					for i := range fs {
						fs[i].FloorName = c + " " + strconv.Itoa(fs[i].ID)
					}
				}
			}
			g.Media.Documents[lang] = d
		}
		return c
	}},
	{pattern: "views/#/plans/@/*/#/floorName", hiddenBy: []string{site.HideFloorPlans, site.HideAutofill}, public: true, set: func(g *bundle.Guide, c string) string {
		placed := ""
		for _, v := range g.Views {
			for lang, d := range v.Plans {
				for _, k := range site.DocumentKinds {
					if k.FloorPages {
						fs := d.FloorImages(k.Key)
						for i := range fs {
							fs[i].FloorName, placed = c+" "+strconv.Itoa(fs[i].ID), c
						}
					}
				}
				v.Plans[lang] = d
			}
		}
		return placed
	}},
	{pattern: "views/#/viewId", public: true, set: func(g *bundle.Guide, c string) string {
		for i := range g.Views {
			g.Views[i].ViewID = c + "-" + strconv.Itoa(i+1)
		}
		return c
	}},
	{pattern: "webhooks/#/url", set: func(g *bundle.Guide, c string) string { g.Webhooks[0].URL = "https://" + c + ".example/hook"; return c }},
	{pattern: "webhooks/#/secret", set: func(g *bundle.Guide, c string) string {
		s := bundle.SecretPrefix + base64.StdEncoding.EncodeToString([]byte(c+c))
		g.Webhooks[0].Secret = s
		return s
	}},
	// Every file and folder name the bundle holds: the published names
	// are made of ids and keys only.
	{pattern: "media/photos/#/file"},
	{pattern: "media/photos/#/small/file"},
	{pattern: "media/bannerImage/file"},
	{pattern: "media/documents/@/*"},
	{pattern: "media/documents/@/*/#/file"},
	{pattern: "views/#/plans/@/*"},
	{pattern: "views/#/plans/@/*/#/file"},
}

// fileNames is the pattern of the field whose canary names the corpus's
// files and bundle folders.
const fileNames = "media/documents/@/*"

// notFreeText lists the string fields of guide.json that cannot carry a
// canary, and why.
var notFreeText = map[string]string{
	"defaultLanguage":             "one of the page languages",
	"addons/#":                    "one of four add-on names",
	"property/country":            "two capitals (ISO 3166): too short for a canary",
	"summary/measurementStandard": "ansi or rms",
	"views/#/units":               "imperial or metric",
	"views/#/hidden/#":            "hidden feature names",
}

// walkStrings returns the path of every string field of t (a struct
// type): JSON names joined by "/", "#" for a list's elements and "@" for
// a map's values.
func walkStrings(t reflect.Type, prefix string) []string {
	switch t.Kind() {
	case reflect.Pointer:
		return walkStrings(t.Elem(), prefix)
	case reflect.Slice:
		return walkStrings(t.Elem(), prefix+"/#")
	case reflect.Map:
		return walkStrings(t.Elem(), prefix+"/@")
	case reflect.String:
		return []string{strings.TrimPrefix(prefix, "/")}
	case reflect.Struct:
		if t == reflect.TypeFor[time.Time]() {
			return nil
		}
		var out []string
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" || !f.IsExported() {
				continue
			}
			out = append(out, walkStrings(f.Type, prefix+"/"+name)...)
		}
		return out
	}
	return nil
}

func eachRoom(g *bundle.Guide, fn func(*site.Room)) {
	for bi := range g.Summary.Buildings {
		for fi := range g.Summary.Buildings[bi].Floors {
			for ri := range g.Summary.Buildings[bi].Floors[fi].Rooms {
				fn(&g.Summary.Buildings[bi].Floors[fi].Rooms[ri])
			}
		}
	}
}

// corpus is the bundles of one sweep: one that hides nothing and carries
// every metadata slot, and one per hidden feature, hiding it in its only
// view.
type corpus struct {
	bundles []*corpusBundle
	// slotCanary and slotNeedles are each slot's canary and what shows it.
	slotCanary  map[string]string
	slotNeedles map[string][][]byte
	// made holds the files built, by format, size and slots: every
	// bundle's media are the same files under other names.
	made map[string][]byte
}

// corpusBundle is one bundle of the corpus.
type corpusBundle struct {
	folder string
	hidden []string // the hides of its view
	// canary and needle of each field, by pattern.
	canary, needle map[string]string
	guide          *bundle.Guide
	files          map[string][]byte // by path in the bundle
}

// newCorpus makes the corpus with fresh canaries.
func newCorpus(t *testing.T) *corpus {
	cs := newCanaries(t)
	c := &corpus{slotCanary: map[string]string{}, slotNeedles: map[string][][]byte{}, made: map[string][]byte{}}
	for _, s := range slots {
		canary := cs.next()
		c.slotCanary[s.name] = canary
		c.slotNeedles[s.name] = s.put(&builder{}, canary)
	}
	hides := [][]string{nil}
	for _, h := range site.HiddenFeatures {
		hides = append(hides, []string{h})
	}
	for _, hidden := range hides {
		b := &corpusBundle{hidden: hidden, canary: map[string]string{}, needle: map[string]string{}}
		for _, f := range fields {
			b.canary[f.pattern] = cs.next()
			if f.coordinate {
				b.canary[f.pattern] = cs.coordinate(80)
			}
		}
		b.folder = b.canary[fileNames] + "-folder"
		c.build(t, b)
		c.bundles = append(c.bundles, b)
	}
	return c
}

// build makes the guide and the files of b: photos (with small copies),
// floor pages, front and embed images, PDFs and a private ZIP, each
// carrying every metadata slot of its format; the bundle that hides
// nothing has a photo of each image format and a second language.
func (c *corpus) build(t *testing.T, b *corpusBundle) {
	b.files = map[string][]byte{}
	n := 0
	name := func(f media.Format) string {
		n++
		fn := b.canary[fileNames]
		return fn + "/" + fn + "-" + strconv.Itoa(n) + extension(f)
	}
	put := func(f media.Format, w, h int, ss []slot) string {
		p := name(f)
		key := fmt.Sprint(f, w, h, len(ss))
		if c.made[key] == nil {
			c.made[key] = file(f, w, h, ss, func(s slot) string { return c.slotCanary[s.name] })
		}
		b.files[p] = c.made[key]
		return p
	}
	photo := func(f media.Format, ss []slot) bundle.Photo {
		w := 320 // no rendition: its pixels are never decoded
		if f != media.GIF && !slices.ContainsFunc(ss, func(s slot) bool { return s.undecodable }) {
			w = 488 // one rendition, 480 px wide
		}
		return bundle.Photo{File: put(f, w, w*3/4, ss), Small: &bundle.Image{File: put(f, 160, 120, ss)}}
	}
	g := skeleton()
	if b.hidden == nil {
		// One photo per image format with every slot of it (those Go
		// decodes in a photo with a rendition, the others in one without).
		g.Media.Photos = []bundle.Photo{
			photo(media.JPEG, slotsOf(media.JPEG, true)), photo(media.JPEG, slotsOf(media.JPEG, false)),
			photo(media.PNG, slotsOf(media.PNG, true)), photo(media.GIF, slotsOf(media.GIF, false)),
		}
	} else {
		g.Media.Photos = []bundle.Photo{photo(media.JPEG, slotsOf(media.JPEG, true))}
	}
	g.Media.Photos[0].Preferred = true
	// The agent's photo: public in every ready view, whatever it hides.
	g.Media.BannerImage = &bundle.Image{File: put(media.JPEG, 488, 366, slotsOf(media.JPEG, true))}
	en := bundle.Documents{
		GalleryFrontImage: put(media.JPEG, 320, 240, slotsOf(media.JPEG, false)),
		EmbedImage:        put(media.PNG, 320, 240, slotsOf(media.PNG, false)),
		PDFMetric:         put(media.PDF, 0, 0, slotsOf(media.PDF, false)),
		PDFImperial:       put(media.PDF, 0, 0, slotsOf(media.PDF, false)),
		GalleryZip:        put(media.ZIP, 0, 0, slotsOf(media.ZIP, false)),
		JPGMetric:         []bundle.FloorImage{{ID: 1, File: put(media.JPEG, 488, 366, slotsOf(media.JPEG, true))}},
		JPGImperial:       []bundle.FloorImage{{ID: 2, File: put(media.JPEG, 320, 240, slotsOf(media.JPEG, false))}},
	}
	g.Media.Documents = map[string]bundle.Documents{"en": en}
	if b.hidden == nil {
		g.Media.Documents["fr"] = bundle.Documents{
			EmbedImage: put(media.GIF, 320, 240, slotsOf(media.GIF, false)),
			PDFMetric:  put(media.PDF, 0, 0, slotsOf(media.PDF, false)),
			JPGMetric:  []bundle.FloorImage{{ID: 1, File: put(media.JPEG, 488, 366, slotsOf(media.JPEG, true))}},
		}
	}
	// A second view with the same hides and plans of its own (but where
	// it hides floor plans, which a view with plans cannot).
	second := bundle.View{Hidden: b.hidden}
	if !slices.Contains(b.hidden, site.HideFloorPlans) {
		second.Plans = map[string]bundle.Documents{"en": {
			PDFImperial: put(media.PDF, 0, 0, slotsOf(media.PDF, false)),
			EmbedImage:  put(media.PNG, 320, 240, slotsOf(media.PNG, false)),
			JPGImperial: []bundle.FloorImage{{ID: 7, File: put(media.JPEG, 488, 366, slotsOf(media.JPEG, true))}},
		}}
	}
	g.Views[0].Hidden = b.hidden
	g.Views = append(g.Views, second)
	for _, f := range fields {
		if f.set != nil {
			b.needle[f.pattern] = f.set(g, b.canary[f.pattern])
		} else {
			b.needle[f.pattern] = b.canary[f.pattern]
		}
	}
	b.guide = g
	if b.hidden != nil {
		return
	}
	// The bundle that hides nothing carries every slot: each one's canary
	// is in its files, as the slot stores it.
	for _, s := range slots {
		found := false
		for _, data := range b.files {
			for _, nd := range c.slotNeedles[s.name] {
				found = found || bytes.Contains(data, nd)
			}
		}
		if !found {
			t.Fatalf("slot %s: its canary is in no file of the corpus", s.name)
		}
	}
}

// skeleton returns a valid guide with one of each element that holds
// free text: the fields' set functions fill them.
func skeleton() *bundle.Guide {
	area := func(v float64) *float64 { return &v }
	room := func(id int) site.Room {
		return site.Room{ID: id, Dims: []float64{3100 + float64(id), 4200}, Area: 13020000}
	}
	return &bundle.Guide{
		Property: site.Property{Country: "CA", Location: &site.Location{}},
		Banner:   &site.Banner{Phones: []site.Phone{{}}, Emails: []string{""}, SocialLinks: []site.SocialLink{{}}},
		Summary: &site.Summary{MeasurementStandard: site.StandardRMS, Buildings: []site.Building{{
			ID: 1, IsMainBuilding: true, IntAreaAboveGrade: area(80e6), IntAreaTotal: area(120e6),
			Floors: []site.Floor{
				{ID: 1, InteriorArea: area(80e6), Rooms: []site.Room{room(1), room(2)}},
				{ID: 2, IsBelowGrade: true, InteriorArea: area(40e6), Rooms: []site.Room{room(3)}},
			},
		}}},
		Views:    []bundle.View{{Default: true}},
		Webhooks: []site.Webhook{{}},
	}
}

// extension returns the file name extension of format f.
func extension(f media.Format) string {
	switch f {
	case media.JPEG:
		return ".jpg"
	}
	return "." + string(f)
}

// write writes the bundles into src, each view hiding what its bundle
// hides, or nothing (withHides false).
func (c *corpus) write(t *testing.T, src string, withHides bool) {
	for _, b := range c.bundles {
		g := *b.guide
		g.Views = slices.Clone(g.Views)
		if !withHides {
			for i := range g.Views {
				g.Views[i].Hidden = nil
			}
		}
		data, err := json.MarshalIndent(&g, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(src, b.folder)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, bundle.FileName), data, 0o644); err != nil {
			t.Fatal(err)
		}
		for p, data := range b.files {
			f := filepath.Join(dir, filepath.FromSlash(p))
			if _, err := os.Stat(f); err == nil {
				continue // written by an earlier call
			}
			if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(f, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

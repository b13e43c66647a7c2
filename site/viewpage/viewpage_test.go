package viewpage

import (
	"bytes"
	"fmt"
	"html"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/guidepub/guidepub/site"
)

func render(t *testing.T, k Kind, in *Input) string {
	t.Helper()
	b, err := Render(k, in, in.Default())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func sampleByFolder(t *testing.T, folder string) sample {
	t.Helper()
	for _, s := range samples(t) {
		if s.Folder == folder {
			return s
		}
	}
	t.Fatalf("no sample %s", folder)
	return sample{}
}

// TestUntrustedStrings checks that markup and script URLs from the bundle
// render as inert text.
func TestUntrustedStrings(t *testing.T) {
	s := sampleByFolder(t, "vKT301A")
	sum := *s.Docs.Summary
	sum.Buildings = append([]site.Building(nil), sum.Buildings...)
	b := sum.Buildings[0]
	b.Floors = append([]site.Floor(nil), b.Floors...)
	f := b.Floors[0]
	f.Rooms = append([]site.Room(nil), f.Rooms...)
	f.Rooms[0].Name = "<script>alert(1)</script>"
	f.Name = "</script><img src=x onerror=alert(2)>"
	b.Floors[0] = f
	sum.Buildings[0] = b
	d := s.Docs
	d.Summary = &sum
	prop := *s.Guide.Property.Location
	e := Extra{
		ViewID: "vX", Units: Metric,
		Property: &site.Property{FullAddress: `1 "Main" St </script><script>alert(3)</script>`, StreetName: "Main <b>St</b>", City: "X", Location: &prop},
		Banner: &site.Banner{
			FullName: "<i>Agent</i>", Website: ptr("javascript:alert(1)"),
			Emails:      []string{`a@b.c" onclick="alert(4)`},
			Phones:      []site.Phone{{Label: "cell", Number: "javascript:alert(5)"}},
			SocialLinks: []site.SocialLink{{Label: "x", Link: "javascript:alert(6)"}, {Label: "y", Link: "data:text/html,<script>alert(7)</script>"}},
		},
		BrandedURL: "https://view.example.test/vX", UnbrandedURL: "https://u.example.test/vX", EmbedURL: "https://view.example.test/embed/vX",
	}
	in := FromDocs(d, e)
	for _, k := range Kinds {
		t.Run(k.String(), func(t *testing.T) {
			out := render(t, k, &in)
			for _, bad := range []string{"<script>alert", "<img src=x", "<i>Agent", "<b>St", `onclick="alert`, `href="javascript`, `href="data:text`, "ZgotmplZ"} {
				if strings.Contains(out, bad) {
					t.Errorf("page contains %q", bad)
				}
			}
			if !strings.Contains(out, "&lt;script&gt;alert(1)&lt;/script&gt;") {
				t.Error("room name not shown as escaped text")
			}
			if k == Branded {
				if !strings.Contains(out, "Website: javascript") && !strings.Contains(out, "Website: javascript:alert(1)") {
					// The website is kept as text only.
					if !strings.Contains(out, "Website: ") {
						t.Error("untrusted website not shown as text")
					}
				}
				ld := regexp.MustCompile(`(?s)<script type="application/ld\+json">(.*?)</script>`).FindStringSubmatch(out)
				if ld == nil {
					t.Fatal("no JSON-LD")
				}
				if strings.Contains(ld[1], "<") || !strings.Contains(ld[1], `\u003c/script\u003e`) {
					t.Errorf("JSON-LD not escaped: %s", ld[1])
				}
			}
			if n := strings.Count(out, "<script"); n > 1 || (n == 1 && k != Branded) {
				t.Errorf("%d script elements", n)
			}
		})
	}
}

// TestHiddenFeatures checks that each hidden feature leaves no trace in
// any page: the markers are strings only that feature produces.
func TestHiddenFeatures(t *testing.T) {
	s := sampleByFolder(t, "vKT301A")
	markers := map[string][]string{
		HideMeasurements:   {"Measurements", "Living Room", "m²", "sq ft", "floorSize"},
		HideRoomDimensions: {"4.30" + nbsp + "×" + nbsp + "6.00" + nbsp + "m", "14′" + nbsp + "1″" + nbsp + "×" + nbsp + "19′" + nbsp + "8″"},
		HideAddress:        {"King St", "Kitchener", "N2G", "openstreetmap", "43.447568", "PostalAddress"},
		HideFloorPlans:     {"Floor plan", "jpgMetric", "pdfMetric", "pdfImperial"},
		HidePhotos:         {"ph-1", "ph-2", "og:image", "Photos"},
		HideVideo:          {"video.example.com", "video tour"},
		HideAutofill:       {"jpgMetric", "jpgImperial", "reso/autofill"},
	}
	full := map[Kind]string{}
	for _, k := range Kinds {
		full[k] = render(t, k, &s.Input)
	}
	for feature, ms := range markers {
		t.Run(feature, func(t *testing.T) {
			e := extraOf(s)
			e.Hidden = []string{feature}
			in := FromDocs(s.Docs, e)
			for _, k := range Kinds {
				out := render(t, k, &in)
				seen := false
				for _, m := range ms {
					if strings.Contains(out, m) {
						t.Errorf("%s page with %s hidden contains %q", k, feature, m)
					}
					seen = seen || strings.Contains(full[k], m)
				}
				if !seen && !(k == Unbranded && feature == HideVideo) {
					t.Errorf("%s page without hiding shows none of %q: the markers test nothing", k, ms)
				}
			}
		})
	}
}

// TestWordsFollowHides: the pages' words never say more than the view
// shows, in every language: a view hiding room dimensions (or all
// measurements) has no plan alt text "with room names and dimensions", one
// hiding measurements or floor plans no title or description promising
// them (docs/pages.md#hidden-features).
func TestWordsFollowHides(t *testing.T) {
	s := sampleByFolder(t, "vKT301A")
	// Each message, with the hidden features that make it untrue.
	claims := map[string][]string{
		"planAlt":              {HideRoomDimensions, HideMeasurements},
		"title":                {HideMeasurements, HideFloorPlans},
		"description":          {HideMeasurements, HideRoomDimensions, HideFloorPlans},
		"descriptionNoAddress": {HideMeasurements, HideRoomDimensions, HideFloorPlans},
	}
	args := regexp.MustCompile(`%(\[\d+\])?[sd]`)
	// fixed returns the longest run of a message's own words.
	fixed := func(lang, id string) string {
		longest := ""
		for _, part := range args.Split(readLocale(lang)[id], -1) {
			if len(part) > len(longest) {
				longest = part
			}
		}
		return longest
	}
	pages := func(hidden []string, lang string) string {
		e := extraOf(s)
		e.Hidden, e.Languages = hidden, PageLanguages
		in := FromDocs(s.Docs, e)
		var all strings.Builder
		for _, k := range Kinds {
			b, err := Render(k, &in, lang)
			if err != nil {
				t.Fatal(err)
			}
			all.Write(b)
		}
		return html.UnescapeString(all.String())
	}
	for _, lang := range PageLanguages {
		full := pages(nil, lang)
		for id, by := range claims {
			words := fixed(lang, id)
			if id != "descriptionNoAddress" && !strings.Contains(full, words) {
				t.Errorf("%s: %s (%q) is not in the pages of a view hiding nothing: the check tests nothing", lang, id, words)
			}
			for _, h := range by {
				hidden := []string{h}
				if id == "descriptionNoAddress" {
					hidden = append(hidden, HideAddress)
				}
				if strings.Contains(pages(hidden, lang), words) {
					t.Errorf("%s: the pages of a view hiding %v say %q (%s)", lang, hidden, words, id)
				}
			}
		}
	}
}

func extraOf(s sample) Extra {
	prop := s.Guide.Property
	return Extra{
		ViewID: s.View.ViewID, Units: s.Input.Units, Property: &prop, Banner: s.Guide.Banner,
		BrandedURL: s.Input.BrandedURL, UnbrandedURL: s.Input.UnbrandedURL, EmbedURL: s.Input.EmbedURL,
		Languages: sortedLangs(s.Guide.Media.Documents), Default: s.Guide.DefaultLanguage,
		Documents:   documentsOf(s.Guide, viewHost+"/"+s.View.ViewID+"/doc/"),
		BannerImage: bannerImageOf(s.Guide, viewHost+"/"+s.View.ViewID+"/doc/"),
	}
}

// TestKinds checks what each kind of page shows and withholds.
func TestKinds(t *testing.T) {
	s := sampleByFolder(t, "vKT301A")
	tests := []struct {
		kind      Kind
		must, not []string
	}{
		{Branded,
			[]string{"Jane Example", "Example Realty", "tel:&#43;15195550100", "mailto:jane@example.com", `href="https://realty.example.com"`, "https://www.instagram.com/janeexample.realestate", `<img class="agent-img" src="/vKT301A/doc/banner.jpg" width="240" height="240" alt="">`, "video.example.com/watch/301-king", "openstreetmap.org/?mlat=43.447568&amp;mlon=-80.484302", `rel="canonical"`, "og:image", "application/ld+json", "<header>", "<footer>", "Living Room", "Utility room", "Cold room", "25.79" + nbsp + "m²", "278" + nbsp + "sq ft", "14′" + nbsp + "1″" + nbsp + "×" + nbsp + "19′" + nbsp + "8″", "jpgMetric-1.jpg", "pdfImperial.pdf", "ph-1-small.jpg", "Main Floor", `hreflang="fr"`, `lang="en"`},
			[]string{"noindex", "target="}},
		{Unbranded,
			[]string{`content="noindex"`, "Living Room", "25.79" + nbsp + "m²", "ph-1-small.jpg", "<footer>", `href="/vKT301A/doc/en/pdfMetric.pdf"`},
			[]string{"Jane Example", "Example Realty", "realty.example.com", "video.example.com", "openstreetmap", "application/ld+json", "<header>", "Guide vKT301A", "tel:", "mailto:", "Open the full guide", `src="https://`, "view.example.test", "banner.jpg", "instagram"}},
		{Embedded,
			[]string{`content="noindex"`, `href="https://view.example.test/vKT301A" target="_blank"`, "Open the full guide", "Living Room", `class="embed"`, "Jane Example", "video.example.com"},
			[]string{"<header>", "<footer>", "og:title", "application/ld+json", "banner.jpg", `class="agent-img"`}},
	}
	for _, tc := range tests {
		t.Run(tc.kind.String(), func(t *testing.T) {
			out := render(t, tc.kind, &s.Input)
			for _, m := range tc.must {
				if !strings.Contains(out, m) {
					t.Errorf("missing %q", m)
				}
			}
			for _, m := range tc.not {
				if strings.Contains(out, m) {
					t.Errorf("contains %q", m)
				}
			}
			if tc.kind == Unbranded {
				// Only the page's own origin: the MLS rule.
				for _, u := range regexp.MustCompile(`(?:href|src|content)="(https?://[^"]*)"`).FindAllStringSubmatch(out, -1) {
					if !strings.HasPrefix(u[1], unbrandedHost+"/") {
						t.Errorf("unbranded page names %s", u[1])
					}
				}
			}
		})
	}
}

// TestNotShownStatuses checks that not-ready, locked and expired views get
// a plain page with no data.
func TestNotShownStatuses(t *testing.T) {
	tests := []struct{ folder, want string }{
		{"vLDN14", "not ready yet"},
		{"vMAPLE-locked", "locked by its owner"},
		{"vSTDENIS-2020", "has expired"},
	}
	for _, tc := range tests {
		s := sampleByFolder(t, tc.folder)
		// Data present in the bundle must not leak even if documents were passed.
		for _, k := range Kinds {
			b, err := Render(k, &s.Input, "en")
			if err != nil {
				t.Fatal(err)
			}
			out := string(b)
			if !strings.Contains(out, tc.want) || !strings.Contains(out, `content="noindex"`) {
				t.Errorf("%s %s: want %q and noindex", tc.folder, k, tc.want)
			}
			for _, bad := range []string{"<table", "<img", "og:", "ld+json", s.Guide.Property.City} {
				if bad != "" && strings.Contains(out, bad) {
					t.Errorf("%s %s contains %q", tc.folder, k, bad)
				}
			}
		}
	}
}

// TestAreasAsAutofill checks that every room area and dimension the page
// shows equals the autofill document's after conversion: metric figures
// are the autofill's, imperial ones its square feet rounded to whole ones
// and its feet to the nearest inch (within the autofill's own rounding
// of 0.005 ft and 0.005 sq ft).
func TestAreasAsAutofill(t *testing.T) {
	checked := 0
	for _, s := range samples(t) {
		af := s.Docs.Autofill
		if af == nil || s.Input.Summary == nil {
			continue
		}
		p := newPrinter("en")
		var rooms []site.Room
		for _, b := range s.Input.Summary.Buildings {
			for _, f := range b.Floors {
				rooms = append(rooms, f.Rooms...)
			}
		}
		if len(rooms) != len(af.Rooms) {
			t.Fatalf("%s: %d rooms on the page, %d in the autofill", s.Folder, len(rooms), len(af.Rooms))
		}
		for i, r := range af.Rooms {
			units := Metric
			if r.RoomAreaUnits == site.SquareFeet {
				units = Imperial
			}
			got := p.area(rooms[i].Area, units)
			switch units {
			case Metric:
				if want := strconv.FormatFloat(*r.RoomArea, 'f', 2, 64) + nbsp + "m²"; got != want {
					t.Errorf("%s room %s: area %q, autofill %q", s.Folder, r.RoomKey, got, want)
				}
			case Imperial:
				n, _ := strconv.Atoi(strings.ReplaceAll(strings.TrimSuffix(got, nbsp+"sq ft"), ",", ""))
				if d := float64(n) - *r.RoomArea; d > 0.505 || d < -0.505 {
					t.Errorf("%s room %s: area %q, autofill %v sq ft", s.Folder, r.RoomKey, got, *r.RoomArea)
				}
			}
			if r.RoomWidth != nil && len(rooms[i].Dims) == 2 {
				for j, v := range []float64{*r.RoomWidth, *r.RoomLength} {
					if units == Metric {
						if want := strconv.FormatFloat(v, 'f', 2, 64) + nbsp + "m"; p.length(rooms[i].Dims[j], Metric) != want {
							t.Errorf("%s room %s: %q, autofill %q", s.Folder, r.RoomKey, p.length(rooms[i].Dims[j], Metric), want)
						}
						continue
					}
					in := inches(t, FeetInches(rooms[i].Dims[j]))
					if d := float64(in) - v*12; d > 0.5+0.06 || d < -0.5-0.06 {
						t.Errorf("%s room %s: %s, autofill %v ft", s.Folder, r.RoomKey, FeetInches(rooms[i].Dims[j]), v)
					}
				}
			}
			checked++
		}
	}
	if checked < 20 {
		t.Fatalf("only %d rooms compared", checked)
	}
}

// inches parses FeetInches' output back to inches.
func inches(t *testing.T, s string) int {
	t.Helper()
	n := 0
	for _, part := range strings.Split(s, nbsp) {
		switch {
		case strings.HasSuffix(part, "′"):
			v, err := strconv.Atoi(strings.TrimSuffix(part, "′"))
			if err != nil {
				t.Fatalf("%q: %v", s, err)
			}
			n += 12 * v
		case strings.HasSuffix(part, "″"):
			v, err := strconv.Atoi(strings.TrimSuffix(part, "″"))
			if err != nil || v > 11 {
				t.Fatalf("%q: %v", s, err)
			}
			n += v
		default:
			t.Fatalf("%q is not feet and inches", s)
		}
	}
	return n
}

// TestFeetInches pins the imperial length format: exact to the inch,
// whole feet without inches.
func TestFeetInches(t *testing.T) {
	for _, tc := range []struct {
		mm   float64
		want string
	}{
		{4300, "14′" + nbsp + "1″"},
		{5998, "19′" + nbsp + "8″"},
		{3657.6, "12′"},
		{3650, "12′"},                // 143.7 in rounds up to 144
		{3644, "11′" + nbsp + "11″"}, // 143.46 in
		{152.4, "6″"},
		{12.6, "0″"},
		{12.7, "1″"}, // half an inch rounds away from zero
	} {
		if got := FeetInches(tc.mm); got != tc.want {
			t.Errorf("FeetInches(%v) = %q, want %q", tc.mm, got, tc.want)
		}
	}
}

// TestNumbersPerLanguage checks that figures follow each language's
// notation: digit grouping and decimal separator.
func TestNumbersPerLanguage(t *testing.T) {
	mm2 := 2139.49 * site.MM2PerSqFoot
	for lang, want := range map[string][2]string{
		"en": {"2,139" + nbsp + "sq ft", "198.77" + nbsp + "m²"},
		"fr": {"2" + nbsp + "139" + nbsp + "pi²", "198,77" + nbsp + "m²"},
		"zh": {"2,139" + nbsp + "平方英尺", "198.77" + nbsp + "m²"},
	} {
		p := newPrinter(lang)
		if got := p.area(mm2, Imperial); got != want[0] {
			t.Errorf("%s: %q, want %q", lang, got, want[0])
		}
		if got := p.area(198.77e6, Metric); got != want[1] {
			t.Errorf("%s: %q, want %q", lang, got, want[1])
		}
	}
}

// TestCount checks the singular and plural of counted things.
func TestCount(t *testing.T) {
	for lang, want := range map[string][2]string{"en": {"1 room", "11 rooms"}, "fr": {"1 pièce", "11 pièces"}} {
		p := &page{printer: newPrinter(lang)}
		if a, b := p.count("rooms", 1), p.count("rooms", 11); a != want[0] || b != want[1] {
			t.Errorf("%s: %q, %q; want %q", lang, a, b, want)
		}
	}
}

// TestCatalogue checks that every language's catalogue has exactly the
// messages of the English one, with the same arguments.
func TestCatalogue(t *testing.T) {
	verbs := regexp.MustCompile(`%(\[\d\])?[sdv]`)
	en := readLocale("en")
	for _, lang := range PageLanguages {
		m := readLocale(lang)
		for id, text := range en {
			tr, ok := m[id]
			if !ok {
				t.Errorf("%s: no message %s", lang, id)
				continue
			}
			a, b := verbs.FindAllString(text, -1), verbs.FindAllString(tr, -1)
			if len(a) != len(b) {
				t.Errorf("%s: %s has %d arguments, English %d", lang, id, len(b), len(a))
			}
			// The text is a format: a stray % would print "%!".
			if got := newPrinter(lang).T(id, messageArgs(text)...); strings.Contains(got, "%!") {
				t.Errorf("%s: %s formats as %q", lang, id, got)
			}
		}
		for id := range m {
			if _, ok := en[id]; !ok {
				t.Errorf("%s: message %s is not in en.json", lang, id)
			}
		}
	}
}

// messageArgs returns arguments of the types the English text's verbs
// take, in order: 7 for %d, "x" for %s and %v.
func messageArgs(text string) []any {
	var args []any
	next := 0
	for _, m := range regexp.MustCompile(`%(?:\[(\d)\])?([sdv])`).FindAllStringSubmatch(text, -1) {
		i := next
		if m[1] != "" {
			i, _ = strconv.Atoi(m[1])
			i--
		}
		next = i + 1
		for len(args) <= i {
			args = append(args, nil)
		}
		if m[2] == "d" {
			args[i] = 7
		} else {
			args[i] = "x"
		}
	}
	return args
}

// TestCSP checks that a page has no style of its own but links the
// stylesheet, by path on its own origin, which the policy allows with
// 'self' and nothing else, and that only the branded page refuses to be
// framed.
func TestCSP(t *testing.T) {
	s := sampleByFolder(t, "vKT301A")
	link := regexp.MustCompile(`<link rel="stylesheet" href="([^"]*)">`)
	for _, k := range Kinds {
		out := render(t, k, &s.Input)
		if m := link.FindAllStringSubmatch(out, -1); len(m) != 1 || m[0][1] != "/"+StylesheetPath {
			t.Errorf("%s: stylesheet links %v, want one to /%s", k, m, StylesheetPath)
		}
		csp := CSP(k, "https://view.example.test")
		if !strings.Contains(csp, "style-src 'self';") {
			t.Errorf("%s: CSP %q does not allow the stylesheet of the page's origin alone", k, csp)
		}
		wantFA := "frame-ancestors *"
		if k == Branded {
			wantFA = "frame-ancestors 'none'"
		}
		if !strings.HasSuffix(csp, wantFA) || !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "img-src 'self' https://view.example.test data:;") {
			t.Errorf("%s: CSP %q", k, csp)
		}
		if (FrameOptions(k) == "") != (k != Branded) {
			t.Errorf("%s: X-Frame-Options %q", k, FrameOptions(k))
		}
		if strings.Contains(out, " style=") || strings.Contains(out, "<style") || strings.Contains(out, "<script src") {
			t.Errorf("%s: page has inline style or scripts", k)
		}
	}
	if got := site.StylesheetPath(Stylesheet()); got != StylesheetPath || !bytes.Equal(Stylesheet(), css) {
		t.Errorf("StylesheetPath %s is not the path of Stylesheet's bytes (%s)", StylesheetPath, got)
	}
	if !strings.Contains(string(Stylesheet()), "@media print") {
		t.Error("the stylesheet lost the print rules")
	}
	// A view URL with a path: the stylesheet is published below it, and
	// every page links it there, on the page's own host.
	e := extraOf(s)
	e.BrandedURL, e.UnbrandedURL, e.EmbedURL = "https://view.example.test/tours/vKT301A", "https://mls.example.test/vKT301A", "https://view.example.test/tours/embed/vKT301A"
	in := FromDocs(s.Docs, e)
	for _, k := range Kinds {
		if m := link.FindStringSubmatch(render(t, k, &in)); m == nil || m[1] != "/tours/"+StylesheetPath {
			t.Errorf("%s under /tours: stylesheet link %v, want /tours/%s", k, m, StylesheetPath)
		}
	}
}

// bigInput returns a ready view of rooms rooms over 4 floors, with 12
// photos and 4 floor plan pages.
func bigInput(rooms int) Input {
	v := func(x float64) *float64 { return &x }
	sum := &site.Summary{MeasurementStandard: "ansi"}
	b := site.Building{ID: 1, Name: "Main Building", IntAreaAboveGrade: v(250e6), IntAreaTotal: v(320e6), ExtAreaTotal: v(350e6), FinishedAreaTotal: v(300e6), IsMainBuilding: true}
	types := []string{"Bedroom", "Bathroom", "Kitchen", "Living", "Dining", "Closet", "Office", "Laundry"}
	for fl := 0; fl < 4; fl++ {
		f := site.Floor{ID: fl + 1, Name: "Floor " + strconv.Itoa(fl+1), InteriorArea: v(80e6), ExteriorArea: v(88e6), Perimeter: v(40000)}
		for r := fl; r < rooms; r += 4 {
			w, l := 2000+float64(r*137%3000), 2500+float64(r*251%3500)
			f.Rooms = append(f.Rooms, site.Room{ID: r + 1, Type: types[r%len(types)], Name: fmt.Sprintf("%s %d", types[r%len(types)], r+1), Dims: []float64{w, l}, Area: w * l})
		}
		b.Floors = append(b.Floors, f)
	}
	sum.Buildings = []site.Building{b}
	af := &site.Autofill{}
	base := "https://view.example.test/vBIG/doc/"
	yes, no := true, false
	for i := 1; i <= 12; i++ {
		p := &no
		if i == 3 {
			p = &yes
		}
		id := "ph-" + strconv.Itoa(i)
		af.Media = append(af.Media,
			site.Media{MediaCategory: site.MediaPhoto, MediaType: "jpeg", MediaURL: base + "photos/" + id + ".jpg", ImageWidth: 4000, ImageHeight: 3000, PreferredPhotoYN: p, MediaObjectID: id},
			site.Media{MediaCategory: site.MediaPhoto, MediaType: "jpeg", MediaURL: base + "photos/" + id + "-small.jpg", ImageWidth: 800, ImageHeight: 600, PreferredPhotoYN: p, MediaObjectID: id})
	}
	docs := LanguageDocs{Lang: "en"}
	for _, u := range []string{"imperial", "metric"} {
		for i := 1; i <= 4; i++ {
			id := "jpg" + strings.ToUpper(u[:1]) + u[1:] + "-" + strconv.Itoa(i)
			docs.Pages = append(docs.Pages, PlanPage{Units: u, FloorID: i, Floor: "Floor " + strconv.Itoa(i), URL: base + "en/" + id + ".jpg", Width: 2200, Height: 1700})
		}
		docs.PDFs = append(docs.PDFs, PDF{Units: u, URL: base + "en/pdf" + u + ".pdf"})
	}
	af.Media = append(af.Media, site.Media{MediaCategory: site.MediaVideo, MediaURL: "https://video.example.com/watch/big"})
	return FromDocs(Docs{Status: site.StatusReady, Summary: sum, Autofill: af}, Extra{
		ViewID: "vBIG", Units: Imperial, Languages: []string{"en"}, Documents: []LanguageDocs{docs},
		Property:   &site.Property{FullAddress: "1200 Long Avenue, Springfield, IL 62701", Country: "US", City: "Springfield", StateProvince: "IL", PostalCode: "62701", StreetName: "Long Avenue", StreetNumber: "1200", Location: &site.Location{Lat: 39.7817, Lng: -89.6501}},
		Banner:     &site.Banner{FullName: "Pat Agent", Title: ptr("Broker"), Company: ptr("Springfield Homes"), Phones: []site.Phone{{Label: "office", Number: "+1 217 555 0100"}}, Emails: []string{"pat@example.com"}, Website: ptr("https://homes.example.com"), SocialLinks: []site.SocialLink{{Label: "Blog", Link: "https://homes.example.com/blog"}}},
		BrandedURL: "https://view.example.test/vBIG", UnbrandedURL: "https://view.example.test/u/vBIG", EmbedURL: "https://view.example.test/embed/vBIG",
	})
}

// maxPageBrotli is the page weight budget: HTML and its stylesheet (pages
// have no script), brotli-compressed, for a 40-room guide.
const maxPageBrotli = 20 << 10

// TestPageWeight checks every kind of page of a 40-room guide, with its
// stylesheet, against the weight budget.
func TestPageWeight(t *testing.T) {
	in := bigInput(40)
	brotliLen := func(data []byte) int {
		var buf bytes.Buffer
		w := brotli.NewWriterLevel(&buf, brotli.BestCompression)
		w.Write(data)
		w.Close()
		return buf.Len()
	}
	sheet := brotliLen(Stylesheet())
	t.Logf("stylesheet: %d bytes, %d bytes brotli", len(Stylesheet()), sheet)
	for _, k := range Kinds {
		out := render(t, k, &in)
		if c := strings.Count(out, "<tr><th scope=\"row\">"); c < 40 {
			t.Fatalf("%s: %d table rows, want the 40 rooms", k, c)
		}
		n := brotliLen([]byte(out))
		t.Logf("%s page, 40 rooms: %d bytes, %d bytes brotli", k, len(out), n)
		if n+sheet >= maxPageBrotli {
			t.Errorf("%s page and stylesheet are %d bytes brotli, budget %d", k, n+sheet, maxPageBrotli)
		}
	}
}

// ptr returns a pointer to s, for the optional banner fields.
func ptr(s string) *string { return &s }

// TestCanadianImperial checks a Canadian (RMS) view set to imperial units:
// the headline is the main building's interior area in whole square feet
// (the detached garage apart), and lengths are feet and inches, also with
// room dimensions shown.
func TestCanadianImperial(t *testing.T) {
	s := sampleByFolder(t, "vKT301B")
	out := render(t, Branded, &s.Input)
	for _, want := range []string{
		"Interior area: <strong>2,417" + nbsp + "sq ft</strong>",
		"Detached Garage: 440" + nbsp + "sq ft",
		"Perimeter: 134′" + nbsp + "3″",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("vKT301B lacks %q", want)
		}
	}
	a := sampleByFolder(t, "vKT301A") // the same guide, room dimensions shown
	e := extraOf(a)
	e.Units = Imperial
	in := FromDocs(a.Docs, e)
	out = render(t, Branded, &in)
	if want := "14′" + nbsp + "1″" + nbsp + "×" + nbsp + "19′" + nbsp + "8″"; !strings.Contains(out, want) {
		t.Errorf("imperial room dimensions: no %q", want)
	}
}

// TestSrcset checks that images carry srcset and sizes from their
// renditions (ascending width) and a plain src without them, and that a
// photo's original (960 px, its only rendition 480 px) is the widest
// candidate of its small copy, so a wide screen is not shown the rendition
// upscaled.
func TestSrcset(t *testing.T) {
	s := sampleByFolder(t, "vKT301A")
	if out := render(t, Branded, &s.Input); strings.Contains(out, "srcset=") {
		t.Error("srcset without renditions")
	}
	e := extraOf(s)
	plan := viewHost + "/vKT301A/doc/en/jpgMetric-1.jpg"
	photo := viewHost + "/vKT301A/doc/photos/ph-1.jpg"
	e.Renditions = map[string][]Rendition{
		plan:  {{URL: viewHost + "/vKT301A/doc/en/jpgMetric-1.w480.jpg", Width: 480, Height: 624}},
		photo: {{URL: viewHost + "/vKT301A/doc/photos/ph-1.w480.jpg", Width: 480, Height: 360}},
	}
	in := FromDocs(s.Docs, e)
	out := render(t, Branded, &in)
	for _, want := range []string{
		`srcset="/vKT301A/doc/en/jpgMetric-1.w480.jpg 480w, /vKT301A/doc/en/jpgMetric-1.jpg 960w" sizes="(min-width: 72rem) 42rem, (min-width: 60rem) 58vw, calc(100vw - 2rem)"`,
		`src="/vKT301A/doc/photos/ph-1-small.jpg" srcset="/vKT301A/doc/photos/ph-1-small.jpg 320w, /vKT301A/doc/photos/ph-1.w480.jpg 480w, /vKT301A/doc/photos/ph-1.jpg 960w"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("page lacks %s", want)
		}
	}
}

// TestBundleTextIsNeverAFormat renders every page kind in every language
// with fmt verbs in each piece of bundle text the pages show: room types
// (looked up in the catalogue), room, floor and building names, the
// address. Each must come out as written, never read as a format string
// ("%!s(MISSING)").
func TestBundleTextIsNeverAFormat(t *testing.T) {
	s := sampleByFolder(t, "vKT301A")
	sum := *s.Docs.Summary
	sum.Buildings = append([]site.Building(nil), sum.Buildings...)
	b := sum.Buildings[0]
	b.Name = "Annex %x %%"
	b.Floors = append([]site.Floor(nil), b.Floors...)
	f := b.Floors[0]
	f.Name = "Level %[2]s"
	f.Rooms = append([]site.Room(nil), f.Rooms...)
	f.Rooms[0].Type = "Bonus%sRoom%d"
	f.Rooms[1].Type = "%v"
	f.Rooms[0].Name = "Den 50% %v"
	b.Floors[0] = f
	sum.Buildings[0] = b
	d := s.Docs
	d.Summary = &sum
	prop := *s.Guide.Property.Location
	in := FromDocs(d, Extra{
		ViewID: "vX", Units: Metric, Languages: PageLanguages,
		Property:   &site.Property{FullAddress: "1 %s St", StreetName: "%d St", City: "Ville %[1]v", Location: &prop},
		BrandedURL: "https://view.example.test/vX", UnbrandedURL: "https://u.example.test/vX", EmbedURL: "https://view.example.test/embed/vX",
	})
	for _, lang := range in.Languages {
		for _, k := range Kinds {
			out, err := Render(k, &in, lang)
			if err != nil {
				t.Fatal(err)
			}
			page := string(out)
			if i := strings.Index(page, "%!"); i >= 0 {
				t.Errorf("%s %s: bundle text read as a format: …%s…", k, lang, page[max(0, i-40):min(len(page), i+40)])
			}
			for _, want := range []string{"Bonus%s room%d", ">%v<", "Den 50% %v", "Level %[2]s"} {
				if !strings.Contains(page, want) {
					t.Errorf("%s %s: %q is not on the page as written", k, lang, want)
				}
			}
		}
	}
}

// floorSection returns the HTML of the floor section numbered n of page
// out: from its heading to the next floor's (or the end of the plans).
func floorSection(t *testing.T, out string, n int) string {
	t.Helper()
	start := strings.Index(out, fmt.Sprintf(`id="floor-%d"`, n))
	if start < 0 {
		t.Fatalf("no floor %d", n)
	}
	rest := out[start:]
	if end := strings.Index(rest, fmt.Sprintf(`id="floor-%d"`, n+1)); end >= 0 {
		return rest[:end]
	}
	return rest
}

// TestFloorsBesidePlans checks that each floor's plan sits in the floor's
// section with its room table, plans found by floor id and else by name,
// the building's name heading its first floor when there are several;
// that a view hiding its measurements has plan sections without tables;
// and that a view without plan pages keeps its floors under the
// measurements.
func TestFloorsBesidePlans(t *testing.T) {
	s := sampleByFolder(t, "vKT301A")
	e := extraOf(s)
	for i := range e.Documents {
		for j := range e.Documents[i].Pages {
			if p := &e.Documents[i].Pages[j]; p.Floor == "Second Floor" {
				p.FloorID = 99 // found by its name
			}
		}
	}
	in := FromDocs(s.Docs, e)
	out := render(t, Branded, &in)
	for n, want := range []struct{ floor, plan, caption string }{
		{"Main Floor", "jpgMetric-1.jpg", "Main Floor: rooms"},
		{"Second Floor", "jpgMetric-2.jpg", "Second Floor: rooms"},
		{"Basement", "jpgMetric-3.jpg", "Basement: rooms"},
		{"Garage", "jpgMetric-4.jpg", "Garage: rooms"},
	} {
		sec := floorSection(t, out, n)
		plan, table := strings.Index(sec, want.plan), strings.Index(sec, want.caption)
		if !strings.Contains(sec, ">"+want.floor+"</h4>") || plan < 0 || table < plan {
			t.Errorf("floor %d: want %s, its plan %s, then its table", n, want.floor, want.plan)
		}
	}
	if !strings.Contains(out, `<h3 class="bld">Main Building</h3>`) || strings.Index(out, `<h3 class="bld">Detached Garage</h3>`) > strings.Index(out, `id="floor-3"`) {
		t.Error("the buildings' names do not head their first floors")
	}
	if i := strings.Index(out, `id="measures"`); i < 0 || strings.Contains(out[i:], "<table>") {
		t.Error("rooms under the measurements of a view with plans")
	}

	hidden := sampleByFolder(t, "vMAPLE-metric") // hides measurements
	out = render(t, Branded, &hidden.Input)
	if !strings.Contains(out, `class="img plan"`) || strings.Contains(out, "<table") {
		t.Error("vMAPLE-metric: want plan sections without tables")
	}
	noPlans := sampleByFolder(t, "vMAPLE-noauto") // hides the autofill: no plan pages
	out = render(t, Branded, &noPlans.Input)
	if i := strings.Index(out, `id="measures"`); strings.Contains(out, `class="img plan"`) || i < 0 || !strings.Contains(out[i:], `<h4 id="floor-0">First Floor</h4>`) {
		t.Error("vMAPLE-noauto: want its floors under the measurements")
	}
}

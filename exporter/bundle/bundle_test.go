package bundle_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/exporter/media/mediatest"
)

// baseGuide is a small valid guide.json; the tests break it one way at a
// time. It names the files in baseFiles.
const baseGuide = `{
  "guideId": "gTEST1",
  "alias": "test-guide",
  "ownerId": "user-1",
  "workOrderId": "WO-1",
  "package": "",
  "addons": ["vr"],
  "property": {"fullAddress": "1 Main St, Springfield, IL 62701", "country": "US", "city": "Springfield",
    "location": {"lat": 39.8, "lng": -89.6}},
  "summary": {
    "measurementStandard": "ansi",
    "buildings": [
      {"id": 1, "name": "House", "isMainBuilding": true, "finishedAreaTotal": 100.5, "floors": [
        {"id": 1, "name": "Main", "rooms": [
          {"id": 1, "type": "Living", "name": "Living", "dims": [3000, 4000], "area": 12000000,
           "wallSegments": [{"length": 3000, "height": 2400, "area": 7200000, "areaWithoutOpenings": 7000000}]},
          {"id": 2, "type": "Kitchen", "name": "Kitchen", "dims": [], "area": 9000000}
        ]},
        {"id": 2, "name": "Basement", "isBelowGrade": true, "rooms": [
          {"id": 3, "type": "Storage", "name": "Storage", "area": 4000000}
        ]}
      ]},
      {"id": 2, "name": "Shed", "isMainBuilding": false, "floors": []}
    ]
  },
  "media": {
    "photos": [
      {"id": "p1", "file": "photos/p1.jpg", "width": 800, "height": 600,
       "small": {"file": "photos/p1-small.jpg", "width": 80, "height": 60}, "preferred": true},
      {"id": "p2", "file": "photos/p2.jpg", "width": 800, "height": 600}
    ],
    "video": "https://video.example.com/v/1",
    "documents": {
      "en": {"pdfMetric": "doc/plan.pdf", "galleryZip": "doc/gallery.zip",
             "jpgMetric": [{"id": 1, "floorName": "Main", "file": "doc/main.jpg", "width": 100, "height": 80}]},
      "fr": {"pdfMetric": "doc/plan-fr.pdf"}
    }
  },
  "views": [
    {"viewId": "v1", "default": true},
    {"viewId": "v2", "locked": true, "expiresAt": "2099-01-01T00:00:00+02:00", "units": "metric",
     "hidden": ["address", "photos"]}
  ],
  "webhooks": [{"url": "https://hooks.example.com/x", "secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}]
}`

// baseFiles are the files baseGuide names, with distinct contents.
var baseFiles = []string{
	"photos/p1.jpg", "photos/p1-small.jpg", "photos/p2.jpg", "doc/plan.pdf",
	"doc/gallery.zip", "doc/main.jpg", "doc/plan-fr.pdf",
}

// edit returns baseGuide changed by fn, which gets it as generic JSON.
func edit(t testing.TB, fn func(g map[string]any)) []byte {
	t.Helper()
	var g map[string]any
	if err := json.Unmarshal([]byte(baseGuide), &g); err != nil {
		t.Fatal(err)
	}
	fn(g)
	data, err := json.MarshalIndent(g, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// at returns the value at the dot-separated path p of generic JSON v
// ("views.0.default"); it fails the test when the path does not exist.
func at(t testing.TB, v any, p string) any {
	t.Helper()
	for _, step := range strings.Split(p, ".") {
		switch x := v.(type) {
		case map[string]any:
			v = x[step]
		case []any:
			i, err := strconv.Atoi(step)
			if err != nil || i >= len(x) {
				t.Fatalf("no %s in %s", step, p)
			}
			v = x[i]
		default:
			t.Fatalf("no %s in %s", step, p)
		}
	}
	return v
}

// set sets the value at path p ("views.0.default"); the parent must exist.
func set(t testing.TB, g map[string]any, p string, val any) {
	t.Helper()
	parent, last := "", p
	if i := strings.LastIndexByte(p, '.'); i >= 0 {
		parent, last = p[:i], p[i+1:]
	}
	var container any = g
	if parent != "" {
		container = at(t, g, parent)
	}
	switch x := container.(type) {
	case map[string]any:
		x[last] = val
	case []any:
		i, err := strconv.Atoi(last)
		if err != nil || i >= len(x) {
			t.Fatalf("no %s", p)
		}
		x[i] = val
	default:
		t.Fatalf("cannot set %s", p)
	}
}

// del removes the key at path p.
func del(t testing.TB, g map[string]any, p string) {
	t.Helper()
	parent, last := "", p
	if i := strings.LastIndexByte(p, '.'); i >= 0 {
		parent, last = p[:i], p[i+1:]
	}
	var container any = g
	if parent != "" {
		container = at(t, g, parent)
	}
	m, ok := container.(map[string]any)
	if !ok {
		t.Fatalf("cannot delete %s", p)
	}
	if _, ok := m[last]; !ok {
		t.Fatalf("no %s to delete", p)
	}
	delete(m, last)
}

// want is an expected problem: exact Path, message substring.
type want struct {
	path, msg string
}

// checkProblems asserts that got holds exactly the wanted problems, in
// order, each with File file.
func checkProblems(t *testing.T, got []bundle.Problem, file string, wants []want) {
	t.Helper()
	if len(got) != len(wants) {
		t.Errorf("got %d problems, want %d:\n%s", len(got), len(wants), problemList(got))
		return
	}
	for i, w := range wants {
		g := got[i]
		if g.File != file || g.Path != w.path || !strings.Contains(g.Message, w.msg) {
			t.Errorf("problem %d = %q\nwant file %q, path %q, message containing %q", i, g.String(), file, w.path, w.msg)
		}
	}
}

func problemList(ps []bundle.Problem) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString("  " + p.String() + "\n")
	}
	return b.String()
}

// badGuides are guide.json files that Parse must reject, each with the
// exact problems expected.
func badGuides(t testing.TB) []struct {
	name  string
	data  []byte
	wants []want
} {
	longID := strings.Repeat("a", 65)
	return []struct {
		name  string
		data  []byte
		wants []want
	}{
		{"empty", []byte("  \n"), []want{{"", "guide.json is empty"}}},
		{"banner image without a banner", edit(t, func(g map[string]any) {
			set(t, g, "media.bannerImage", map[string]any{"file": "photos/agent.jpg", "width": 0})
		}), []want{{"$.banner", "missing: media.bannerImage is shown beside the banner, so it needs one"}}},
		{"truncated", []byte(baseGuide[:200]), []want{{"", "invalid JSON at line 8, column 66: unexpected end of input"}}},
		{"syntax", []byte("{\n  \"guideId\": \"g1\",,\n}"), []want{{"", "invalid JSON at line 2, column 19: invalid character ','"}}},
		{"trailing data", []byte(baseGuide + "\n{}"), []want{{"", "unexpected data after the JSON object at line 46, column 1"}}},
		{"not an object", []byte(`["guideId"]`), []want{{"$", "must hold a JSON object, not an array"}}},
		{"invalid UTF-8", []byte("{\"guideId\": \"g\xff\"}"), []want{{"", "invalid UTF-8 at line 1, column 15"}}},
		{"duplicate key", []byte(strings.Replace(baseGuide, `"ownerId": "user-1",`, `"ownerId": "user-1", "ownerId": "user-2",`, 1)),
			[]want{{"$.ownerId", `duplicate key "ownerId"`}}},
		{"wrong types", edit(t, func(g map[string]any) {
			set(t, g, "guideId", 42)
			set(t, g, "views.0.default", "yes")
			set(t, g, "summary.buildings.0.floors.1.id", "2")
			set(t, g, "media.photos", map[string]any{})
			set(t, g, "property.location", nil)
			set(t, g, "package", nil)
		}), []want{
			{"$.guideId", "expected a string, got a number"},
			{"$.media.photos", "expected an array, got an object"},
			{"$.package", "expected a string, got null"},
			{"$.summary.buildings[0].floors[1].id", "expected an integer, got a string"},
			{"$.views[0].default", "expected true or false, got a string"},
		}},
		{"not an integer", edit(t, func(g map[string]any) {
			set(t, g, "summary.buildings.0.floors.0.rooms.1.id", 1.5)
			set(t, g, "media.photos.0.width", json.Number("1e3"))
			set(t, g, "media.photos.1.height", json.Number("99999999999999999999"))
		}), []want{
			{"$.media.photos[0].width", "expected an integer, got 1e3"},
			{"$.media.photos[1].height", "integer 99999999999999999999 is out of range"},
			{"$.summary.buildings[0].floors[0].rooms[1].id", "expected an integer, got 1.5"},
		}},
		{"number out of range", []byte(strings.Replace(baseGuide, `"area": 9000000`, `"area": 1e999`, 1)),
			[]want{{"$.summary.buildings[0].floors[0].rooms[1].area", "number 1e999 is out of range"}}},
		{"missing required fields", edit(t, func(g map[string]any) {
			del(t, g, "guideId")
			del(t, g, "views.1.viewId")
			del(t, g, "summary.buildings.0.floors.0.rooms.0.area")
			del(t, g, "summary.buildings.0.floors.0.rooms.0.wallSegments.0.height")
			del(t, g, "media.photos.0.small.file")
			del(t, g, "property.country")
			set(t, g, "webhooks.0", map[string]any{})
		}), []want{
			{"$.media.photos[0].small.file", `missing required field "file"`},
			{"$.property.country", `missing required field "country"`},
			{"$.summary.buildings[0].floors[0].rooms[0].wallSegments[0].height", `missing required field "height"`},
			{"$.summary.buildings[0].floors[0].rooms[0].area", `missing required field "area"`},
			{"$.views[1].viewId", `missing required field "viewId"`},
			{"$.webhooks[0].url", `missing required field "url"`},
			{"$.guideId", `missing required field "guideId"`},
		}},
		{"partial objects", edit(t, func(g map[string]any) {
			set(t, g, "billableArea", map[string]any{"sqFeet": 1})
			set(t, g, "banner", map[string]any{"phones": []any{map[string]any{"label": "cell"}}, "socialLinks": []any{map[string]any{"label": "x"}}})
			set(t, g, "property.location", map[string]any{"lng": 1})
			set(t, g, "summary.buildings.1", map[string]any{"name": "Shed"})
			set(t, g, "media.documents.fr.jpgImperial", []any{map[string]any{"id": 1}})
		}), []want{
			{"$.banner.phones[0].number", `missing required field "number"`},
			{"$.banner.socialLinks[0].link", `missing required field "link"`},
			{"$.billableArea.sqMeters", `missing required field "sqMeters"`},
			{"$.media.documents.fr.jpgImperial[0].floorName", `missing required field "floorName"`},
			{"$.media.documents.fr.jpgImperial[0].file", `missing required field "file"`},
			{"$.property.location.lat", `missing required field "lat"`},
			{"$.summary.buildings[1].id", `missing required field "id"`},
		}},
		{"unknown fields", edit(t, func(g map[string]any) {
			set(t, g, "views.1.hiden", []any{"address"})
			set(t, g, "GuideId", "gTEST1")
			set(t, g, "summary.buildings.0.floors.0.rooms.0.Dims", []any{})
		}), []want{
			{"$.GuideId", `unknown field "GuideId"`},
			{"$.summary.buildings[0].floors[0].rooms[0].Dims", `unknown field "Dims"`},
			{"$.views[1].hiden", `unknown field "hiden"`},
		}},
		{"duplicate ids", edit(t, func(g map[string]any) {
			set(t, g, "summary.buildings.1.id", 1)
			set(t, g, "summary.buildings.0.floors.1.id", 1)
			set(t, g, "summary.buildings.0.floors.1.rooms.0.id", 1)
			set(t, g, "media.photos.1.id", "p1")
			set(t, g, "views.1.viewId", "v1")
			set(t, g, "media.documents.en.jpgMetric", []any{at(t, g, "media.documents.en.jpgMetric.0"), at(t, g, "media.documents.en.jpgMetric.0")})
		}), []want{
			{"$.summary.buildings[0].floors[1].id", "floor id 1 is already used at $.summary.buildings[0].floors[0].id"},
			{"$.summary.buildings[0].floors[1].rooms[0].id", "room id 1 is already used at $.summary.buildings[0].floors[0].rooms[0].id"},
			{"$.summary.buildings[1].id", "building id 1 is already used at $.summary.buildings[0].id"},
			{"$.media.photos[1].id", `photo id "p1" is already used at $.media.photos[0].id`},
			{"$.media.documents.en.jpgMetric[1].id", "floor image id 1 is already used"},
			{"$.views[1].viewId", `view id "v1" is already used at $.views[0].viewId`},
		}},
		{"file paths", edit(t, func(g map[string]any) {
			set(t, g, "media.photos.0.file", "../x.jpg")
			set(t, g, "media.photos.0.small.file", "/etc/passwd")
			set(t, g, "media.photos.1.file", `photos\p2.jpg`)
			set(t, g, "media.documents.en.pdfMetric", "doc/../../plan.pdf")
			set(t, g, "media.documents.en.galleryZip", "guide.json")
			set(t, g, "media.documents.en.jpgMetric.0.file", ".git/config")
			set(t, g, "media.documents.fr.pdfMetric", "doc//plan.pdf")
			set(t, g, "media.documents.fr.pdfImperial", "doc/plan\x00.pdf")
		}), []want{
			{"$.media.photos[0].file", `escapes the bundle folder`},
			{"$.media.photos[0].small.file", `file path is absolute`},
			{"$.media.photos[1].file", `backslash`},
			{"$.media.documents.en.pdfMetric", `escapes the bundle folder`},
			{"$.media.documents.en.galleryZip", `guide.json cannot be published`},
			{"$.media.documents.en.jpgMetric[0].file", `hidden element ".git"`},
			{"$.media.documents.fr.pdfMetric", `not clean`},
			{"$.media.documents.fr.pdfImperial", `NUL`},
		}},
		{"view plans", edit(t, func(g map[string]any) {
			set(t, g, "views.0.plans", map[string]any{
				"en": map[string]any{"galleryZip": "doc/gallery.zip", "pdfMetric": "../plan.pdf",
					"jpgMetric": []any{map[string]any{"id": 1, "floorName": "Main", "file": "doc/main.jpg"}, map[string]any{"id": 1, "floorName": "Main", "file": "doc/main.jpg"}}},
				"de": map[string]any{"pdfMetric": "doc/plan.pdf"},
			})
			set(t, g, "views.1.hidden", []any{"floorPlans"})
			set(t, g, "views.1.plans", map[string]any{"fr": map[string]any{"pdfMetric": "doc/plan-fr.pdf"}})
		}), []want{
			{"$.views[0].plans.de", `unknown language "de"`},
			{"$.views[0].plans.en.pdfMetric", "escapes the bundle folder"},
			{"$.views[0].plans.en.galleryZip", "galleryZip is not a floor plan: a view's plans take pdfMetric, pdfImperial, embedImage, jpgMetric, jpgImperial"},
			{"$.views[0].plans.en.jpgMetric[1].id", "floor image id 1 is already used"},
			{"$.views[1].plans", "a view hiding floorPlans shows no plans"},
		}},
		{"hidden features", edit(t, func(g map[string]any) {
			set(t, g, "views.1.hidden", []any{"maps", "photos", "photos"})
		}), []want{
			{"$.views[1].hidden[0]", `unknown hidden feature "maps"`},
			{"$.views[1].hidden[2]", `hidden feature "photos" is listed twice`},
		}},
		{"dims with one element", edit(t, func(g map[string]any) {
			set(t, g, "summary.buildings.0.floors.0.rooms.0.dims", []any{3000})
			set(t, g, "summary.buildings.0.floors.0.rooms.1.dims", []any{1, 2, 3})
		}), []want{
			{"$.summary.buildings[0].floors[0].rooms[0].dims", "not 1 number"},
			{"$.summary.buildings[0].floors[0].rooms[1].dims", "not 3 numbers"},
		}},
		{"two defaults", edit(t, func(g map[string]any) { set(t, g, "views.1.default", true) }),
			[]want{{"$.views", "2 views have default: true; exactly one must"}}},
		{"no default", edit(t, func(g map[string]any) { del(t, g, "views.0.default") }),
			[]want{{"$.views", "0 views have default: true"}}},
		{"no views", edit(t, func(g map[string]any) { set(t, g, "views", []any{}) }),
			[]want{{"$.views", "at least one view"}}},
		{"reserved and invalid ids", edit(t, func(g map[string]any) {
			set(t, g, "views.0.viewId", "api")
			set(t, g, "views.1.viewId", "Metrics")
			set(t, g, "alias", "has space")
			set(t, g, "guideId", longID)
			set(t, g, "media.photos.0.id", "p/1")
		}), []want{
			{"$.guideId", "guide id \"" + longID + "\" is not valid"},
			{"$.alias", `alias "has space" is not valid`},
			{"$.media.photos[0].id", `photo id "p/1" is not valid`},
			{"$.views[0].viewId", `view id "api" is reserved`},
			{"$.views[1].viewId", `view id "Metrics" is reserved`},
		}},
		{"alias", edit(t, func(g map[string]any) { set(t, g, "alias", "v2") }),
			[]want{{"$.alias", `alias "v2" is also a view id of this guide`}}},
		{"reserved alias", edit(t, func(g map[string]any) { set(t, g, "alias", "private") }),
			[]want{{"$.alias", `alias "private" is reserved`}}},
		{"default language", edit(t, func(g map[string]any) { set(t, g, "defaultLanguage", "de") }),
			[]want{{"$.defaultLanguage", `unknown language "de"`}}},
		{"view settings", edit(t, func(g map[string]any) {
			set(t, g, "views.1.units", "cubits")
			set(t, g, "views.1.expiresAt", "2099-01-01 00:00:00")
		}), []want{
			{"$.views[1].expiresAt", `is not an RFC 3339 time`},
			{"$.views[1].units", `units "cubits" is not "imperial" or "metric"`},
		}},
		{"summary rules", edit(t, func(g map[string]any) {
			set(t, g, "summary.measurementStandard", "bogus")
			set(t, g, "summary.buildings.1.isMainBuilding", true)
			set(t, g, "summary.buildings.0.finishedAreaTotal", -1)
			set(t, g, "summary.buildings.0.floors.0.rooms.0.dims.1", -4000)
			set(t, g, "summary.buildings.0.floors.0.rooms.0.wallSegments.0.length", -1)
		}), []want{
			{"$.summary.measurementStandard", `measurement standard "bogus"`},
			{"$.summary.buildings[0].finishedAreaTotal", "measure -1 must be a finite number >= 0"},
			{"$.summary.buildings[0].floors[0].rooms[0].dims[1]", "measure -4000"},
			{"$.summary.buildings[0].floors[0].rooms[0].wallSegments[0].length", "measure -1"},
			{"$.summary.buildings", "2 buildings have isMainBuilding; exactly one must"},
		}},
		{"no main building", edit(t, func(g map[string]any) { set(t, g, "summary.buildings.0.isMainBuilding", false) }),
			[]want{{"$.summary.buildings", "0 buildings have isMainBuilding"}}},
		{"media rules", edit(t, func(g map[string]any) {
			set(t, g, "media.photos.1.preferred", true)
			set(t, g, "media.photos.1.width", -1)
			set(t, g, "media.photos.0.small.height", -5)
			set(t, g, "media.video", "javascript:alert(1)")
			set(t, g, "media.documents.de", map[string]any{})
		}), []want{
			{"$.media.photos[0].small.height", "height -5 must be a positive number of pixels"},
			{"$.media.photos[1].width", "width -1 must be a positive number of pixels"},
			{"$.media.photos[1].preferred", "a second preferred photo; $.media.photos[0] is already preferred"},
			{"$.media.video", "must be an absolute http or https URL"},
			{"$.media.documents.de", `unknown language "de"`},
		}},
		{"property and billing", edit(t, func(g map[string]any) {
			set(t, g, "property.country", "USA")
			set(t, g, "property.location.lat", 91)
			set(t, g, "addons", []any{"vr", "jetpack", "vr"})
			set(t, g, "billableArea", map[string]any{"sqFeet": -1, "sqMeters": 1})
			set(t, g, "banner", map[string]any{"fullName": "A", "website": "ftp://x.example.com"})
		}), []want{
			{"$.addons[1]", `unknown addon "jetpack"`},
			{"$.addons[2]", `addon "vr" is listed twice`},
			{"$.billableArea.sqFeet", "measure -1"},
			{"$.property.country", `country "USA" is not a 2-letter`},
			{"$.property.location.lat", "latitude 91 is outside"},
			{"$.banner.website", "must be an absolute http or https URL"},
		}},
		{"banner emails", edit(t, func(g map[string]any) {
			set(t, g, "banner", map[string]any{"fullName": "A", "emails": []any{
				"jane@example.com",
				"a@b.c?bcc=spy@evil.example&subject=hi",
				"a@b.c?bcc=spy",
				"Jane <jane@example.com>",
				"jane@example.com ",
				`"jane doe"@example.com`,
				"jane#x@example.com",
				"jane@localhost",
				"jane@[192.0.2.1]",
				"",
			}})
		}), []want{
			{"$.banner.emails[1]", `email address "a@b.c?bcc=spy@evil.example&subject=hi" is not valid`},
			{"$.banner.emails[2]", "is not a bare address"},
			{"$.banner.emails[3]", "is not a bare address"},
			{"$.banner.emails[4]", "is not a bare address"},
			{"$.banner.emails[5]", "is not a bare address"},
			{"$.banner.emails[6]", "is not a bare address"},
			{"$.banner.emails[7]", "is not a bare address"},
			{"$.banner.emails[8]", "is not a bare address"},
			{"$.banner.emails[9]", "is not valid"},
		}},
		{"webhooks", edit(t, func(g map[string]any) {
			set(t, g, "webhooks", []any{
				map[string]any{"url": "https://hooks.example.com/x", "secret": "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"},
				map[string]any{"url": "https://hooks.example.com/x"},
				map[string]any{"url": "hooks.example.com/y", "secret": "whsec_!!!"},
				map[string]any{"url": "https:///nohost", "secret": "whsec_c2hvcnQ="},
			})
		}), []want{
			{"$.webhooks[0].secret", "must start with whsec_"},
			{"$.webhooks[1].url", "webhook url is already listed at $.webhooks[0].url"},
			{"$.webhooks[2].url", "must be an absolute http or https URL"},
			{"$.webhooks[2].secret", "not whsec_ followed by standard base64"},
			{"$.webhooks[3].url", "has no host"},
			{"$.webhooks[3].secret", "decodes to 5 bytes; it must be 24 to 64"},
		}},
		{"shape and meaning together", edit(t, func(g map[string]any) {
			set(t, g, "views.0.hidden", []any{"maps"})
			set(t, g, "views.1.units", 3)
			set(t, g, "summary.buildings.0.floors.0.rooms.1.id", 1)
		}), []want{
			{"$.views[1].units", "expected a string, got a number"},
			{"$.summary.buildings[0].floors[0].rooms[1].id", "room id 1 is already used"},
			{"$.views[0].hidden[0]", `unknown hidden feature "maps"`},
		}},
		{"unknown field hides nothing", edit(t, func(g map[string]any) {
			set(t, g, "views.0.expires", "2099-01-01T00:00:00Z")
			set(t, g, "views.1.default", true)
		}), []want{
			{"$.views[0].expires", `unknown field "expires"`},
			{"$.views", "2 views have default: true"},
		}},
		{"shape problem hides its consequences", edit(t, func(g map[string]any) {
			set(t, g, "views.0.default", "true")
			del(t, g, "views.1.viewId")
		}), []want{
			{"$.views[0].default", "expected true or false, got a string"},
			{"$.views[1].viewId", `missing required field "viewId"`},
		}},
	}
}

func TestParseRejects(t *testing.T) {
	for _, tc := range badGuides(t) {
		t.Run(tc.name, func(t *testing.T) {
			g, problems := bundle.Parse(tc.data)
			checkProblems(t, problems, "", tc.wants)
			syntax := len(tc.wants) == 1 && tc.wants[0].path == "" || len(tc.wants) == 1 && tc.wants[0].path == "$"
			if syntax != (g == nil) {
				t.Errorf("guide returned = %v, want %v", g != nil, !syntax)
			}
		})
	}
}

func TestParseAcceptsBase(t *testing.T) {
	g, problems := bundle.Parse([]byte(baseGuide))
	if len(problems) > 0 {
		t.Fatalf("problems:\n%s", problemList(problems))
	}
	rooms := g.Summary.Buildings[0].Floors[0].Rooms
	if len(rooms) != 2 || rooms[1].Dims == nil || len(rooms[1].Dims) != 0 {
		t.Errorf("empty dims = %#v, want non-nil empty", rooms[1].Dims)
	}
	if g.Summary.Buildings[0].Floors[1].Rooms[0].Dims == nil {
		t.Errorf("absent dims decode to nil, want []")
	}
	if g.Summary.Buildings[1].Floors == nil {
		t.Errorf("empty floors decode to nil, want []")
	}
	exp := g.Views[1].ExpiresAt
	if exp == nil || exp.Location().String() != "UTC" || exp.Hour() != 22 || exp.Year() != 2098 {
		t.Errorf("expiresAt = %v, want 2098-12-31 22:00 UTC", exp)
	}
	if v := g.DefaultView(); v == nil || v.ViewID != "v1" {
		t.Errorf("DefaultView = %v", v)
	}
	if !g.Views[1].Hides(bundle.HidePhotos) || g.Views[1].Hides(bundle.HideVideo) {
		t.Errorf("Hides is wrong for %v", g.Views[1].Hidden)
	}
}

// fsKinds are the file systems the loading tests run on: a memory file
// system, and real temporary folders reached directly and through a
// BasePathFs.
var fsKinds = []struct {
	name string
	make func(t *testing.T) (fsys afero.Fs, src string)
}{
	{"mem", func(t *testing.T) (afero.Fs, string) { return afero.NewMemMapFs(), "/src" }},
	{"os", func(t *testing.T) (afero.Fs, string) { return afero.NewOsFs(), t.TempDir() }},
	{"basepath", func(t *testing.T) (afero.Fs, string) {
		return afero.NewBasePathFs(afero.NewOsFs(), t.TempDir()), "/src"
	}},
}

// writeBundle writes guide.json and the named files (each holding its own
// name) into src/folder.
func writeBundle(t *testing.T, fsys afero.Fs, src, folder string, guide []byte, files []string) string {
	t.Helper()
	dir := filepath.Join(src, folder)
	if err := fsys.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if guide != nil {
		if err := afero.WriteFile(fsys, filepath.Join(dir, bundle.FileName), guide, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f))
		if err := fsys.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := afero.WriteFile(fsys, p, sample(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// sampleSizes are the pixel sizes baseGuide gives its images.
var sampleSizes = map[string][2]int{
	"photos/p1.jpg": {800, 600}, "photos/p1-small.jpg": {80, 60}, "photos/p2.jpg": {800, 600}, "doc/main.jpg": {100, 80},
}

// sample returns the content writeBundle gives the file f: a real file of
// its format (mediatest.Sample), an image of the size baseGuide gives it.
func sample(f string) []byte {
	size, ok := sampleSizes[f]
	if !ok {
		size = [2]int{8, 8}
	}
	return mediatest.Sample(f, size[0], size[1])
}

func without(files []string, drop string) []string {
	var out []string
	for _, f := range files {
		if f != drop {
			out = append(out, f)
		}
	}
	return out
}

func TestLoad(t *testing.T) {
	for _, kind := range fsKinds {
		t.Run(kind.name, func(t *testing.T) {
			t.Run("valid", func(t *testing.T) {
				fsys, src := kind.make(t)
				dir := writeBundle(t, fsys, src, "house", []byte(baseGuide), baseFiles)
				b, err := bundle.Load(fsys, dir)
				if err != nil {
					t.Fatal(err)
				}
				if b.Folder != "house" || b.Dir != dir || string(b.Raw) != baseGuide || b.Guide.GuideID != "gTEST1" {
					t.Errorf("bundle = %q %q %q", b.Folder, b.Dir, b.Guide.GuideID)
				}
				data, err := b.ReadFile("doc/plan.pdf")
				if err != nil || string(data) != string(sample("doc/plan.pdf")) {
					t.Errorf("ReadFile = %q, %v", data, err)
				}
				f, err := b.Open("photos/p2.jpg")
				if err != nil {
					t.Fatal(err)
				}
				st, err := f.Stat()
				f.Close()
				if err != nil || st.Size() != int64(len(sample("photos/p2.jpg"))) {
					t.Errorf("Open: size %v, %v", st, err)
				}
				for _, bad := range []string{"../x", "/etc/passwd", "a/../../b", ""} {
					if _, err := b.ReadFile(bad); err == nil {
						t.Errorf("ReadFile(%q) succeeded", bad)
					}
					if _, err := b.Open(bad); err == nil {
						t.Errorf("Open(%q) succeeded", bad)
					}
				}
			})
			cases := []struct {
				name  string
				guide []byte
				files []string
				extra func(t *testing.T, fsys afero.Fs, dir string)
				wants []bundle.Problem // Message is a substring
			}{
				{name: "missing guide.json", guide: nil, files: baseFiles,
					wants: []bundle.Problem{{File: "b/guide.json", Message: "guide.json does not exist in the bundle folder"}}},
				{name: "guide.json is a folder", guide: nil, files: append([]string{"guide.json/x"}, baseFiles...),
					wants: []bundle.Problem{{File: "b/guide.json", Message: "not a regular file"}}},
				{name: "truncated guide.json", guide: []byte(baseGuide[:120]), files: baseFiles,
					wants: []bundle.Problem{{File: "b/guide.json", Message: "invalid JSON at line 7, column 6: unexpected end of input"}}},
				{name: "missing files", guide: []byte(baseGuide), files: without(without(baseFiles, "doc/plan.pdf"), "photos/p2.jpg"),
					wants: []bundle.Problem{
						{File: "b/photos/p2.jpg", Path: "$.media.photos[1].file", Message: "file does not exist in the bundle"},
						{File: "b/doc/plan.pdf", Path: "$.media.documents.en.pdfMetric", Message: "file does not exist in the bundle"},
					}},
				{name: "folder instead of file", guide: []byte(baseGuide), files: without(baseFiles, "doc/main.jpg"),
					extra: func(t *testing.T, fsys afero.Fs, dir string) {
						if err := fsys.MkdirAll(filepath.Join(dir, "doc", "main.jpg"), 0o755); err != nil {
							t.Fatal(err)
						}
					},
					wants: []bundle.Problem{{File: "b/doc/main.jpg", Path: "$.media.documents.en.jpgMetric[0].file", Message: "not a regular file"}}},
				{name: "file instead of folder", guide: []byte(baseGuide), files: without(without(baseFiles, "photos/p1.jpg"), "photos/p1-small.jpg"),
					extra: func(t *testing.T, fsys afero.Fs, dir string) {
						if err := fsys.RemoveAll(filepath.Join(dir, "photos")); err != nil {
							t.Fatal(err)
						}
						if err := afero.WriteFile(fsys, filepath.Join(dir, "photos"), []byte("x"), 0o644); err != nil {
							t.Fatal(err)
						}
					},
					wants: []bundle.Problem{
						{File: "b/photos/p1.jpg", Path: "$.media.photos[0].file", Message: "file does not exist in the bundle"},
						{File: "b/photos/p1-small.jpg", Path: "$.media.photos[0].small.file", Message: "file does not exist in the bundle"},
						{File: "b/photos/p2.jpg", Path: "$.media.photos[1].file", Message: "file does not exist in the bundle"},
					}},
				{name: "banner image not an image", guide: edit(t, func(g map[string]any) {
					set(t, g, "banner", map[string]any{"fullName": "Agent"})
					set(t, g, "media.bannerImage", map[string]any{"file": "doc/agent.jpg"})
				}), files: baseFiles,
					extra: func(t *testing.T, fsys afero.Fs, dir string) {
						if err := afero.WriteFile(fsys, filepath.Join(dir, "doc", "agent.jpg"), sample("x.pdf"), 0o644); err != nil {
							t.Fatal(err)
						}
					},
					wants: []bundle.Problem{{File: "b/doc/agent.jpg", Path: "$.media.bannerImage.file", Message: "PDF"}}},
				{name: "banner image of another size", guide: edit(t, func(g map[string]any) {
					set(t, g, "banner", map[string]any{"fullName": "Agent"})
					set(t, g, "media.bannerImage", map[string]any{"file": "photos/p2.jpg", "width": 640, "height": 600})
				}), files: baseFiles,
					wants: []bundle.Problem{{File: "b/photos/p2.jpg", Path: "$.media.bannerImage.width", Message: "width 640 differs from the file's 800 pixels"}}},
				{name: "escaping path and guide problems together", guide: edit(t, func(g map[string]any) {
					set(t, g, "media.photos.1.file", "../outside.jpg")
					set(t, g, "views.0.hidden", []any{"maps"})
				}), files: without(baseFiles, "doc/gallery.zip"),
					extra: func(t *testing.T, fsys afero.Fs, dir string) {
						if err := afero.WriteFile(fsys, filepath.Join(dir, "..", "outside.jpg"), []byte("x"), 0o644); err != nil {
							t.Fatal(err)
						}
					},
					wants: []bundle.Problem{
						{File: "b/guide.json", Path: "$.media.photos[1].file", Message: "escapes the bundle folder"},
						{File: "b/guide.json", Path: "$.views[0].hidden[0]", Message: `unknown hidden feature "maps"`},
						{File: "b/doc/gallery.zip", Path: "$.media.documents.en.galleryZip", Message: "file does not exist in the bundle"},
					}},
			}
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					fsys, src := kind.make(t)
					dir := writeBundle(t, fsys, src, "b", tc.guide, tc.files)
					if tc.extra != nil {
						tc.extra(t, fsys, dir)
					}
					b, err := bundle.Load(fsys, dir)
					assertRejected(t, b, err, "b", tc.wants)
				})
			}
		})
	}
}

// assertRejected checks that Load gave *bundle.Error with exactly wants.
func assertRejected(t *testing.T, b *bundle.Bundle, err error, folder string, wants []bundle.Problem) {
	t.Helper()
	if b != nil {
		t.Errorf("Load returned a bundle for a bad one")
	}
	var be *bundle.Error
	if !errors.As(err, &be) {
		t.Fatalf("Load error = %v, want *bundle.Error", err)
	}
	if be.Folder != folder {
		t.Errorf("Error.Folder = %q, want %q", be.Folder, folder)
	}
	if len(be.Problems) != len(wants) {
		t.Fatalf("got %d problems, want %d:\n%s", len(be.Problems), len(wants), problemList(be.Problems))
	}
	for i, w := range wants {
		g := be.Problems[i]
		if g.File != w.File || g.Path != w.Path || !strings.Contains(g.Message, w.Message) {
			t.Errorf("problem %d = %q\nwant %q", i, g.String(), w.String())
		}
	}
	if !strings.Contains(err.Error(), be.Problems[0].String()) {
		t.Errorf("Error() = %q does not list the problems", err.Error())
	}
}

// TestLoadSymlinks uses real symbolic links in a temporary folder: a
// bundle may not reach a file through one, whether it points outside the
// bundle or not.
func TestLoadSymlinks(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.jpg"), []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(outside, "photos"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"p1.jpg", "p1-small.jpg", "p2.jpg"} {
		if err := os.WriteFile(filepath.Join(outside, "photos", f), []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string)
		files []string
		wants []bundle.Problem
	}{
		{"file links outside", func(t *testing.T, dir string) {
			symlink(t, filepath.Join(outside, "secret.jpg"), filepath.Join(dir, "doc", "plan.pdf"))
		}, without(baseFiles, "doc/plan.pdf"), []bundle.Problem{
			{File: "b/doc/plan.pdf", Path: "$.media.documents.en.pdfMetric", Message: "file is a symbolic link"},
		}},
		{"file links to /etc/passwd", func(t *testing.T, dir string) {
			symlink(t, "/etc/passwd", filepath.Join(dir, "doc", "plan-fr.pdf"))
		}, without(baseFiles, "doc/plan-fr.pdf"), []bundle.Problem{
			{File: "b/doc/plan-fr.pdf", Path: "$.media.documents.fr.pdfMetric", Message: "file is a symbolic link"},
		}},
		{"file links inside", func(t *testing.T, dir string) {
			symlink(t, "plan.pdf", filepath.Join(dir, "doc", "gallery.zip"))
		}, without(baseFiles, "doc/gallery.zip"), []bundle.Problem{
			{File: "b/doc/gallery.zip", Path: "$.media.documents.en.galleryZip", Message: "file is a symbolic link"},
		}},
		{"folder on the way links outside", func(t *testing.T, dir string) {
			symlink(t, filepath.Join(outside, "photos"), filepath.Join(dir, "photos"))
		}, []string{"doc/plan.pdf", "doc/gallery.zip", "doc/main.jpg", "doc/plan-fr.pdf"}, []bundle.Problem{
			{File: "b/photos/p1.jpg", Path: "$.media.photos[0].file", Message: `folder "photos" on the way is a symbolic link`},
			{File: "b/photos/p1-small.jpg", Path: "$.media.photos[0].small.file", Message: `folder "photos" on the way is a symbolic link`},
			{File: "b/photos/p2.jpg", Path: "$.media.photos[1].file", Message: `folder "photos" on the way is a symbolic link`},
		}},
		{"guide.json links outside", func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(outside, "guide.json"), []byte(baseGuide), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(filepath.Join(dir, "guide.json")); err != nil {
				t.Fatal(err)
			}
			symlink(t, filepath.Join(outside, "guide.json"), filepath.Join(dir, "guide.json"))
		}, baseFiles, []bundle.Problem{
			{File: "b/guide.json", Message: "file is a symbolic link"},
		}},
		{"file is a hard link to a private file", func(t *testing.T, dir string) {
			private := filepath.Join(outside, "private.pdf")
			if err := os.WriteFile(private, []byte("private"), 0o600); err != nil && !os.IsExist(err) {
				t.Fatal(err)
			}
			hardlink(t, private, filepath.Join(dir, "doc", "plan.pdf"))
		}, without(baseFiles, "doc/plan.pdf"), []bundle.Problem{
			{File: "b/doc/plan.pdf", Path: "$.media.documents.en.pdfMetric", Message: "hard links; bundles must hold files of their own"},
		}},
		{"dangling link", func(t *testing.T, dir string) {
			symlink(t, filepath.Join(outside, "gone.jpg"), filepath.Join(dir, "doc", "main.jpg"))
		}, without(baseFiles, "doc/main.jpg"), []bundle.Problem{
			{File: "b/doc/main.jpg", Path: "$.media.documents.en.jpgMetric[0].file", Message: "file is a symbolic link"},
		}},
	}
	for _, tc := range cases {
		for _, kind := range fsKinds[1:] {
			t.Run(tc.name+"/"+kind.name, func(t *testing.T) {
				root := t.TempDir()
				var fsys afero.Fs = afero.NewOsFs()
				src := root
				if kind.name == "basepath" {
					fsys, src = afero.NewBasePathFs(afero.NewOsFs(), root), "/"
				}
				writeBundle(t, afero.NewOsFs(), root, "b", []byte(baseGuide), tc.files)
				tc.setup(t, filepath.Join(root, "b"))
				b, err := bundle.Load(fsys, filepath.Join(src, "b"))
				assertRejected(t, b, err, "b", tc.wants)
			})
		}
	}
}

// TestReadFileChecksAgain swaps a file for a symbolic link after Load:
// ReadFile and Open must refuse it.
func TestReadFileChecksAgain(t *testing.T) {
	root := t.TempDir()
	dir := writeBundle(t, afero.NewOsFs(), root, "b", []byte(baseGuide), baseFiles)
	b, err := bundle.Load(afero.NewOsFs(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "doc", "plan.pdf")); err != nil {
		t.Fatal(err)
	}
	symlink(t, "/etc/passwd", filepath.Join(dir, "doc", "plan.pdf"))
	if data, err := b.ReadFile("doc/plan.pdf"); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("ReadFile of a swapped-in link = %q, %v; want a symbolic link error", data, err)
	}
	if _, err := b.Open("doc/plan.pdf"); err == nil {
		t.Errorf("Open of a swapped-in link succeeded")
	}
}

// TestOpenRefusesHardLinks hard-links a bundle file after Load: ReadFile
// and Open must refuse it, since the other name may be anyone's file.
func TestOpenRefusesHardLinks(t *testing.T) {
	root := t.TempDir()
	dir := writeBundle(t, afero.NewOsFs(), root, "b", []byte(baseGuide), baseFiles)
	b, err := bundle.Load(afero.NewOsFs(), dir)
	if err != nil {
		t.Fatal(err)
	}
	hardlink(t, filepath.Join(dir, "doc", "plan.pdf"), filepath.Join(t.TempDir(), "other.pdf"))
	if data, err := b.ReadFile("doc/plan.pdf"); err == nil || !strings.Contains(err.Error(), "hard links") {
		t.Errorf("ReadFile of a hard-linked file = %q, %v; want a hard link error", data, err)
	}
	if _, err := b.Open("doc/plan.pdf"); err == nil {
		t.Errorf("Open of a hard-linked file succeeded")
	}
}

func hardlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(target, link); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func TestProblemAndErrorText(t *testing.T) {
	p := bundle.Problem{File: "301-king-st-e/guide.json", Path: "$.views[1].hidden[0]", Message: `unknown hidden feature "maps"`}
	if got, want := p.String(), `301-king-st-e/guide.json: $.views[1].hidden[0]: unknown hidden feature "maps"`; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	q := bundle.Problem{File: "301-king-st-e/guide.json", Message: "guide.json is empty"}
	if got, want := q.String(), "301-king-st-e/guide.json: guide.json is empty"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	e := &bundle.Error{Folder: "301-king-st-e", Problems: []bundle.Problem{p, q}}
	want := "bundle 301-king-st-e rejected: 2 problems\n" + p.String() + "\n" + q.String()
	if e.Error() != want {
		t.Errorf("Error() = %q, want %q", e.Error(), want)
	}
}

// TestParseAcceptsVariants checks optional parts that a valid guide may
// leave out or spell differently.
func TestParseAcceptsVariants(t *testing.T) {
	cases := []struct {
		name string
		fn   func(g map[string]any)
	}{
		{"$schema key", func(g map[string]any) { set(t, g, "$schema", "urn:guidepub:schema:guide.json") }},
		{"no summary", func(g map[string]any) { del(t, g, "summary") }},
		{"summary without buildings", func(g map[string]any) { del(t, g, "summary.buildings") }},
		{"building without name and floors", func(g map[string]any) {
			del(t, g, "summary.buildings.1.name")
			del(t, g, "summary.buildings.1.floors")
		}},
		{"room with only id and area", func(g map[string]any) {
			set(t, g, "summary.buildings.0.floors.1.rooms.0", map[string]any{"id": 3, "area": 0})
		}},
		{"null optional values", func(g map[string]any) {
			set(t, g, "addons", nil)
			set(t, g, "banner", nil)
			set(t, g, "media.documents", nil)
			set(t, g, "views.1.hidden", nil)
			set(t, g, "webhooks", nil)
		}},
		{"no media and no alias", func(g map[string]any) {
			del(t, g, "media")
			del(t, g, "alias")
		}},
		{"ids with dashes and underscores", func(g map[string]any) {
			set(t, g, "guideId", "g_1-A")
			set(t, g, "views.0.viewId", "v_1-A")
			set(t, g, "alias", strings.Repeat("x", 64))
		}},
		{"banner image", func(g map[string]any) {
			set(t, g, "banner", map[string]any{"fullName": "Agent"})
			set(t, g, "media.bannerImage", map[string]any{"file": "photos/agent.png", "width": 200, "height": 200})
		}},
		{"escaped strings", func(g map[string]any) {
			set(t, g, "property.fullAddress", "1 \"Main\" St\n\u00e9\u5317 \U0001F3E0")
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			data := edit(t, tc.fn)
			g, problems := bundle.Parse(data)
			if len(problems) > 0 {
				t.Fatalf("problems:\n%s", problemList(problems))
			}
			if g.Summary != nil {
				for _, b := range g.Summary.Buildings {
					if b.Floors == nil {
						t.Errorf("building %d: floors nil, want []", b.ID)
					}
				}
			}
		})
	}
}

func TestLoadRefusesHugeGuide(t *testing.T) {
	fsys := afero.NewMemMapFs()
	huge := make([]byte, bundle.MaxGuideSize+1)
	for i := range huge {
		huge[i] = ' '
	}
	dir := writeBundle(t, fsys, "/src", "b", huge, nil)
	b, err := bundle.Load(fsys, dir)
	assertRejected(t, b, err, "b", []bundle.Problem{{File: "b/guide.json", Message: "guide.json is larger than 32 MiB"}})
}

// TestLogAttrs: a rejected bundle's problems are logged as a list, one
// element each, with no newline inside a log line.
func TestLogAttrs(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&buf, nil))
	err := &bundle.Error{Folder: "rue", Problems: []bundle.Problem{
		{File: "rue/guide.json", Path: "$.views[0].viewId", Message: "required"},
		{File: "rue/guide.json", Path: "$.alias", Message: `"api" is reserved`},
	}}
	logger.Warn("bundle not exported", bundle.LogAttrs(fmt.Errorf("export: %w", err))...)
	var rec struct {
		Error    string
		Problems []string
	}
	line := strings.TrimSpace(buf.String())
	if strings.Count(line, "\n") != 0 || strings.Contains(line, `\n`) {
		t.Fatalf("log line holds a newline: %s", line)
	}
	if err := json.Unmarshal([]byte(line), &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Error != "bundle rue rejected: 2 problems" || len(rec.Problems) != 2 || rec.Problems[1] != `rue/guide.json: $.alias: "api" is reserved` {
		t.Errorf("logged %+v", rec)
	}
	buf.Reset()
	logger.Warn("x", bundle.LogAttrs(errors.New("disk full"))...)
	if !strings.Contains(buf.String(), `"error":"disk full"`) {
		t.Errorf("plain error logged as %s", buf.String())
	}
}

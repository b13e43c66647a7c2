package bundleschema

import (
	"encoding/json"
	"io/fs"
	"slices"
	"strings"
	"testing"

	"github.com/guidepub/guidepub/fixtures"
)

// sample returns the fixture guide.json decoded, for a test to change.
func sample(t *testing.T) map[string]any {
	t.Helper()
	data, err := fs.ReadFile(fixtures.Bundles, "bundles/301-king-st-e/guide.json")
	if err != nil {
		t.Fatal(err)
	}
	var g map[string]any
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

func views(g map[string]any) []any { return g["views"].([]any) }
func view(g map[string]any, i int) map[string]any {
	return views(g)[i].(map[string]any)
}
func room(g map[string]any) map[string]any {
	b := g["summary"].(map[string]any)["buildings"].([]any)[0].(map[string]any)
	return b["floors"].([]any)[0].(map[string]any)["rooms"].([]any)[0].(map[string]any)
}

func TestSchemaIsDraft2020(t *testing.T) {
	var s map[string]any
	if err := json.Unmarshal(Schema(), &s); err != nil {
		t.Fatal(err)
	}
	if s["$schema"] != "https://json-schema.org/draft/2020-12/schema" || s["$id"] != ID {
		t.Errorf("$schema %v, $id %v", s["$schema"], s["$id"])
	}
	if _, err := compiled(); err != nil {
		t.Fatal(err)
	}
}

func TestFixturesAreValid(t *testing.T) {
	entries, err := fs.ReadDir(fixtures.Bundles, "bundles")
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) == 0 {
		t.Fatal("no fixture bundles")
	}
	for _, e := range entries {
		t.Run(e.Name(), func(t *testing.T) {
			data, err := fs.ReadFile(fixtures.Bundles, "bundles/"+e.Name()+"/guide.json")
			if err != nil {
				t.Fatal(err)
			}
			problems, err := Validate(data)
			if err != nil || len(problems) > 0 {
				t.Fatalf("Validate: %v %v", problems, err)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		change func(g map[string]any)
		paths  []string // every problem's path, sorted; nil for a valid document
	}{
		{"unchanged", func(map[string]any) {}, nil},
		{"$schema key allowed", func(g map[string]any) { g["$schema"] = "./guide.schema.json" }, nil},
		{"null optional values read as absent", func(g map[string]any) {
			g["addons"], g["banner"], g["webhooks"] = nil, nil, nil
			g["media"].(map[string]any)["bannerImage"] = nil // a banner image needs a banner
			view(g, 0)["expiresAt"] = nil
			room(g)["dims"] = nil
		}, nil},
		{"empty optional strings read as absent", func(g map[string]any) {
			g["alias"] = ""
			view(g, 0)["units"] = ""
			g["webhooks"] = []any{map[string]any{"url": "https://hooks.example/x", "secret": ""}}
		}, nil},
		{"null views", func(g map[string]any) { g["views"] = nil }, []string{"$.views"}},
		{"null media", func(g map[string]any) { g["media"] = nil }, []string{"$.media"}},
		{"integer out of range", func(g map[string]any) { room(g)["id"] = json.Number("9223372036854775808") }, []string{"$.summary.buildings[0].floors[0].rooms[0].id"}},
		{"location without lng", func(g map[string]any) {
			delete(g["property"].(map[string]any)["location"].(map[string]any), "lng")
		}, []string{"$.property.location.lng"}},
		{"no views", func(g map[string]any) { delete(g, "views") }, []string{"$.views"}},
		{"no guideId", func(g map[string]any) { delete(g, "guideId") }, []string{"$.guideId"}},
		{"guideId with a slash", func(g map[string]any) { g["guideId"] = "a/b" }, []string{"$.guideId"}},
		{"guideId too long", func(g map[string]any) { g["guideId"] = strings.Repeat("a", 65) }, []string{"$.guideId"}},
		{"guideId a number", func(g map[string]any) { g["guideId"] = 12 }, []string{"$.guideId"}},
		{"alias reserved", func(g map[string]any) { g["alias"] = "Healthz" }, []string{"$.alias"}},
		{"blank owner", func(g map[string]any) { g["ownerId"] = "  " }, []string{"$.ownerId"}},
		{"unknown top-level key", func(g map[string]any) { g["colour"] = "red" }, []string{"$.colour"}},
		{"unknown key with a dash", func(g map[string]any) { g["x-y"] = 1 }, []string{`$["x-y"]`}},
		{"unknown addon", func(g map[string]any) { g["addons"] = []any{"vr", "maps"} }, []string{"$.addons[1]"}},
		{"addon twice", func(g map[string]any) { g["addons"] = []any{"vr", "vr"} }, []string{"$.addons[1]"}},
		{"country lower case", func(g map[string]any) { g["property"].(map[string]any)["country"] = "ca" }, []string{"$.property.country"}},
		{"latitude out of range", func(g map[string]any) {
			g["property"].(map[string]any)["location"].(map[string]any)["lat"] = 91
		}, []string{"$.property.location.lat"}},
		{"unknown hidden feature", func(g map[string]any) { view(g, 0)["hidden"] = []any{"maps"} }, []string{"$.views[0].hidden[0]"}},
		{"bad units", func(g map[string]any) { view(g, 0)["units"] = "furlongs" }, []string{"$.views[0].units"}},
		{"view id reserved", func(g map[string]any) { view(g, 0)["viewId"] = "api" }, []string{"$.views[0].viewId"}},
		{"bad expiresAt", func(g map[string]any) { view(g, 0)["expiresAt"] = "tomorrow" }, []string{"$.views[0].expiresAt"}},
		{"no default view", func(g map[string]any) {
			for _, v := range views(g) {
				delete(v.(map[string]any), "default")
			}
		}, []string{"$.views"}},
		{"two default views", func(g map[string]any) {
			g["views"] = append(views(g), map[string]any{"viewId": "second", "default": true})
		}, []string{"$.views"}},
		{"one dim", func(g map[string]any) { room(g)["dims"] = []any{1.5} }, []string{"$.summary.buildings[0].floors[0].rooms[0].dims"}},
		{"three dims", func(g map[string]any) { room(g)["dims"] = []any{1, 2, 3} }, []string{"$.summary.buildings[0].floors[0].rooms[0].dims"}},
		{"no dims", func(g map[string]any) { room(g)["dims"] = []any{} }, nil},
		{"negative area", func(g map[string]any) { room(g)["area"] = -1 }, []string{"$.summary.buildings[0].floors[0].rooms[0].area"}},
		{"bad standard", func(g map[string]any) { g["summary"].(map[string]any)["measurementStandard"] = "iso" }, []string{"$.summary.measurementStandard"}},
		{"no main building", func(g map[string]any) {
			for _, b := range g["summary"].(map[string]any)["buildings"].([]any) {
				b.(map[string]any)["isMainBuilding"] = false
			}
		}, []string{"$.summary.buildings"}},
		{"unknown language", func(g map[string]any) {
			g["media"].(map[string]any)["documents"] = map[string]any{"de": map[string]any{}}
		}, []string{"$.media.documents.de"}},
		{"file escapes", func(g map[string]any) {
			g["media"].(map[string]any)["documents"] = map[string]any{"en": map[string]any{"pdfMetric": "../x.pdf"}}
		}, []string{"$.media.documents.en.pdfMetric"}},
		{"hidden file", func(g map[string]any) {
			g["media"].(map[string]any)["documents"] = map[string]any{"fr": map[string]any{"svgZip": "doc/.x.zip"}}
		}, []string{"$.media.documents.fr.svgZip"}},
		{"guide.json named", func(g map[string]any) {
			g["media"].(map[string]any)["documents"] = map[string]any{"en": map[string]any{"galleryZip": "guide.json"}}
		}, []string{"$.media.documents.en.galleryZip"}},
		{"absolute file", func(g map[string]any) {
			g["media"].(map[string]any)["photos"] = []any{map[string]any{"id": "p1", "file": "/etc/passwd", "width": 1, "height": 1}}
		}, []string{"$.media.photos[0].file"}},
		{"photo negative size", func(g map[string]any) {
			g["media"].(map[string]any)["photos"] = []any{map[string]any{"id": "p1", "file": "a.jpg", "width": -1, "height": -2}}
		}, []string{"$.media.photos[0].height", "$.media.photos[0].width"}},
		{"two preferred photos", func(g map[string]any) {
			p := map[string]any{"id": "p1", "file": "a.jpg", "width": 1, "height": 1, "preferred": true}
			q := map[string]any{"id": "p2", "file": "b.jpg", "width": 1, "height": 1, "preferred": true}
			g["media"].(map[string]any)["photos"] = []any{p, q}
		}, []string{"$.media.photos"}},
		{"video not http", func(g map[string]any) { g["media"].(map[string]any)["video"] = "ftp://x.example/v" }, []string{"$.media.video"}},
		{"webhook with user", func(g map[string]any) {
			g["webhooks"] = []any{map[string]any{"url": "https://u:p@hooks.example/x"}}
		}, []string{"$.webhooks[0].url"}},
		{"webhook secret short", func(g map[string]any) {
			g["webhooks"] = []any{map[string]any{"url": "https://hooks.example/x", "secret": "whsec_c2hvcnQ="}}
		}, []string{"$.webhooks[0].secret"}},
		{"webhook secret of 24 bytes", func(g map[string]any) {
			g["webhooks"] = []any{map[string]any{"url": "https://hooks.example/x", "secret": "whsec_" + strings.Repeat("QUJD", 8)}}
		}, nil},
		{"webhook secret of 64 bytes", func(g map[string]any) {
			g["webhooks"] = []any{map[string]any{"url": "https://hooks.example/x", "secret": "whsec_" + strings.Repeat("QUJD", 21) + "QQ=="}}
		}, nil},
		{"webhook secret of 65 bytes", func(g map[string]any) {
			g["webhooks"] = []any{map[string]any{"url": "https://hooks.example/x", "secret": "whsec_" + strings.Repeat("QUJD", 21) + "QUI="}}
		}, []string{"$.webhooks[0].secret"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := sample(t)
			tt.change(g)
			data, err := json.Marshal(g)
			if err != nil {
				t.Fatal(err)
			}
			problems, err := Validate(data)
			if err != nil {
				t.Fatal(err)
			}
			var paths []string
			for _, p := range problems {
				if p.Message == "" {
					t.Errorf("%s: empty message", p.Path)
				}
				paths = append(paths, p.Path)
			}
			paths = slices.Compact(paths)
			if !slices.Equal(paths, tt.paths) {
				t.Errorf("paths %q, want %q\nproblems: %v", paths, tt.paths, problems)
			}
		})
	}
}

func TestValidateNotJSON(t *testing.T) {
	for _, data := range []string{"", "{", `{"guideId": "a"} {}`} {
		if _, err := Validate([]byte(data)); err == nil {
			t.Errorf("Validate(%q): no error", data)
		}
	}
}

func TestSchemaReturnsACopy(t *testing.T) {
	a := Schema()
	a[0] = 'x'
	if Schema()[0] != '{' {
		t.Fatal("Schema shares its bytes with callers")
	}
}

// BenchmarkValidate validates the largest fixture guide.json.
func BenchmarkValidate(b *testing.B) {
	entries, err := fs.ReadDir(fixtures.Bundles, "bundles")
	if err != nil {
		b.Fatal(err)
	}
	var data []byte
	for _, e := range entries {
		d, err := fs.ReadFile(fixtures.Bundles, "bundles/"+e.Name()+"/guide.json")
		if err != nil {
			b.Fatal(err)
		}
		if len(d) > len(data) {
			data = d
		}
	}
	if _, err := compiled(); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		problems, err := Validate(data)
		if err != nil || len(problems) > 0 {
			b.Fatal(problems, err)
		}
	}
}

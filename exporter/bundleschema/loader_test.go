package bundleschema_test

// The JSON Schema shipped for guide.json (exporter/bundleschema) and the
// bundle loader (exporter/bundle) must agree: every bundle here is fed to
// both, and both must reject it at the same JSON paths.

import (
	"encoding/json"
	"errors"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/exporter/bundleschema"
	"github.com/guidepub/guidepub/fixtures"
)

// copyBundle writes the fixture bundle folder into dir/folder, with
// guide.json replaced by guide, and returns the bundle's folder.
func copyBundle(t *testing.T, dir, folder string, guide []byte) string {
	t.Helper()
	src := "bundles/" + folder
	dst := filepath.Join(dir, folder)
	err := fs.WalkDir(fixtures.Bundles, src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(dst, filepath.FromSlash(strings.TrimPrefix(p, src)))
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := fs.ReadFile(fixtures.Bundles, p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dst, bundle.FileName), guide, 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

// fixtureGuide returns a fixture's guide.json decoded for a test to change.
func fixtureGuide(t *testing.T, folder string) map[string]any {
	t.Helper()
	data, err := fs.ReadFile(fixtures.Bundles, "bundles/"+folder+"/"+bundle.FileName)
	if err != nil {
		t.Fatal(err)
	}
	var g map[string]any
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

// loaderPaths loads the bundle at dir and returns the sorted, distinct JSON
// paths of its problems; nil when it is accepted.
func loaderPaths(t *testing.T, dir string) ([]string, []bundle.Problem) {
	t.Helper()
	_, err := bundle.Load(afero.NewOsFs(), dir)
	if err == nil {
		return nil, nil
	}
	var be *bundle.Error
	if !errors.As(err, &be) {
		t.Fatalf("Load: %v (not a *bundle.Error)", err)
	}
	var paths []string
	for _, p := range be.Problems {
		paths = append(paths, p.Path)
	}
	sort.Strings(paths)
	return slices.Compact(paths), be.Problems
}

// schemaPaths validates data against the schema and returns the sorted,
// distinct JSON paths of its problems; nil when it is valid.
func schemaPaths(t *testing.T, data []byte) ([]string, []bundleschema.Problem) {
	t.Helper()
	problems, err := bundleschema.Validate(data)
	if err != nil {
		t.Fatalf("bundleschema.Validate: %v", err)
	}
	var paths []string
	for _, p := range problems {
		paths = append(paths, p.Path)
	}
	sort.Strings(paths)
	return slices.Compact(paths), problems
}

func TestSchemaAcceptsFixtures(t *testing.T) {
	entries, err := fs.ReadDir(fixtures.Bundles, "bundles")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Run(e.Name(), func(t *testing.T) {
			data, err := fs.ReadFile(fixtures.Bundles, "bundles/"+e.Name()+"/"+bundle.FileName)
			if err != nil {
				t.Fatal(err)
			}
			dir := copyBundle(t, t.TempDir(), e.Name(), data)
			if lp, problems := loaderPaths(t, dir); lp != nil {
				t.Errorf("bundle.Load rejects the fixture: %v", problems)
			}
			if sp, problems := schemaPaths(t, data); sp != nil {
				t.Errorf("the schema rejects the fixture: %v", problems)
			}
		})
	}
}

func TestSchemaAgreesWithLoader(t *testing.T) {
	const folder = "301-king-st-e"
	obj := func(v any) map[string]any { return v.(map[string]any) }
	list := func(v any) []any { return v.([]any) }
	firstRoom := func(g map[string]any) map[string]any {
		b := obj(list(obj(g["summary"])["buildings"])[0])
		return obj(list(obj(list(b["floors"])[0])["rooms"])[0])
	}
	tests := []struct {
		name   string
		change func(g map[string]any)
		paths  []string // where both must point, sorted; nil: both accept it
	}{
		{"$schema key for editors", func(g map[string]any) { g["$schema"] = "../guide.schema.json" }, nil},
		{"guide id missing", func(g map[string]any) { delete(g, "guideId") }, []string{"$.guideId"}},
		{"guide id with a slash", func(g map[string]any) { g["guideId"] = "a/b" }, []string{"$.guideId"}},
		{"guide id a number", func(g map[string]any) { g["guideId"] = 7 }, []string{"$.guideId"}},
		{"owner missing", func(g map[string]any) { delete(g, "ownerId") }, []string{"$.ownerId"}},
		{"owner blank", func(g map[string]any) { g["ownerId"] = " " }, []string{"$.ownerId"}},
		{"work order missing", func(g map[string]any) { delete(g, "workOrderId") }, []string{"$.workOrderId"}},
		{"unknown top-level field", func(g map[string]any) { g["colour"] = "red" }, []string{"$.colour"}},
		{"unknown nested field", func(g map[string]any) { obj(g["property"])["planet"] = "Earth" }, []string{"$.property.planet"}},
		{"alias reserved", func(g map[string]any) { g["alias"] = "metrics" }, []string{"$.alias"}},
		{"unknown addon", func(g map[string]any) { g["addons"] = []any{"vr", "maps"} }, []string{"$.addons[1]"}},
		{"addon twice", func(g map[string]any) { g["addons"] = []any{"vr", "advmeas", "vr"} }, []string{"$.addons[2]"}},
		{"hidden feature twice", func(g map[string]any) {
			obj(list(g["views"])[0])["hidden"] = []any{"video", "photos", "video"}
		}, []string{"$.views[0].hidden[2]"}},
		{"country lower case", func(g map[string]any) { obj(g["property"])["country"] = "ca" }, []string{"$.property.country"}},
		{"latitude out of range", func(g map[string]any) { obj(obj(g["property"])["location"])["lat"] = -91 }, []string{"$.property.location.lat"}},
		{"banner website not http", func(g map[string]any) { obj(g["banner"])["website"] = "ftp://x.example" }, []string{"$.banner.website"}},
		{"standard unknown", func(g map[string]any) { obj(g["summary"])["measurementStandard"] = "iso" }, []string{"$.summary.measurementStandard"}},
		{"one dim", func(g map[string]any) { firstRoom(g)["dims"] = []any{1200} }, []string{"$.summary.buildings[0].floors[0].rooms[0].dims"}},
		{"three dims", func(g map[string]any) { firstRoom(g)["dims"] = []any{1, 2, 3} }, []string{"$.summary.buildings[0].floors[0].rooms[0].dims"}},
		{"negative area", func(g map[string]any) { firstRoom(g)["area"] = -5 }, []string{"$.summary.buildings[0].floors[0].rooms[0].area"}},
		{"room id a fraction", func(g map[string]any) { firstRoom(g)["id"] = 1.5 }, []string{"$.summary.buildings[0].floors[0].rooms[0].id"}},
		{"no main building", func(g map[string]any) {
			for _, b := range list(obj(g["summary"])["buildings"]) {
				obj(b)["isMainBuilding"] = false
			}
		}, []string{"$.summary.buildings"}},
		{"no views", func(g map[string]any) { g["views"] = []any{} }, []string{"$.views"}},
		{"no default view", func(g map[string]any) {
			for _, v := range list(g["views"]) {
				delete(obj(v), "default")
			}
		}, []string{"$.views"}},
		{"unknown hidden feature", func(g map[string]any) { obj(list(g["views"])[0])["hidden"] = []any{"maps"} }, []string{"$.views[0].hidden[0]"}},
		{"unknown units", func(g map[string]any) { obj(list(g["views"])[0])["units"] = "furlongs" }, []string{"$.views[0].units"}},
		{"view plans", func(g map[string]any) {
			obj(list(g["views"])[1])["plans"] = map[string]any{"en": map[string]any{"pdfMetric": "doc/floorplan_metric_fr.pdf",
				"jpgMetric": []any{map[string]any{"id": 1, "floorName": "Main Floor", "file": "doc/floor_metric_en_1.jpg"}}}}
		}, nil},
		{"view plans with a kind that is no plan", func(g map[string]any) {
			obj(list(g["views"])[1])["plans"] = map[string]any{"en": map[string]any{"galleryZip": "doc/gallery.zip"}}
		}, []string{"$.views[1].plans.en.galleryZip"}},
		{"view plans in an unknown language", func(g map[string]any) {
			obj(list(g["views"])[1])["plans"] = map[string]any{"de": map[string]any{"pdfMetric": "doc/floorplan_metric_fr.pdf"}}
		}, []string{"$.views[1].plans.de"}},
		{"view plans of a view hiding floor plans", func(g map[string]any) {
			v := obj(list(g["views"])[1])
			v["hidden"] = []any{"floorPlans"}
			v["plans"] = map[string]any{"en": map[string]any{"pdfMetric": "doc/floorplan_metric_fr.pdf"}}
		}, []string{"$.views[1].plans"}},
		{"view id reserved", func(g map[string]any) { obj(list(g["views"])[0])["viewId"] = "API" }, []string{"$.views[0].viewId"}},
		{"expiry not a time", func(g map[string]any) { obj(list(g["views"])[0])["expiresAt"] = "soon" }, []string{"$.views[0].expiresAt"}},
		{"unknown language", func(g map[string]any) { obj(g["media"])["documents"] = map[string]any{"de": map[string]any{}} }, []string{"$.media.documents.de"}},
		{"file outside the bundle", func(g map[string]any) {
			obj(g["media"])["documents"] = map[string]any{"en": map[string]any{"pdfMetric": "../other/plan.pdf"}}
		}, []string{"$.media.documents.en.pdfMetric"}},
		{"hidden file", func(g map[string]any) {
			obj(g["media"])["documents"] = map[string]any{"en": map[string]any{"svgZip": "doc/.secret.zip"}}
		}, []string{"$.media.documents.en.svgZip"}},
		{"guide.json as a document", func(g map[string]any) {
			obj(g["media"])["documents"] = map[string]any{"en": map[string]any{"galleryZip": "guide.json"}}
		}, []string{"$.media.documents.en.galleryZip"}},
		{"photo width negative", func(g map[string]any) {
			obj(g["media"])["photos"] = []any{map[string]any{"id": "p1", "file": "doc/embed_preview.jpg", "width": -1}}
		}, []string{"$.media.photos[0].width"}},
		{"banner image without a banner", func(g map[string]any) {
			delete(g, "banner")
			obj(g["media"])["bannerImage"] = map[string]any{"file": "photos/front.jpg"}
		}, []string{"$.banner"}},
		{"banner image a hidden file", func(g map[string]any) {
			obj(g["media"])["bannerImage"] = map[string]any{"file": "photos/.agent.jpg"}
		}, []string{"$.media.bannerImage.file"}},
		{"banner image width negative", func(g map[string]any) {
			obj(g["media"])["bannerImage"] = map[string]any{"file": "photos/front.jpg", "width": -3}
		}, []string{"$.media.bannerImage.width"}},
		{"photo without file", func(g map[string]any) {
			obj(g["media"])["photos"] = []any{map[string]any{"id": "p1", "width": 10, "height": 10}}
		}, []string{"$.media.photos[0].file"}},
		{"email with a hidden query", func(g map[string]any) {
			obj(g["banner"])["emails"] = []any{"jane@example.com", "a@b.c?bcc=spy@evil.example"}
		}, []string{"$.banner.emails[1]"}},
		{"email with a display name", func(g map[string]any) { obj(g["banner"])["emails"] = []any{"Jane <jane@example.com>"} }, []string{"$.banner.emails[0]"}},
		{"email without a dot in the domain", func(g map[string]any) { obj(g["banner"])["emails"] = []any{"jane@localhost"} }, []string{"$.banner.emails[0]"}},
		{"email with a double dot", func(g map[string]any) { obj(g["banner"])["emails"] = []any{"jane..doe@example.com"} }, []string{"$.banner.emails[0]"}},
		{"email of other scripts", func(g map[string]any) {
			obj(g["banner"])["emails"] = []any{"émilie.o'brien+ventes@immobilier-plateau.québec"}
		}, nil},
		{"video not a URL", func(g map[string]any) { obj(g["media"])["video"] = "not a url" }, []string{"$.media.video"}},
		{"webhook URL with a password", func(g map[string]any) {
			g["webhooks"] = []any{map[string]any{"url": "https://user:pw@hooks.example/in"}}
		}, []string{"$.webhooks[0].url"}},
		{"webhook secret without prefix", func(g map[string]any) {
			g["webhooks"] = []any{map[string]any{"url": "https://hooks.example/in", "secret": strings.Repeat("QUJD", 8)}}
		}, []string{"$.webhooks[0].secret"}},
		{"webhook secret too short", func(g map[string]any) {
			g["webhooks"] = []any{map[string]any{"url": "https://hooks.example/in", "secret": "whsec_QUJD"}}
		}, []string{"$.webhooks[0].secret"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := fixtureGuide(t, folder)
			tt.change(g)
			data, err := json.MarshalIndent(g, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			dir := copyBundle(t, t.TempDir(), folder, data)
			lp, lprob := loaderPaths(t, dir)
			sp, sprob := schemaPaths(t, data)
			if !slices.Equal(lp, tt.paths) {
				t.Errorf("bundle.Load points at %q, want %q\n%v", lp, tt.paths, lprob)
			}
			if !slices.Equal(sp, tt.paths) {
				t.Errorf("the schema points at %q, want %q\n%v", sp, tt.paths, sprob)
			}
		})
	}
}

// schemaMutationValues are what TestSchemaAndLoaderAcceptAlike puts in
// place of values of the fixtures: each kind of JSON value, and strings
// and numbers near the rules' edges.
var schemaMutationValues = []any{
	nil, true, false, 0, -1, 1.5, 1e300, json.Number("1e2"), json.Number("9223372036854775808"),
	"", " ", "x", "api", "API", "a/b", "../x", "doc//a", `a\b`, "guide.json", "en", "ready", "rms",
	"imperial", "maps", "whsec_", "whsec_QUJDQUJDQUJDQUJDQUJDQUJDQUJDQUJDQUJD", "https://a.example",
	"http://u@x.example", "2020-01-01T00:00:00Z", []any{}, []any{1}, []any{1, 2}, map[string]any{},
	map[string]any{"x": 1},
}

// schemaMutate changes one value somewhere in v (decoded JSON) and returns
// the result.
func schemaMutate(r *rand.Rand, v any) any {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 || r.Intn(4) == 0 {
			return schemaMutationValues[r.Intn(len(schemaMutationValues))]
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		k := keys[r.Intn(len(keys))]
		switch r.Intn(5) {
		case 0:
			delete(x, k)
		case 1:
			x[k] = schemaMutationValues[r.Intn(len(schemaMutationValues))]
		default:
			x[k] = schemaMutate(r, x[k])
		}
		return x
	case []any:
		if len(x) == 0 || r.Intn(4) == 0 {
			return schemaMutationValues[r.Intn(len(schemaMutationValues))]
		}
		i := r.Intn(len(x))
		switch r.Intn(4) {
		case 0:
			return append(x[:i], x[i+1:]...)
		case 1:
			return append(x, x[i])
		default:
			x[i] = schemaMutate(r, x[i])
		}
		return x
	default:
		return schemaMutationValues[r.Intn(len(schemaMutationValues))]
	}
}

// TestSchemaAndLoaderAcceptAlike mutates the fixtures at random (with a
// fixed seed) and requires the schema and bundle.Parse to accept and
// reject the same documents, except where a JSON Schema cannot say what
// the loader checks: ids and URLs unique within their lists, and integers
// written with a fraction or an exponent (1.0, 1e2), which JSON Schema
// counts as integers.
func TestSchemaAndLoaderAcceptAlike(t *testing.T) {
	inexpressible := regexp.MustCompile(`is already (used|listed) at|expected an integer, got`)
	entries, err := fs.ReadDir(fixtures.Bundles, "bundles")
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewSource(1))
	for _, e := range entries {
		data, err := fs.ReadFile(fixtures.Bundles, "bundles/"+e.Name()+"/"+bundle.FileName)
		if err != nil {
			t.Fatal(err)
		}
		for range 400 {
			var g any
			if err := json.Unmarshal(data, &g); err != nil {
				t.Fatal(err)
			}
			for range 1 + r.Intn(2) {
				g = schemaMutate(r, g)
			}
			doc, err := json.Marshal(g)
			if err != nil {
				t.Fatal(err)
			}
			_, loader := bundle.Parse(doc)
			schema, err := bundleschema.Validate(doc)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case len(schema) > 0 && len(loader) == 0:
				t.Errorf("the schema rejects what guidepub accepts: %v\n%s", schema, doc)
			case len(schema) == 0 && len(loader) > 0:
				for _, p := range loader {
					if !inexpressible.MatchString(p.Message) {
						t.Errorf("guidepub rejects what the schema accepts: %v\n%s", p, doc)
					}
				}
			}
		}
	}
}

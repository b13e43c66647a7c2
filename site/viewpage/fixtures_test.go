package viewpage

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"testing"

	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/fixtures"
	"github.com/guidepub/guidepub/site"
)

// goldenPublic is the exporter's golden public tree: the already rendered
// documents of every sample view.
var goldenPublic = filepath.Join("..", "..", "fixtures", "golden", "public")

// Public hosts the sample documents link to.
const (
	viewHost      = "https://view.example.test"
	unbrandedHost = "https://unbranded.example.test"
)

// sample is one published folder (view id or alias) of a sample bundle.
type sample struct {
	Folder string // published folder: view id or alias
	Bundle string
	Guide  *bundle.Guide
	View   *bundle.View
	Docs   Docs
	Input  Input
}

// samples reads every sample bundle and the golden documents of its views
// and alias, in folder order.
func samples(t testing.TB) []sample {
	t.Helper()
	dirs, err := fs.ReadDir(fixtures.Bundles, "bundles")
	if err != nil {
		t.Fatal(err)
	}
	var out []sample
	for _, d := range dirs {
		raw, err := fs.ReadFile(fixtures.Bundles, "bundles/"+d.Name()+"/guide.json")
		if err != nil {
			t.Fatal(err)
		}
		var g bundle.Guide
		if err := json.Unmarshal(raw, &g); err != nil {
			t.Fatalf("%s: %v", d.Name(), err)
		}
		for i := range g.Views {
			v := &g.Views[i]
			ids := []string{v.ViewID}
			if v.Default && g.Alias != "" {
				ids = append(ids, g.Alias)
			}
			for _, id := range ids {
				s, ok := loadSample(t, id, d.Name(), &g, v)
				if ok {
					out = append(out, s)
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Folder < out[j].Folder })
	return out
}

func loadSample(t testing.TB, folder, bundleName string, g *bundle.Guide, v *bundle.View) (sample, bool) {
	t.Helper()
	dir := filepath.Join(goldenPublic, folder)
	var st site.StatusDoc
	if !readJSON(t, filepath.Join(dir, site.StatusFile), &st) {
		return sample{}, false // not published (an invalid sample)
	}
	d := Docs{Status: st.Status}
	var sum site.SummaryDoc
	if readJSON(t, filepath.Join(dir, site.SummaryFile), &sum) {
		d.Summary = sum.Summary
	}
	var af site.AutofillDoc
	if readJSON(t, filepath.Join(dir, site.AutofillFile), &af) && len(af.Value) == 1 {
		d.Autofill = &af.Value[0]
	}
	units := v.Units
	if units == "" {
		units = Metric
		if g.Property.Country == "US" {
			units = Imperial
		}
	}
	prop := g.Property
	e := Extra{
		ViewID: v.ViewID, Units: units, Hidden: v.Hidden,
		Expired:      st.Status == site.StatusLocked && !v.Locked,
		Property:     &prop,
		Banner:       g.Banner,
		BrandedURL:   viewHost + "/" + v.ViewID,
		UnbrandedURL: unbrandedHost + "/" + v.ViewID,
		EmbedURL:     viewHost + "/embed/" + v.ViewID,
		Languages:    sortedLangs(g.Media.Documents),
		Default:      g.DefaultLanguage,
		Documents:    documentsOf(g, viewHost+"/"+v.ViewID+"/doc/"),
		BannerImage:  bannerImageOf(g, viewHost+"/"+v.ViewID+"/doc/"),
	}
	return sample{Folder: folder, Bundle: bundleName, Guide: g, View: v, Docs: d, Input: FromDocs(d, e)}, true
}

// sortedLangs returns the languages of docs in site.Languages order.
func sortedLangs(docs map[string]bundle.Documents) []string {
	var out []string
	for _, l := range site.Languages {
		if _, ok := docs[l]; ok {
			out = append(out, l)
		}
	}
	return out
}

// documentsOf lists the floor plan documents of g as the exporter
// publishes them under the view's doc folder docURL (names as in
// docs/documents.md#public-media).
func documentsOf(g *bundle.Guide, docURL string) []LanguageDocs {
	var out []LanguageDocs
	for _, lang := range sortedLangs(g.Media.Documents) {
		d := g.Media.Documents[lang]
		ld := LanguageDocs{Lang: lang}
		for _, k := range site.DocumentKinds {
			if k.Units == "" {
				continue
			}
			if !k.FloorPages {
				if f := d.File(k.Key); f != "" {
					ld.PDFs = append(ld.PDFs, PDF{Units: k.Units, URL: docURL + lang + "/" + k.Key + filepath.Ext(f)})
				}
				continue
			}
			for _, f := range d.FloorImages(k.Key) {
				ld.Pages = append(ld.Pages, PlanPage{Units: k.Units, FloorID: f.ID, Floor: f.FloorName, URL: docURL + lang + "/" + k.Key + "-" + strconv.Itoa(f.ID) + filepath.Ext(f.File), Width: f.Width, Height: f.Height})
			}
		}
		out = append(out, ld)
	}
	return out
}

// bannerImageOf returns the banner image of g as the exporter publishes
// it under the view's doc folder docURL, nil when g has none.
func bannerImageOf(g *bundle.Guide, docURL string) *Rendition {
	bi := g.Media.BannerImage
	if bi == nil || g.Banner == nil {
		return nil
	}
	return &Rendition{URL: docURL + "banner" + filepath.Ext(bi.File), Width: bi.Width, Height: bi.Height}
}

// readJSON decodes the file at p into v; false when it does not exist.
func readJSON(t testing.TB, p string, v any) bool {
	t.Helper()
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	return true
}

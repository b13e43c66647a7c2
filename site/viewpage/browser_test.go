package viewpage

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/guidepub/guidepub/fixtures"
	"github.com/guidepub/guidepub/site"
)

// npmDir holds package.json and the lockfile of the page checkers.
var npmDir = filepath.Join("testdata", "npm")

// npmTools returns the absolute checker folder, running npm ci there when
// node_modules is missing. It skips (or fails, see fixtures.Missing) when
// node or npm is absent.
func npmTools(t *testing.T) string {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			fixtures.Missing(t, tool, err.Error())
		}
	}
	dir, err := filepath.Abs(npmDir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules")); err != nil {
		cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			fixtures.Missing(t, "npm packages", fmt.Sprintf("npm ci in %s: %v\n%s", dir, err, out))
		}
	}
	return dir
}

// chromium returns the Chromium binary: $GUIDEPUB_CHROMIUM or Debian's.
func chromium(t *testing.T) string {
	t.Helper()
	p := os.Getenv("GUIDEPUB_CHROMIUM")
	if p == "" {
		p = "/usr/bin/chromium"
	}
	if _, err := os.Stat(p); err != nil {
		fixtures.Missing(t, "Chromium", err.Error())
	}
	return p
}

// outDir is where screenshots and reports go: $GUIDEPUB_PAGE_OUT or a
// temporary folder.
func outDir(t *testing.T) string {
	t.Helper()
	d := os.Getenv("GUIDEPUB_PAGE_OUT")
	if d == "" {
		return t.TempDir()
	}
	d, err := filepath.Abs(d)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

// pageServer serves the pages of the sample views at the real URL shapes on
// one listener: /{viewId} (branded), /u/{viewId} (unbranded),
// /embed/{viewId}, with the headers the pages need, plus generated images of
// the declared sizes for the media, and /frame/{viewId}, a host page that
// embeds the embedded page in an iframe.
type pageServer struct {
	*httptest.Server
	mu     sync.Mutex
	pages  map[string][]byte
	kinds  map[string]Kind
	images map[string][2]int
	cache  map[string][]byte
}

func newPageServer(t *testing.T, folders ...string) *pageServer {
	t.Helper()
	ps := &pageServer{pages: map[string][]byte{}, kinds: map[string]Kind{}, images: map[string][2]int{}, cache: map[string][]byte{}}
	ps.Server = httptest.NewServer(http.HandlerFunc(ps.serve))
	t.Cleanup(ps.Close)
	all := samples(t)
	for _, f := range folders {
		var s *sample
		for i := range all {
			if all[i].Folder == f {
				s = &all[i]
			}
		}
		if s == nil {
			t.Fatalf("no sample %s", f)
		}
		in := ps.localInput(t, s)
		for _, lang := range in.Languages {
			for _, k := range Kinds {
				b, err := Render(k, &in, lang)
				if err != nil {
					t.Fatal(err)
				}
				p := strings.TrimPrefix(in.PageURL(k, lang), ps.URL)
				ps.pages[p], ps.kinds[p] = b, k
			}
		}
	}
	return ps
}

// localInput is the sample's input with every link to the sample hosts
// pointing at this server.
func (ps *pageServer) localInput(t *testing.T, s *sample) Input {
	t.Helper()
	d := s.Docs
	if d.Autofill != nil {
		af := *d.Autofill
		af.Media = nil
		for _, m := range d.Autofill.Media {
			m.MediaURL = strings.Replace(m.MediaURL, viewHost, ps.URL, 1)
			if u, err := url.Parse(m.MediaURL); err == nil && m.ImageWidth > 0 {
				ps.images[u.Path] = [2]int{m.ImageWidth, m.ImageHeight}
			}
			af.Media = append(af.Media, m)
		}
		d.Autofill = &af
	}
	e := extraOf(*s)
	e.Hidden, e.Expired = s.View.Hidden, s.Input.Expired
	e.BrandedURL = ps.URL + "/" + s.View.ViewID
	e.UnbrandedURL = ps.URL + "/u/" + s.View.ViewID
	e.EmbedURL = ps.URL + "/embed/" + s.View.ViewID
	e.Documents = documentsOf(s.Guide, ps.URL+"/"+s.View.ViewID+"/doc/")
	if e.BannerImage = bannerImageOf(s.Guide, ps.URL+"/"+s.View.ViewID+"/doc/"); e.BannerImage != nil {
		if u, err := url.Parse(e.BannerImage.URL); err == nil {
			ps.images[u.Path] = [2]int{e.BannerImage.Width, e.BannerImage.Height}
		}
	}
	for _, ld := range e.Documents {
		for _, pg := range ld.Pages {
			if u, err := url.Parse(pg.URL); err == nil {
				ps.images[u.Path] = [2]int{pg.Width, pg.Height}
			}
		}
	}
	if s.View.ViewID == "vKT301A" {
		// Every interface language, and renditions of the plans and
		// photos (as the exporter's media step makes them), so srcset is
		// rendered and loaded.
		e.Languages = PageLanguages
		e.Renditions = map[string][]Rendition{}
		add := func(u string, w, h int) {
			for _, rw := range []int{480, 960, 1600} { // the exporter's widths
				if rw >= w {
					continue
				}
				ru := strings.TrimSuffix(u, path.Ext(u)) + "-" + strconv.Itoa(rw) + "w.jpg"
				rh := h * rw / w
				e.Renditions[u] = append(e.Renditions[u], Rendition{URL: ru, Width: rw, Height: rh})
				if pu, err := url.Parse(ru); err == nil {
					ps.images[pu.Path] = [2]int{rw, rh}
				}
			}
		}
		for _, ld := range e.Documents {
			for _, pg := range ld.Pages {
				add(pg.URL, pg.Width, pg.Height)
			}
		}
		for _, m := range d.Autofill.Media {
			if m.MediaCategory == "Photo" && m.ImageWidth > 480 { // not the small copies
				add(m.MediaURL, m.ImageWidth, m.ImageHeight)
			}
		}
	}
	return FromDocs(d, e)
}

func (ps *pageServer) serve(w http.ResponseWriter, r *http.Request) {
	if b, ok := ps.pages[r.URL.Path]; ok {
		k := ps.kinds[r.URL.Path]
		w.Header().Set("Content-Type", ContentType)
		w.Header().Set("Content-Security-Policy", CSP(k, ""))
		if fo := FrameOptions(k); fo != "" {
			w.Header().Set("X-Frame-Options", fo)
		}
		w.Header().Set("Vary", "Accept-Encoding")
		if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			// Served precompressed, as the exported tree is.
			w.Header().Set("Content-Encoding", "gzip")
			gz := gzip.NewWriter(w)
			gz.Write(b)
			gz.Close()
			return
		}
		w.Write(b)
		return
	}
	if r.URL.Path == "/"+StylesheetPath {
		// As every server of the tree sends it (site's headers).
		w.Header().Set("Content-Type", site.ContentType(StylesheetPath))
		w.Header().Set("Cache-Control", site.CacheControl(StylesheetPath))
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Write(css)
		return
	}
	if r.URL.Path == "/robots.txt" {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprint(w, "User-agent: *\nAllow: /\n")
		return
	}
	if id, ok := strings.CutPrefix(r.URL.Path, "/frame/"); ok {
		width := "100%"
		if r.URL.Query().Get("small") != "" {
			width = "300"
		}
		w.Header().Set("Content-Type", ContentType)
		fmt.Fprintf(w, `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><link rel="icon" href="data:,"><title>Listing</title></head>`+
			`<body style="margin:0;font-family:sans-serif"><main><h1 style="font-size:1.2rem;padding:0 8px">A listing site</h1>`+
			`<iframe src="/embed/%s" title="Property guide" width="%s" height="400" style="border:0;display:block"></iframe></main></body></html>`, id, width)
		return
	}
	size, ok := ps.images[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	b, ok := ps.cache[r.URL.Path]
	if !ok {
		img := image.NewRGBA(image.Rect(0, 0, size[0], size[1]))
		for y := 0; y < size[1]; y++ {
			for x := 0; x < size[0]; x++ {
				img.Set(x, y, color.RGBA{uint8(120 + x*80/size[0]), uint8(140 + y*60/size[1]), 170, 255})
			}
		}
		var buf bytes.Buffer
		if path.Ext(r.URL.Path) == ".png" {
			png.Encode(&buf, img)
		} else {
			jpeg.Encode(&buf, img, &jpeg.Options{Quality: 60})
		}
		b = buf.Bytes()
		ps.cache[r.URL.Path] = b
	}
	ct := "image/jpeg"
	if path.Ext(r.URL.Path) == ".png" {
		ct = "image/png"
	}
	w.Header().Set("Content-Type", ct)
	w.Write(b)
}

// browserPage is one page load of check.mjs.
type browserPage struct {
	Name        string            `json:"name"`
	URL         string            `json:"url"`
	Width       int               `json:"width"`
	Height      int               `json:"height"`
	Screenshot  string            `json:"screenshot,omitempty"`
	Clip        int               `json:"clip,omitempty"` // also a screenshot of the top this high
	Status      int               `json:"status"`
	Headers     map[string]string `json:"headers"`
	Requests    []string          `json:"requests"`
	Console     []string          `json:"console"`
	Text        string            `json:"text"`
	Frames      int               `json:"frames"`
	ScrollWidth int               `json:"scrollWidth"`
	Overflow    []int             `json:"overflow"`
	Images      []struct {
		Src      string `json:"src"`
		Complete bool   `json:"complete"`
		Natural  int    `json:"natural"`
		W        string `json:"w"`
		H        string `json:"h"`
	} `json:"images"`
	Axe []struct {
		ID     string   `json:"id"`
		Impact string   `json:"impact"`
		Help   string   `json:"help"`
		Nodes  []string `json:"nodes"`
	} `json:"axe"`
	AxeError string `json:"axeError"`
	DOM      struct {
		Lang       string   `json:"lang"`
		Hreflang   []string `json:"hreflang"`
		OffOrigin  []string `json:"offOrigin"`
		PlanFirst  bool     `json:"planFirst"`
		Plans      int      `json:"plans"`
		Srcset     int      `json:"srcset"`
		WideTables []string `json:"wideTables"`
	} `json:"dom"`
	PDF   string `json:"pdf"`
	Bytes int64  `json:"bytes"`
	// What the test expects, not sent to check.mjs.
	lang      string
	langs     int
	sameOrig  bool
	plans     bool
	srcset    bool
	must, not []string
}

// runBrowser loads pages with check.mjs and returns its report.
func runBrowser(t *testing.T, pages []browserPage) []browserPage {
	t.Helper()
	dir := npmTools(t)
	job, _ := json.Marshal(map[string]any{"chrome": chromium(t), "pages": pages})
	jf := filepath.Join(t.TempDir(), "job.json")
	if err := os.WriteFile(jf, job, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", filepath.Join(dir, "check.mjs"), jf)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("check.mjs: %v\n%s", err, stderr.String())
	}
	var rep []browserPage
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("check.mjs report: %v", err)
	}
	if len(rep) != len(pages) {
		t.Fatalf("%d pages reported, %d loaded", len(rep), len(pages))
	}
	return rep
}

// TestBrowser loads the branded, unbranded and (inside an iframe) embedded
// pages of a sample view, a locked view, and a view with hidden features
// in headless Chromium at 375 and 1280 px: zero axe-core violations, no
// request outside the page's origin, no console message (a CSP violation
// would log one), every image loaded with its size set, no horizontal
// overflow, and the text that must and must not show. Screenshots go to
// $GUIDEPUB_PAGE_OUT (or a temporary folder).
func TestBrowser(t *testing.T) {
	ps := newPageServer(t, "vKT301A", "vMAPLE-locked", "vMAPLE-nomedia", "vMAPLE-metric", "vMAPLE-main", "vSTDENIS")
	out := outDir(t)
	wide := map[int]int{375: 812, 1280: 900}
	var pages []browserPage
	add := func(name, p string, widths []int, c browserPage) {
		for _, w := range widths {
			c.Name, c.URL, c.Width, c.Height = name, ps.URL+p, w, wide[w]
			c.Screenshot = filepath.Join(out, fmt.Sprintf("%s-%d.png", name, w))
			pages = append(pages, c)
		}
	}
	both, phone := []int{375, 1280}, []int{375}
	// vKT301A is metric (Canada); its pages come in every language.
	add("branded", "/vKT301A", both, browserPage{lang: "en", langs: 5, plans: true, srcset: true,
		must: []string{"Jane Example", "Example Realty", "Measurements", "Living Room", "25.79 m²", "14′ 1″ × 19′ 8″", "Interior area: 224.55 m²", "Detached Garage", "Instagram", "Cold room", "Show on a map", "Watch the video tour", "Floor plans", "Main Floor", "Photos", "Français"},
		not:  []string{"277.62", "ColdRoom", "Page 1"}})
	add("unbranded", "/u/vKT301A", both, browserPage{lang: "en", langs: 5, sameOrig: true, plans: true, srcset: true,
		must: []string{"Measurements", "Living Room", "25.79 m²", "Floor plans", "Photos"},
		not:  []string{"Jane Example", "Example Realty", "video", "map", "full guide", "519 555"}})
	add("unbranded-fr", "/u/vKT301A/fr", phone, browserPage{lang: "fr", langs: 5, sameOrig: true, plans: true, srcset: true,
		must: []string{"Mesures", "Salon", "25,79 m²", "Plans"}, not: []string{"Jane Example", "Measurements"}})
	for _, l := range []string{"fr", "es", "it", "zh"} {
		add("branded-"+l, "/vKT301A/"+l, phone, browserPage{lang: l, langs: 5, plans: true, srcset: true, must: []string{"Jane Example"}})
	}
	add("embed", "/frame/vKT301A", both, browserPage{lang: "en", must: []string{"A listing site", "Open the full guide", "Living Room", "Jane Example"}})
	// The embedded page itself, not in a frame: axe and the image checks
	// look at the top frame only.
	add("embedded", "/embed/vKT301A", both, browserPage{lang: "en", langs: 5, plans: true, srcset: true, must: []string{"Open the full guide", "Living Room", "Photos", "Jane Example"}})
	add("small", "/frame/vKT301A?small=1", phone, browserPage{lang: "en", must: []string{"Open the full guide", "Living Room"}})
	add("locked", "/vMAPLE-locked", phone, browserPage{lang: "en", langs: 2, sameOrig: true, must: []string{"not available"}, not: []string{"Maple Ave", "Measurements"}})
	add("nomedia", "/vMAPLE-nomedia", phone, browserPage{lang: "en", langs: 2, must: []string{"Measurements"}, not: []string{"Maple Ave", "Floor plans", "Photos", "video"}})
	add("metric", "/embed/vMAPLE-metric", phone, browserPage{lang: "en", langs: 2, plans: true, must: []string{"Open the full guide", "Floor plans"}, not: []string{"Measurements"}})
	// The US (ANSI) guide: imperial, its headline the main building's
	// finished area above grade, and its Spanish page.
	add("ansi", "/vMAPLE-main", both, browserPage{lang: "en", langs: 2, plans: true, must: []string{"Finished area above grade:", "sq ft"}})
	add("ansi-es", "/u/vMAPLE-main/es", phone, browserPage{lang: "es", langs: 2, sameOrig: true, plans: true, must: []string{"Medidas"}})
	// Montréal: French by default, plan pages only in French, every
	// language's PDFs linked.
	add("montreal", "/vSTDENIS", both, browserPage{lang: "fr", langs: 3, plans: true, must: []string{"Rez-de-chaussée", "Étage", "Sous-sol", "Mesures", "Métrique, 中文", "Impérial, English"}})
	add("montreal-en", "/u/vSTDENIS/en", phone, browserPage{lang: "en", langs: 3, sameOrig: true, plans: true, must: []string{"Rez-de-chaussée", "Measurements"}})
	add("montreal-zh", "/vSTDENIS/zh", phone, browserPage{lang: "zh", langs: 3, plans: true, must: []string{"平面图"}})
	// Print: the branded page to a Letter PDF; the tops of the branded
	// page for docs/images.
	pages[0].PDF = filepath.Join(out, "branded-print.pdf")
	pages[0].Clip, pages[1].Clip = 2000, 1300
	rep := runBrowser(t, pages)
	for i, p := range rep {
		want := pages[i]
		name := fmt.Sprintf("%s@%d", p.Name, want.Width)
		if p.Status != 200 {
			t.Errorf("%s: status %d", name, p.Status)
		}
		if p.AxeError != "" {
			t.Errorf("%s: axe failed: %s", name, p.AxeError)
		}
		for _, v := range p.Axe {
			t.Errorf("%s: axe %s (%s): %s at %v", name, v.ID, v.Impact, v.Help, v.Nodes)
		}
		for _, r := range p.Requests {
			if !strings.HasPrefix(r, ps.URL+"/") {
				t.Errorf("%s: request outside the page's origin: %s", name, r)
			}
		}
		for _, m := range p.Console {
			t.Errorf("%s: console: %s", name, m)
		}
		if len(p.Overflow) != p.Frames || p.Frames == 0 {
			t.Errorf("%s: overflow measured for %d of %d frames", name, len(p.Overflow), p.Frames)
		}
		for i, o := range p.Overflow {
			if o > 0 {
				t.Errorf("%s: frame %d is %d px wider than its viewport", name, i, o)
			}
		}
		if p.ScrollWidth > want.Width {
			t.Errorf("%s: page is %d px wide", name, p.ScrollWidth)
		}
		for _, w := range p.DOM.WideTables {
			t.Errorf("%s: table wider than its box: %s", name, w)
		}
		for _, img := range p.Images {
			if !img.Complete || img.Natural == 0 || img.W == "" || img.H == "" {
				t.Errorf("%s: image %s not loaded or without width/height", name, img.Src)
			}
		}
		if want.sameOrig && len(p.DOM.OffOrigin) > 0 {
			t.Errorf("%s: links or resources outside the origin: %v", name, p.DOM.OffOrigin)
		}
		if p.DOM.Lang != want.lang {
			t.Errorf("%s: lang %q, want %q", name, p.DOM.Lang, want.lang)
		}
		if want.langs > 1 {
			// One alternate per language and x-default, each page naming
			// itself among them.
			self := false
			for _, h := range p.DOM.Hreflang {
				self = self || h == want.lang+" "+want.URL
			}
			if len(p.DOM.Hreflang) != want.langs+1 || !self {
				t.Errorf("%s: hreflang alternates %v", name, p.DOM.Hreflang)
			}
		}
		if want.plans && (p.DOM.Plans == 0 || !p.DOM.PlanFirst) {
			t.Errorf("%s: %d plan images, first before the first table: %v", name, p.DOM.Plans, p.DOM.PlanFirst)
		}
		if want.srcset && p.DOM.Srcset < p.DOM.Plans+1 {
			t.Errorf("%s: %d images with srcset", name, p.DOM.Srcset)
		}
		text := strings.ReplaceAll(p.Text, nbsp, " ")
		for _, m := range want.must {
			if !strings.Contains(text, m) {
				t.Errorf("%s: %q does not show", name, m)
			}
		}
		for _, m := range want.not {
			if strings.Contains(strings.ToLower(text), strings.ToLower(m)) {
				t.Errorf("%s: %q shows", name, m)
			}
		}
	}
	if pdf := rep[0].PDF; pdf != "" {
		n := pdfPages(t, pdf)
		t.Logf("print to PDF (Letter) of the branded page of vKT301A: %d pages, %s", n, pdf)
		if n == 0 || n > 6 {
			t.Errorf("the branded page prints on %d Letter pages, want 1 to 6", n)
		}
	} else {
		t.Error("no PDF printed")
	}
	t.Logf("screenshots in %s", out)
}

// pdfPages counts the pages of the PDF file p (its page objects).
func pdfPages(t *testing.T, p string) int {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return len(regexp.MustCompile(`/Type\s*/Page[^s]`).FindAll(b, -1))
}

// TestNuHTMLChecker validates every golden page and the pages' stylesheet
// with the Nu HTML Checker (vnu-jar): no errors and no warnings.
func TestNuHTMLChecker(t *testing.T) {
	if _, err := exec.LookPath("java"); err != nil {
		fixtures.Missing(t, "java", err.Error())
	}
	dir := npmTools(t)
	files, err := filepath.Glob(filepath.Join("testdata", "golden", "*", "*.html"))
	if err != nil || len(files) < 30 {
		t.Fatalf("golden pages: %d, %v", len(files), err)
	}
	// A 40-room page in every interface language, and the 404 page.
	tmp := t.TempDir()
	in := bigInput(40)
	in.Languages = PageLanguages
	for _, lang := range PageLanguages {
		big := filepath.Join(tmp, "big-branded-"+lang+".html")
		b, err := Render(Branded, &in, lang)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(big, b, 0o644)
		files = append(files, big)
	}
	nf := filepath.Join(tmp, "404.html")
	os.WriteFile(nf, NotFound, 0o644)
	files = append(files, nf)
	// The pages' stylesheet: --also-check-css checks the .css files.
	sheet := filepath.Join(tmp, path.Base(StylesheetPath))
	os.WriteFile(sheet, Stylesheet(), 0o644)
	files = append(files, sheet)
	args := append([]string{"-jar", filepath.Join(dir, "node_modules", "vnu-jar", "build", "dist", "vnu.jar"), "--format", "json", "--also-check-css"}, files...)
	cmd := exec.Command("java", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Run() // vnu exits 1 when it reports messages; the JSON says which
	var res struct {
		Messages []struct {
			Type, SubType, URL, Message, Extract string
			LastLine                             int
		} `json:"messages"`
	}
	if err := json.Unmarshal(stderr.Bytes(), &res); err != nil {
		t.Fatalf("vnu output: %v\n%s", err, stderr.String())
	}
	for _, m := range res.Messages {
		t.Errorf("%s:%d: %s %s: %s (%q)", m.URL, m.LastLine, m.Type, m.SubType, m.Message, m.Extract)
	}
	t.Logf("vnu checked %d pages: %d messages", len(files), len(res.Messages))
}

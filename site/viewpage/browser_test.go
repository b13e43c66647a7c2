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
	"strings"
	"sync"
	"testing"

	"github.com/guidepub/guidepub/fixtures"
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
		for _, k := range Kinds {
			b, err := Render(k, &in, in.Default())
			if err != nil {
				t.Fatal(err)
			}
			p := map[Kind]string{Branded: "/", Unbranded: "/u/", Embedded: "/embed/"}[k] + f
			ps.pages[p], ps.kinds[p] = b, k
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
	ps := newPageServer(t, "vKT301A", "vMAPLE-locked", "vMAPLE-nomedia", "vMAPLE-metric")
	out := outDir(t)
	type check struct {
		path      string
		must, not []string
	}
	checks := map[string]check{
		"branded":   {"/vKT301A", []string{"Jane Example", "Example Realty", "Measurements", "Living Room", "25.79 m²", "Show on a map", "Watch the video tour", "Floor plans", "Photos"}, []string{"277.62 sq ft"}},
		"unbranded": {"/u/vKT301A", []string{"Measurements", "Living Room", "25.79 m²", "Floor plans", "Photos"}, []string{"Jane Example", "Example Realty", "video", "map"}},
		"embed":     {"/frame/vKT301A", []string{"A listing site", "Open the full guide", "Living Room"}, []string{"Jane Example"}},
		"locked":    {"/vMAPLE-locked", []string{"not available"}, []string{"Maple Ave", "Measurements"}},
		"nomedia":   {"/vMAPLE-nomedia", []string{"Measurements"}, []string{"Maple Ave", "Floor plans", "Photos", "video"}},
		"small":     {"/frame/vKT301A?small=1", []string{"Open the full guide", "Living Room"}, []string{"Jane Example"}},
		"metric":    {"/embed/vMAPLE-metric", []string{"Open the full guide", "Floor plans"}, []string{"Measurements"}},
		// The embedded page itself, not in a frame: axe and the image
		// checks look at the top frame only.
		"embedded": {"/embed/vKT301A", []string{"Open the full guide", "Living Room", "Photos"}, []string{"Jane Example"}},
	}
	var pages []browserPage
	for _, name := range []string{"branded", "unbranded", "embed", "embedded", "small", "locked", "nomedia", "metric"} {
		for _, w := range []int{375, 1280} {
			pages = append(pages, browserPage{Name: name, URL: ps.URL + checks[name].path, Width: w, Height: map[int]int{375: 812, 1280: 900}[w],
				Screenshot: filepath.Join(out, fmt.Sprintf("%s-%d.png", name, w))})
		}
	}
	rep := runBrowser(t, pages)
	for _, p := range rep {
		c := checks[p.Name]
		name := p.Name
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
		for _, img := range p.Images {
			if !img.Complete || img.Natural == 0 || img.W == "" || img.H == "" {
				t.Errorf("%s: image %s not loaded or without width/height", name, img.Src)
			}
		}
		for _, m := range c.must {
			if !strings.Contains(p.Text, m) {
				t.Errorf("%s: %q does not show", name, m)
			}
		}
		for _, m := range c.not {
			if strings.Contains(strings.ToLower(p.Text), strings.ToLower(m)) {
				t.Errorf("%s: %q shows", name, m)
			}
		}
	}
	for _, p := range rep {
		if p.ScrollWidth > 1280 {
			t.Errorf("%s: page is %d px wide", p.Name, p.ScrollWidth)
		}
	}
	t.Logf("screenshots in %s", out)
}

// TestNuHTMLChecker validates every golden page with the Nu HTML Checker
// (vnu-jar): no errors and no warnings.
func TestNuHTMLChecker(t *testing.T) {
	if _, err := exec.LookPath("java"); err != nil {
		fixtures.Missing(t, "java", err.Error())
	}
	dir := npmTools(t)
	files, err := filepath.Glob(filepath.Join("testdata", "golden", "*", "*.html"))
	if err != nil || len(files) < 30 {
		t.Fatalf("golden pages: %d, %v", len(files), err)
	}
	big := filepath.Join(t.TempDir(), "big-branded.html")
	in := bigInput(40)
	b, _ := Render(Branded, &in, "en")
	os.WriteFile(big, b, 0o644)
	files = append(files, big)
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

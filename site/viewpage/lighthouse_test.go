package viewpage

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestLighthouse runs Lighthouse on the branded, unbranded and embedded
// pages of a sample view at a phone and a desktop viewport. It takes about
// a minute, so it runs only with GUIDEPUB_LIGHTHOUSE=1 (make bench). Every
// page must score 100 for accessibility and best practices and at least 95
// for performance; the branded page also 100 for SEO (the others are
// noindex on purpose).
func TestLighthouse(t *testing.T) {
	defer phoneWeight(t)
	if os.Getenv("GUIDEPUB_LIGHTHOUSE") != "1" {
		t.Skip("Lighthouse is slow: set GUIDEPUB_LIGHTHOUSE=1 to run it")
	}
	dir := npmTools(t)
	chrome := chromium(t)
	ps := newPageServer(t, "vKT301A")
	out := outDir(t)
	for _, tc := range []struct {
		name, path string
		kind       Kind
	}{
		{"branded", "/vKT301A", Branded},
		{"unbranded", "/u/vKT301A", Unbranded},
		{"embedded", "/embed/vKT301A", Embedded},
	} {
		for _, form := range []string{"mobile", "desktop"} {
			t.Run(tc.name+"/"+form, func(t *testing.T) {
				report := filepath.Join(out, "lighthouse-"+tc.name+"-"+form+".json")
				args := []string{filepath.Join(dir, "node_modules", "lighthouse", "cli", "index.js"), ps.URL + tc.path,
					"--output=json", "--output-path=" + report, "--quiet",
					"--only-categories=performance,accessibility,best-practices,seo",
					"--chrome-flags=--headless=new --no-sandbox --disable-gpu --no-first-run --disable-background-networking --disable-component-update --disable-sync"}
				if form == "desktop" {
					args = append(args, "--preset=desktop")
				}
				cmd := exec.Command("node", args...)
				cmd.Env = append(os.Environ(), "CHROME_PATH="+chrome)
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				if err := cmd.Run(); err != nil {
					t.Fatalf("lighthouse: %v\n%s", err, stderr.String())
				}
				b, err := os.ReadFile(report)
				if err != nil {
					t.Fatal(err)
				}
				var r struct {
					Categories map[string]struct {
						Score *float64 `json:"score"`
					} `json:"categories"`
					Audits map[string]struct {
						Score        *float64 `json:"score"`
						Title        string   `json:"title"`
						NumericValue float64  `json:"numericValue"`
					} `json:"audits"`
				}
				if err := json.Unmarshal(b, &r); err != nil {
					t.Fatal(err)
				}
				min := map[string]float64{"performance": 0.95, "accessibility": 1, "best-practices": 1, "seo": 1}
				if tc.kind != Branded {
					min["seo"] = 0 // noindex on purpose
				}
				scores := map[string]float64{}
				for cat, m := range min {
					c, ok := r.Categories[cat]
					if !ok || c.Score == nil {
						t.Fatalf("no %s score", cat)
					}
					scores[cat] = *c.Score * 100
					if *c.Score < m {
						t.Errorf("%s %.0f, want at least %.0f", cat, *c.Score*100, m*100)
					}
				}
				// total-byte-weight is what the page downloads as loaded
				// (HTML and images, as transferred), at the preset's
				// viewport: 412 px wide for mobile, 1350 for desktop.
				t.Logf("%s %s: performance %.0f, accessibility %.0f, best practices %.0f, SEO %.0f; downloads %.0f bytes", tc.name, form,
					scores["performance"], scores["accessibility"], scores["best-practices"], scores["seo"], r.Audits["total-byte-weight"].NumericValue)
				if t.Failed() {
					for id, a := range r.Audits {
						if a.Score != nil && *a.Score < 1 {
							t.Logf("audit %s (%s): %.2f", id, a.Title, *a.Score)
						}
					}
				}
			})
		}
	}
}

// phoneWeight loads the branded page of vKT301A at 375 px in Chromium, as
// a phone would, and logs the bytes it downloads (HTML and images, as
// transferred) and the pages it prints on (US Letter).
func phoneWeight(t *testing.T) {
	ps := newPageServer(t, "vKT301A")
	out := outDir(t)
	rep := runBrowser(t, []browserPage{{Name: "phone", URL: ps.URL + "/vKT301A", Width: 375, Height: 812, PDF: filepath.Join(out, "print-vKT301A.pdf")}})
	t.Logf("branded page of vKT301A at 375 px: %d requests, %d bytes transferred; prints on %d Letter pages",
		len(rep[0].Requests), rep[0].Bytes, pdfPages(t, rep[0].PDF))
}

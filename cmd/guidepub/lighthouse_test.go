package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/fixtures"
	"github.com/guidepub/guidepub/site/serve"
)

// TestLighthouse exports the fixtures (with their real sample photos and
// the renditions the export makes of them), serves the tree with the
// handler of "guidepub serve" on a real listener, and runs Lighthouse on
// the branded, unbranded and embedded pages of vKT301A at its mobile and
// desktop presets: accessibility and best practices 100, performance at
// least 95, SEO 100 for the branded page (the others are noindex on
// purpose). It then loads the branded page at 375 px in Chromium and logs
// the bytes it transferred and the Letter pages it prints on. It takes
// about a minute, so it runs only with GUIDEPUB_LIGHTHOUSE=1 (make bench).
func TestLighthouse(t *testing.T) {
	if os.Getenv("GUIDEPUB_LIGHTHOUSE") != "1" {
		t.Skip("Lighthouse is slow: set GUIDEPUB_LIGHTHOUSE=1 to run it")
	}
	npm := pageCheckers(t)
	chrome := os.Getenv("GUIDEPUB_CHROMIUM")
	if chrome == "" {
		chrome = "/usr/bin/chromium"
	}
	if _, err := os.Stat(chrome); err != nil {
		fixtures.Missing(t, "Chromium", err.Error())
	}
	base := exportAndServe(t)
	out := t.TempDir()

	for _, tc := range []struct {
		name, path string
		seo        float64
	}{
		{"branded", "/vKT301A", 1},
		{"unbranded", "/u/vKT301A", 0},
		{"embedded", "/embed/vKT301A", 0},
	} {
		for _, form := range []string{"mobile", "desktop"} {
			t.Run(tc.name+"/"+form, func(t *testing.T) {
				report := filepath.Join(out, "lighthouse-"+tc.name+"-"+form+".json")
				args := []string{filepath.Join(npm, "node_modules", "lighthouse", "cli", "index.js"), base + tc.path,
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
				readJSONFile(t, report, &r)
				min := map[string]float64{"performance": 0.95, "accessibility": 1, "best-practices": 1, "seo": tc.seo}
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
				// total-byte-weight is what the load transferred (HTML and
				// images) at the preset's viewport: 412 px wide for mobile,
				// 1350 for desktop.
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

	// A 375 px phone, with the page checker of site/viewpage.
	pdf := filepath.Join(out, "print-vKT301A.pdf")
	job, _ := json.Marshal(map[string]any{"chrome": chrome, "pages": []map[string]any{
		{"name": "phone", "url": base + "/vKT301A", "width": 375, "height": 812, "pdf": pdf}}})
	jf := filepath.Join(out, "job.json")
	if err := os.WriteFile(jf, job, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", filepath.Join(npm, "check.mjs"), jf)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	res, err := cmd.Output()
	if err != nil {
		t.Fatalf("check.mjs: %v\n%s", err, stderr.String())
	}
	var rep []struct {
		Status   int      `json:"status"`
		Requests []string `json:"requests"`
		Bytes    int64    `json:"bytes"`
	}
	if err := json.Unmarshal(res, &rep); err != nil || len(rep) != 1 || rep[0].Status != 200 {
		t.Fatalf("check.mjs report %v: %.300s", err, res)
	}
	b, err := os.ReadFile(pdf)
	if err != nil {
		t.Fatal(err)
	}
	pages := len(regexp.MustCompile(`/Type\s*/Page[^s]`).FindAll(b, -1))
	if pages == 0 || pages > 6 {
		t.Errorf("the branded page prints on %d Letter pages, want 1 to 6", pages)
	}
	t.Logf("branded page of vKT301A at 375 px: %d requests, %d bytes transferred (HTML and images); prints on %d Letter pages",
		len(rep[0].Requests), rep[0].Bytes, pages)
}

// exportAndServe exports the fixtures with every URL flag set to a
// loopback listener and serves the tree there with the handler of
// "guidepub serve"; it returns the listener's URL.
func exportAndServe(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	root := t.TempDir()
	out, priv := filepath.Join(root, "out"), filepath.Join(root, "private")
	if code, stdout, stderr := runCLI(t, "export", "--src", fixtureSrc(t), "--out", out, "--private", priv, "--jobs", "2",
		"--view-url", base, "--unbranded-url", base+"/u", "--embed-url", base+"/embed", "--base-url", base); code != 0 {
		t.Fatalf("export: exit %d\n%s%s", code, stdout, stderr)
	}
	srv, err := serve.New(afero.NewOsFs(), out, noWatchServe())
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: srv}
	go hs.Serve(ln) //nolint:errcheck // ends with Close
	t.Cleanup(func() { hs.Close(); srv.Close() })
	return base
}

// pageCheckers returns the folder of the npm page checkers (Lighthouse,
// puppeteer-core, axe-core) that site/viewpage's browser tests use,
// running npm ci there when node_modules is missing.
func pageCheckers(t *testing.T) string {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			fixtures.Missing(t, tool, err.Error())
		}
	}
	dir, err := filepath.Abs(filepath.Join("..", "..", "site", "viewpage", "testdata", "npm"))
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

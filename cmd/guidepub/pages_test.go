package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/fixtures"
	"github.com/guidepub/guidepub/site"
	"github.com/guidepub/guidepub/site/serve"
)

// TestViewPagesServed exports the fixtures with the default URL flags and
// serves the tree as "guidepub serve" does: every page URL the documents
// hand out (the ready events' publicUrl, unbrandedUrl and embeddedUrl, and
// the tour links of every autofill document) opens an HTML page on one
// listener, with its security headers; and Chromium renders one.
func TestViewPagesServed(t *testing.T) {
	src := fixtureSrc(t)
	root := t.TempDir()
	out, priv := filepath.Join(root, "out"), filepath.Join(root, "private")
	if code, stdout, stderr := runCLI(t, "export", "--src", src, "--out", out, "--private", priv, "--jobs", "2"); code != 0 {
		t.Fatalf("export: exit %d\n%s%s", code, stdout, stderr)
	}
	srv, err := serve.New(afero.NewOsFs(), out, noWatchServe())
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	hs := httptest.NewServer(srv)
	defer hs.Close()

	// The links the documents hand out, rebased on the test listener.
	var links []string
	events, _ := filepath.Glob(filepath.Join(priv, site.GuidesDir, "*", site.EventFile))
	for _, p := range events {
		var ev site.ReadyEvent
		readJSONFile(t, p, &ev)
		links = append(links, ev.URLs.PublicURL, ev.URLs.UnbrandedURL, ev.URLs.EmbeddedURL)
	}
	autofills, _ := filepath.Glob(filepath.Join(out, "*", "reso", "autofill"))
	for _, p := range autofills {
		var af site.AutofillDoc
		readJSONFile(t, p, &af)
		for _, a := range af.Value {
			for _, m := range a.Media {
				if strings.Contains(m.ShortDescription+m.MediaCategory, "Tour") {
					links = append(links, m.MediaURL)
				}
			}
		}
	}
	if len(events) == 0 || len(links) < 3*len(events) {
		t.Fatalf("%d events, %d links: the fixtures should give more", len(events), len(links))
	}
	for _, link := range links {
		u, err := url.Parse(link)
		if err != nil || u.Host != "localhost:8080" {
			t.Fatalf("link %q is not on the default host", link)
		}
		resp, err := http.Get(hs.URL + u.Path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		// The embedded and unbranded pages are framed by the autofill's
		// tour records; the branded page may not be framed.
		embed := strings.HasPrefix(u.Path, "/"+site.EmbedDir+"/") || strings.HasPrefix(u.Path, "/"+site.UnbrandedDir+"/")
		h := resp.Header
		switch {
		case resp.StatusCode != 200 || h.Get("Content-Type") != site.PageType:
			t.Errorf("%s: %d %s, want an HTML page", link, resp.StatusCode, h.Get("Content-Type"))
		case !strings.HasPrefix(string(body), "<!DOCTYPE html>"):
			t.Errorf("%s: body is not a page: %.80s", link, body)
		case !strings.Contains(h.Get("Content-Security-Policy"), "default-src 'none'"):
			t.Errorf("%s: CSP %q", link, h.Get("Content-Security-Policy"))
		case embed && (h.Get("X-Frame-Options") != "" || !strings.Contains(h.Get("Content-Security-Policy"), "frame-ancestors *")):
			t.Errorf("%s: the page must be framable: %v", link, h)
		case !embed && h.Get("X-Frame-Options") != "DENY":
			t.Errorf("%s: X-Frame-Options %q, want DENY", link, h.Get("X-Frame-Options"))
		}
	}
	// Language pages, and a trailing slash (followed to the page).
	for path, want := range map[string]int{"/vKT301A/fr": 200, "/u/vSTDENIS/zh": 200, "/embed/rue-saint-denis/en": 200, "/vKT301A/": 200, "/vKT301A/de": 404} {
		resp, err := http.Get(hs.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want || (want == 200 && resp.Header.Get("Content-Type") != site.PageType) {
			t.Errorf("%s: %d %s, want %d", path, resp.StatusCode, resp.Header.Get("Content-Type"), want)
		}
	}
	// A browser's 404 is a page; an API client's stays JSON.
	for accept, want := range map[string]string{"text/html,*/*;q=0.8": site.PageType, "application/json": "application/json"} {
		req, _ := http.NewRequest("GET", hs.URL+"/no-such-view/data/status", nil)
		req.Header.Set("Accept", accept)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 404 || resp.Header.Get("Content-Type") != want {
			t.Errorf("404 for Accept %q: %d %s", accept, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
	}
	for path, want := range map[string]int{"/robots.txt": 200, "/no-such-view": 404, "/u/no-such-view": 404, "/u": 404, "/embed/": 404} {
		resp, err := http.Get(hs.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("%s: %d, want %d", path, resp.StatusCode, want)
		}
	}

	// A person's browser.
	bin, err := exec.LookPath("chromium")
	if err != nil {
		fixtures.Missing(t, "Chromium", "install the Debian packages chromium and chromium-driver")
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for _, pg := range []struct{ path, must, mustNot string }{
		{"/vKT301A", "Jane Example", ""},
		{"/u/vKT301A", "301 King St E", "Jane Example"},
		{"/vSTDENIS", "Rez-de-chaussée", ""},
		{"/embed/vKT301A", "301 King St E", ""},
	} {
		dom, err := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
			"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
			"--disable-dev-shm-usage", "--user-data-dir="+t.TempDir(), "--dump-dom", hs.URL+pg.path).Output()
		if err != nil {
			t.Fatalf("chromium %s: %v", pg.path, err)
		}
		if !strings.Contains(string(dom), pg.must) || !strings.Contains(string(dom), "<table") {
			t.Errorf("%s in Chromium shows no %q or no room table: %.300s", pg.path, pg.must, dom)
		}
		if pg.mustNot != "" && strings.Contains(string(dom), pg.mustNot) {
			t.Errorf("%s in Chromium shows %q", pg.path, pg.mustNot)
		}
	}
}

func readJSONFile(t *testing.T, p string, v any) {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", p, err)
	}
}

// noWatchServe returns the settings of "guidepub serve" for a tree the
// test reloads itself.
func noWatchServe() serve.Config {
	c := serve.DefaultConfig()
	c.NoWatch = true
	return c
}

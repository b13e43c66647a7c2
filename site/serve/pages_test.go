package serve

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/guidepub/guidepub/site/viewpage"
)

// TestBrowserErrors checks what a browser gets where an API client gets
// JSON: the HTML 404 page, and a redirect from a page URL with a trailing
// slash to the page; and that language pages are served like the others.
func TestBrowserErrors(t *testing.T) {
	tt := newTestTree()
	tt.media["v1/index.html"] = []byte("<p>branded</p>")
	tt.media["v1/fr/index.html"] = []byte("<p>fr</p>")
	tt.media["u/v1/fr/index.html"] = []byte("<p>u fr</p>")
	tt.media["embed/v1/zh/index.html"] = []byte("<p>embed zh</p>")
	for _, fc := range fsCases(t, tt) {
		t.Run(fc.name, func(t *testing.T) {
			s, err := New(fc.fsys, fc.root, testConfig(noWatch))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			get := func(target, accept string) *httptest.ResponseRecorder {
				rec := httptest.NewRecorder()
				req := httptest.NewRequest("GET", "http://example.test"+target, nil)
				if accept != "" {
					req.Header.Set("Accept", accept)
				}
				s.ServeHTTP(rec, req)
				return rec
			}
			const browser = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
			for _, target := range []string{"/nothing", "/v1/doc/nothing.jpg", "/v1/de", "/../secret", "/v1/data/status/"} {
				rec := get(target, browser)
				if rec.Code != http.StatusNotFound || rec.Header().Get("Content-Type") != "text/html; charset=utf-8" || !bytes.Equal(rec.Body.Bytes(), viewpage.NotFound) {
					t.Errorf("%s (browser): %d %q %.40q", target, rec.Code, rec.Header().Get("Content-Type"), rec.Body.String())
				}
				if csp := rec.Header().Get("Content-Security-Policy"); !strings.HasPrefix(csp, "default-src 'none'") {
					t.Errorf("%s: CSP %q", target, csp)
				}
				for _, accept := range []string{"", "application/json", "*/*", "text/html;q=0"} {
					rec := get(target, accept)
					if rec.Code != http.StatusNotFound || rec.Body.String() != `{"code":"not_found"}`+"\n" {
						t.Errorf("%s (Accept %q): %d %q", target, accept, rec.Code, rec.Body.String())
					}
				}
			}
			for target, want := range map[string]string{
				"/v1/":            "/v1",
				"/v1/?x=1":        "/v1?x=1",
				"/v1/fr/":         "/v1/fr",
				"/u/v1/":          "/u/v1",
				"/embed/v1/zh/":   "/embed/v1/zh",
				"/no-such-guide/": "/no-such-guide",
				"/u/v1/fr/":       "/u/v1/fr",
			} {
				rec := get(target, browser)
				if rec.Code != http.StatusMovedPermanently || rec.Header().Get("Location") != want {
					t.Errorf("%s: %d Location %q, want 301 to %s", target, rec.Code, rec.Header().Get("Location"), want)
				}
			}
			for target, want := range map[string]string{"/v1/fr": "<p>fr</p>", "/u/v1/fr": "<p>u fr</p>", "/embed/v1/zh": "<p>embed zh</p>", "/v1": "<p>branded</p>"} {
				rec := get(target, browser)
				if rec.Code != http.StatusOK || rec.Body.String() != want || rec.Header().Get("Content-Security-Policy") == "" {
					t.Errorf("%s: %d %q %v", target, rec.Code, rec.Body.String(), rec.Header())
				}
			}
			if fo := get("/u/v1/fr", "").Header().Get("X-Frame-Options"); fo != "" {
				t.Errorf("unbranded page: X-Frame-Options %q (the Unbranded Virtual Tour record frames it)", fo)
			}
			if fo := get("/v1/fr", "").Header().Get("X-Frame-Options"); fo != "DENY" {
				t.Errorf("branded page: X-Frame-Options %q", fo)
			}
		})
	}
}

// TestStylesheetServed checks that the pages' stylesheet is served as
// its siblings are negotiated, as CSS, and cached for good, and that a
// stylesheet name the tree does not hold is not found.
func TestStylesheetServed(t *testing.T) {
	tt := newTestTree()
	tt.docs[viewpage.StylesheetPath] = viewpage.Stylesheet()
	for _, fc := range fsCases(t, tt) {
		t.Run(fc.name, func(t *testing.T) {
			s, err := New(fc.fsys, fc.root, testConfig(noWatch))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			for _, enc := range []string{"br", "zstd", "gzip", ""} {
				rec := httptest.NewRecorder()
				req := httptest.NewRequest("GET", "http://example.test/"+viewpage.StylesheetPath, nil)
				req.Header.Set("Accept-Encoding", enc)
				s.ServeHTTP(rec, req)
				h := rec.Result().Header
				if rec.Code != http.StatusOK || h.Get("Content-Encoding") != enc || h.Get("Vary") != "Accept-Encoding" ||
					h.Get("Content-Type") != "text/css; charset=utf-8" || h.Get("Cache-Control") != "public, max-age=31536000, immutable" {
					t.Errorf("Accept-Encoding %q: %d %v", enc, rec.Code, h)
				}
				if got := decompress(t, enc, rec.Body.Bytes()); !bytes.Equal(got, viewpage.Stylesheet()) {
					t.Errorf("Accept-Encoding %q: body is not the stylesheet", enc)
				}
			}
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, httptest.NewRequest("GET", "http://example.test/_assets.v1/view.0123456789abcdef.css", nil))
			if rec.Code != http.StatusNotFound {
				t.Errorf("a stylesheet the tree lacks: %d", rec.Code)
			}
		})
	}
}

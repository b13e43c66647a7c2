package serve

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/site"
	"github.com/guidepub/guidepub/site/viewpage"
)

// TestSurrogateKeyHeaders: every answer for a path of a public id (a
// document in every encoding, a page, media, a 304, a missing file for a
// browser and for an API client, a hidden file, a redirect, a 405) names
// the id's key in xkey, Surrogate-Key and Cache-Tag; the stylesheet and
// paths of no public id carry none. With an edge TTL the files (not the
// errors) add Surrogate-Control, CDN-Cache-Control and s-maxage, the
// browser's max-age unchanged.
func TestSurrogateKeyHeaders(t *testing.T) {
	tt := newTestTree()
	tt.media["v1/index.html"] = []byte("<p>branded</p>")
	tt.media["u/v1/fr/index.html"] = []byte("<p>fr</p>")
	tt.docs[viewpage.StylesheetPath] = viewpage.Stylesheet()
	root := osTree(t, tt)
	const browser = "text/html,*/*;q=0.8"
	for _, ttl := range []time.Duration{0, 48 * time.Hour} {
		_, hs, client := newTestServer(t, fsCase{"os", afero.NewOsFs(), root}, testConfig(noWatch, func(c *Config) { c.EdgeTTL = ttl }))
		noRedirect := *client
		noRedirect.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		for _, tc := range []struct {
			method, path, key string
			h                 map[string]string
			status            int
			cacheControl      string
		}{
			{"GET", "/v1/data/summary", "guidepub-v1", map[string]string{"Accept-Encoding": "br"}, 200, site.DocumentCacheControl},
			{"GET", "/v1/data/summary", "guidepub-v1", nil, 200, site.DocumentCacheControl},
			{"HEAD", "/alias/data/status", "guidepub-alias", map[string]string{"Accept-Encoding": "gzip"}, 200, site.DocumentCacheControl},
			{"GET", "/v1", "guidepub-v1", map[string]string{"Accept": browser}, 200, site.DocumentCacheControl},
			{"GET", "/u/v1/fr", "guidepub-v1", map[string]string{"Accept": browser}, 200, site.DocumentCacheControl},
			{"GET", "/v1/doc/photo.jpg", "guidepub-v1", map[string]string{"Range": "bytes=0-9"}, 206, site.MediaCacheControl},
			{"GET", "/v1/doc/plan.pdf", "guidepub-v1", map[string]string{"If-None-Match": "*"}, 304, site.MediaCacheControl},
			{"GET", "/v1/doc/plan.pdf", "guidepub-v1", map[string]string{"Range": "bytes=9000-"}, 416, "no-store"},
			{"GET", "/v1/data/status", "guidepub-v1", map[string]string{"If-Match": `"nope"`}, 412, "no-store"},
			{"GET", "/v1/doc/nothing.jpg", "guidepub-v1", nil, 404, "no-store"},
			{"GET", "/v9/data/status", "guidepub-v9", nil, 404, "no-store"},
			{"GET", "/embed/v9", "guidepub-v9", map[string]string{"Accept": browser}, 404, "no-store"},
			{"GET", "/v1/data/.tmp-x", "guidepub-v1", nil, 404, "no-store"},
			{"GET", "/v1/data/summary.br", "guidepub-v1", nil, 404, "no-store"},
			{"GET", "/v1/", "guidepub-v1", nil, 301, site.DocumentCacheControl},
			{"POST", "/v1/data/status", "guidepub-v1", nil, 405, "no-store"},
			{"GET", "/v1/data/status", "guidepub-v1", map[string]string{"Accept-Encoding": "identity;q=0"}, 406, "no-store"},
			{"GET", "/" + viewpage.StylesheetPath, "", map[string]string{"Accept-Encoding": "br"}, 200, site.ImmutableCacheControl},
			{"GET", "/api/v1/guides", "", nil, 404, "no-store"},
			{"GET", "/u", "", nil, 404, "no-store"},
			{"GET", "/", "", nil, 404, "no-store"},
		} {
			t.Run(fmt.Sprint(ttl, tc.method, tc.path, tc.h), func(t *testing.T) {
				resp, _ := do(t, &noRedirect, tc.method, hs.URL+tc.path, tc.h)
				if resp.StatusCode != tc.status {
					t.Fatalf("status %d, want %d", resp.StatusCode, tc.status)
				}
				for _, n := range site.SurrogateKeyHeaders {
					if got := resp.Header.Values(n); (tc.key == "" && len(got) != 0) || (tc.key != "" && (len(got) != 1 || got[0] != tc.key)) {
						t.Errorf("%s: %q, want %q", n, got, tc.key)
					}
				}
				cc, edge := tc.cacheControl, ""
				if ttl > 0 && tc.key != "" && tc.status < 400 && tc.status != 301 {
					cc, edge = cc+", s-maxage=172800", "max-age=172800"
				}
				if got := resp.Header.Get("Cache-Control"); got != cc {
					t.Errorf("Cache-Control %q, want %q", got, cc)
				}
				for _, n := range []string{site.SurrogateControl, site.CDNCacheControl} {
					if got := resp.Header.Get(n); got != edge {
						t.Errorf("%s %q, want %q", n, got, edge)
					}
				}
			})
		}
	}
}

// TestSurrogateKeyParity serves one tree with guidepub serve, with Debian's
// nginx and with Caddy configured by WriteConfig, and compares the key
// and caching headers of every kind of answer: files of a public id, its
// 404s for a browser and an API client, a redirect, a 405, the stylesheet
// and paths of no public id. Caddy runs with an edge TTL, nginx without.
func TestSurrogateKeyParity(t *testing.T) {
	tt := newTestTree()
	tt.media["v1/index.html"] = []byte("<p>branded</p>")
	tt.media["u/v1/fr/index.html"] = []byte("<p>fr</p>")
	tt.media["embed/alias/index.html"] = []byte("<p>embed</p>")
	tt.docs[viewpage.StylesheetPath] = viewpage.Stylesheet()
	root := osTree(t, tt)
	const ttl = 3 * time.Hour
	servers := []struct {
		name      string
		url, ours string
	}{
		{"nginx", startNginx(t, root), ""},
		{"caddy", startCaddyWith(t, ConfigOptions{Dir: root, EdgeTTL: ttl}), ""},
	}
	_, plain, client := newTestServer(t, fsCase{"os", afero.NewOsFs(), root}, testConfig(noWatch))
	_, edge, _ := newTestServer(t, fsCase{"os", afero.NewOsFs(), root}, testConfig(noWatch, func(c *Config) { c.EdgeTTL = ttl }))
	servers[0].ours, servers[1].ours = plain.URL, edge.URL
	noRedirect := *client
	noRedirect.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	const browser = "text/html,*/*;q=0.8"
	compared := append([]string{"Cache-Control", site.SurrogateControl, site.CDNCacheControl}, site.SurrogateKeyHeaders...)
	for _, tc := range []struct {
		method, path string
		h            map[string]string
		status       int
	}{
		{"GET", "/v1/data/summary", map[string]string{"Accept-Encoding": "gzip"}, 200},
		{"HEAD", "/alias/data/status", nil, 200},
		{"GET", "/v1", map[string]string{"Accept": browser}, 200},
		{"GET", "/u/v1/fr", map[string]string{"Accept": browser}, 200},
		{"GET", "/embed/alias", map[string]string{"Accept": browser}, 200},
		{"GET", "/v1/doc/photo.jpg", map[string]string{"Range": "bytes=0-9"}, 206},
		{"GET", "/v1/doc/plan.pdf", nil, 200},
		{"GET", "/v1/doc/nothing.jpg", nil, 404},
		{"GET", "/v1/doc/nothing.jpg", map[string]string{"Accept": browser}, 404},
		{"GET", "/v9/data/status", nil, 404},
		{"GET", "/embed/v9", map[string]string{"Accept": browser}, 404},
		{"GET", "/v1/data/.tmp-x", nil, 404},
		{"GET", "/v1/data/summary.br", nil, 404},
		{"GET", "/v1/", nil, 301},
		{"POST", "/v1/data/status", nil, 405},
		{"GET", "/" + viewpage.StylesheetPath, nil, 200},
		{"GET", "/" + site.AssetsDir + "/view.0123.css", nil, 404},
		{"GET", "/u", nil, 404},
		{"GET", "/", nil, 404},
	} {
		for _, srv := range servers {
			t.Run(fmt.Sprint(srv.name, " ", tc.method, " ", tc.path, " ", tc.h), func(t *testing.T) {
				ours, _ := do(t, &noRedirect, tc.method, srv.ours+tc.path, tc.h)
				theirs, _ := do(t, &noRedirect, tc.method, srv.url+tc.path, tc.h)
				if ours.StatusCode != tc.status || theirs.StatusCode != tc.status {
					t.Fatalf("status: guidepub %d, %s %d, want %d", ours.StatusCode, srv.name, theirs.StatusCode, tc.status)
				}
				for _, k := range compared {
					if a, b := ours.Header.Values(k), theirs.Header.Values(k); strings.Join(a, ", ") != strings.Join(b, ", ") {
						t.Errorf("%s: guidepub %q, %s %q", k, a, srv.name, b)
					}
				}
			})
		}
	}
}

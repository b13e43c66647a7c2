package serve

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/guidepub/guidepub/site"
	"github.com/guidepub/guidepub/site/viewpage"
)

func TestWriteConfig(t *testing.T) {
	opts := ConfigOptions{Dir: "/srv/public", Listen: "127.0.0.1:8080", Sidecar: "127.0.0.1:8081"}
	for _, kind := range ConfigKinds {
		t.Run(kind, func(t *testing.T) {
			var a, b bytes.Buffer
			if err := WriteConfig(&a, kind, opts); err != nil {
				t.Fatal(err)
			}
			if err := WriteConfig(&b, kind, opts); err != nil || a.String() != b.String() {
				t.Fatalf("output differs between runs (%v)", err)
			}
			text := a.String()
			if kind == "404" {
				if text != string(viewpage.NotFound) {
					t.Error("the 404 kind is not the HTML 404 page")
				}
				return
			}
			if strings.Count(text, "{") != strings.Count(text, "}") {
				t.Errorf("unbalanced braces")
			}
			want := []string{site.DocumentCacheControl, site.MediaCacheControl, "nosniff", "application/json"}
			switch kind {
			case "nginx":
				want = append(want, "listen 127.0.0.1:8080;", "root /srv/public;", "gzip_static on;", "disable_symlinks on;",
					"proxy_pass http://127.0.0.1:8081;", "location ^~ /api/", "location ^~ /private/", "Vary Accept-Encoding")
				for _, typ := range site.MediaTypes() {
					want = append(want, typ)
				}
			case "caddy":
				want = append(want, "127.0.0.1:8080 {", "root * /srv/public", "precompressed br zstd gzip",
					"reverse_proxy 127.0.0.1:8081", "handle /api/*", "handle /private/*")
			case "headers":
				for _, d := range site.Documents {
					want = append(want, "/*/"+d+"\n")
				}
			}
			for _, w := range want {
				if !strings.Contains(text, w) {
					t.Errorf("missing %q", w)
				}
			}
		})
	}
	t.Run("no sidecar, no proxy", func(t *testing.T) {
		var buf bytes.Buffer
		if err := WriteConfig(&buf, "nginx", ConfigOptions{Dir: "/srv", Listen: "80"}); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(buf.String(), "proxy_pass") {
			t.Error("proxy route without --sidecar")
		}
	})
	for _, bad := range []ConfigOptions{
		{Dir: "", Listen: "80"},
		{Dir: "/srv", Listen: ""},
		{Dir: "/srv; include /etc/passwd", Listen: "80"},
		{Dir: "/srv", Listen: "80", Sidecar: "x}"},
		{Dir: "/my dir", Listen: "80"},
		{Dir: "/srv/$uri", Listen: "80"},
	} {
		if err := WriteConfig(&bytes.Buffer{}, "nginx", bad); err == nil {
			t.Errorf("WriteConfig accepted %+v", bad)
		}
	}
	if err := WriteConfig(&bytes.Buffer{}, "apache", ConfigOptions{Dir: "/srv", Listen: "80"}); err == nil {
		t.Error("unknown kind accepted")
	}
}

// TestConfigPatterns checks the regular expressions the printed configs
// use against the paths guidepub serves or refuses.
func TestConfigPatterns(t *testing.T) {
	doc := regexp.MustCompile(documentPattern() + "$")
	sib := regexp.MustCompile(siblingPattern())
	for _, tc := range []struct {
		path     string
		doc, sib bool
	}{
		{"/v1/data/status", true, false},
		{"/alias/reso/autofill", true, false},
		{"/v1/data/summary.br", false, true},
		{"/v1/data/summary.zst", false, true},
		{"/v1/data/statusx", false, false},
		{"/v1/doc/plan.gz", false, false},
		{"/a/b/data/status", false, false},
	} {
		if got := doc.MatchString(tc.path); got != tc.doc {
			t.Errorf("document pattern on %s: %v", tc.path, got)
		}
		if got := sib.MatchString(tc.path); got != tc.sib {
			t.Errorf("sibling pattern on %s: %v", tc.path, got)
		}
	}
}

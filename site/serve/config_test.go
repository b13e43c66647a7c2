package serve

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

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
			case "varnish": // no file rules: those come from serve, the backend
				want = []string{"vcl 4.1;", "import xkey;", `.host = "127.0.0.1";`, `.port = "8080";`, `.port = "8081";`,
					"set req.backend_hint = sidecar;", "xkey.purge(req.http.xkey-purge)", `ban("obj.status != 0")`,
					`"::1";`, "set beresp.ttl = 86400s;", "set beresp.ttl = 60s;", `set resp.http.X-Cache = "HIT";`}
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
	for _, bad := range []ConfigOptions{
		{Listen: ""},
		{Listen: "127.0.0.1"},
		{Listen: "127.0.0.1:8080", PurgeACL: []string{"example.com"}},
		{Listen: "127.0.0.1:8080", PurgeACL: []string{"10.0.0.0/33"}},
		{Listen: "127.0.0.1:8080", Sidecar: "sidecar"},
		{Listen: "127.0.0.1:8080", EdgeTTL: -time.Second},
	} {
		if err := WriteConfig(&bytes.Buffer{}, "varnish", bad); err == nil {
			t.Errorf("WriteConfig varnish accepted %+v", bad)
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

// TestKeyRules checks that the rules of the nginx and Caddy maps (first
// match wins) give every path the surrogate key site.SurrogateKeyOf
// gives it, with and without a query.
func TestKeyRules(t *testing.T) {
	rules := keyRules()
	res := make([]*regexp.Regexp, len(rules))
	for i, r := range rules {
		res[i] = regexp.MustCompile(r.Pattern)
	}
	key := func(p string) string {
		for i, re := range res {
			if m := re.FindStringSubmatch(p); m != nil {
				if rules[i].Key {
					return site.SurrogateKeyPrefix + m[1]
				}
				return ""
			}
		}
		return ""
	}
	long := strings.Repeat("a", 64)
	for _, p := range []string{
		"/v1", "/v1/", "/v1/data/status", "/v1/data/summary.br", "/v1/doc/a.jpg", "/v1/fr", "/v1.json", "/v1.x/y",
		"/u/v1", "/u/v1/fr", "/u/v1/", "/u/v1.x", "/embed/v1", "/embed/v1/zh", "/embed/u/x", "/u/embed", "/u/api/x",
		"/u", "/u/", "/u/.x", "/embed", "/api", "/api/v1/guides", "/private/g1/doc.zip", "/oauth/token", "/healthz",
		"/metrics", "/readyz", "/.well-known/oauth-authorization-server", "/_assets.v1/view.0123456789abcdef.css",
		"/_assets.v1", "/_assets.v2/x", "/_assets.v1x", "/.hidden", "/", "/a%20b", "/v1%2Fdata", "/king-st_2",
		"/" + long, "/" + long + "a", "/" + long + "/data/status", "/u/" + long + "a", "/robots.txt", "/api.x",
	} {
		want, _ := site.SurrogateKeyOf(p)
		for _, q := range []string{"", "?a=b"} {
			if got := key(p + q); got != want {
				t.Errorf("%s: the rules give %q, SurrogateKeyOf %q", p+q, got, want)
			}
		}
	}
}

package serve

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the printed configurations under testdata/config")

// configCases are the deployments whose printed configurations are kept
// under testdata/config: those of the tests, the docs and deploy/, with
// and without a sidecar, on a port, an address and an IPv6 address.
var configCases = []struct {
	name string
	opts ConfigOptions
}{
	{"sidecar", ConfigOptions{Dir: "/srv/public", Listen: "127.0.0.1:8080", Sidecar: "127.0.0.1:8081"}},
	{"no-sidecar", ConfigOptions{Dir: "/srv", Listen: "80"}},
	{"docs", ConfigOptions{Dir: "/srv/guidepub/public", Listen: "80", Sidecar: "127.0.0.1:8081"}},
	{"docs-port", ConfigOptions{Dir: "/srv/guidepub/public", Listen: ":80", Sidecar: "127.0.0.1:8081"}},
	{"compose", ConfigOptions{Dir: "/data/public", Listen: "8080", Sidecar: "sidecar:8080"}},
	{"ipv6", ConfigOptions{Dir: "/tmp/TestCaddyParity123/001", Listen: "[::1]:8443", Sidecar: "[::1]:9090"}},
	{"test-address", ConfigOptions{Dir: "/tmp/TestNginxParity/001/public", Listen: "127.0.0.1:41234"}},
	{"edge-ttl", ConfigOptions{Dir: "/srv/public", Listen: "127.0.0.1:8080", Sidecar: "127.0.0.1:8081",
		EdgeTTL: 2 * time.Hour, PurgeACL: []string{"10.0.0.0/8", "192.0.2.7", "2001:db8::/32"}}},
}

// varnishCases are the cases of configCases printed for Varnish too (it
// reads no folder, and nginx's and Caddy's listen forms add nothing).
var varnishCases = map[string]bool{"sidecar": true, "no-sidecar": true, "ipv6": true, "edge-ttl": true}

// TestConfigGolden compares what WriteConfig prints, for nginx and Caddy
// in every case of configCases, for Varnish in varnishCases and for the
// _headers file (which takes no options), with
// testdata/config/<kind>-<case> (-update rewrites them).
func TestConfigGolden(t *testing.T) {
	for _, kind := range []string{"nginx", "caddy", "varnish", "headers"} {
		for _, c := range configCases {
			if (kind == "headers" && c.name != configCases[0].name) || (kind == "varnish" && !varnishCases[c.name]) {
				continue
			}
			t.Run(kind+"-"+c.name, func(t *testing.T) {
				var buf bytes.Buffer
				if err := WriteConfig(&buf, kind, c.opts); err != nil {
					t.Fatal(err)
				}
				p := filepath.Join("testdata", "config", kind+"-"+c.name)
				if *update {
					if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(p)
				if err != nil {
					t.Fatalf("%v (run go test -update)", err)
				}
				if got := buf.String(); got != string(want) {
					t.Errorf("%s differs (run go test -update and review the diff): %s", p, firstLineDiff(string(want), got))
				}
			})
		}
	}
}

// firstLineDiff names the first line where got differs from want.
func firstLineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := range max(len(w), len(g)) {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl || i >= len(w) || i >= len(g) {
			return fmt.Sprintf("line %d:\n- %q\n+ %q", i+1, wl, gl)
		}
	}
	return "same lines"
}

// TestHostingExamples checks that the configurations docs/hosting.md
// shows (nginx, Caddy, _headers and Varnish) are what WriteConfig prints
// for the options its summaries name.
func TestHostingExamples(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "hosting.md"))
	if err != nil {
		t.Fatal(err)
	}
	docs := ConfigOptions{Dir: "/srv/guidepub/public", Listen: "80", Sidecar: "127.0.0.1:8081"}
	docsPort := docs
	docsPort.Listen = ":80"
	for _, ex := range []struct {
		fence, kind string
		opts        ConfigOptions
	}{
		{"```nginx\n", "nginx", docs},
		{"```caddyfile\n", "caddy", docsPort},
		{"```text\n", "headers", ConfigOptions{}},
		{"```vcl\n", "varnish", ConfigOptions{Listen: "127.0.0.1:8080", Sidecar: "127.0.0.1:8081"}},
	} {
		_, shown, ok := strings.Cut(string(doc), "\n"+ex.fence) // a fence that starts a line
		shown, _, ok2 := strings.Cut(shown, "```")
		if !ok || !ok2 {
			t.Errorf("docs/hosting.md has no %q block", strings.TrimSpace(ex.fence))
			continue
		}
		var buf bytes.Buffer
		if err := WriteConfig(&buf, ex.kind, ex.opts); err != nil {
			t.Fatal(err)
		}
		if shown != buf.String() {
			t.Errorf("docs/hosting.md's %s example differs from --print-config %s: %s", ex.kind, ex.kind, firstLineDiff(buf.String(), shown))
		}
	}
}

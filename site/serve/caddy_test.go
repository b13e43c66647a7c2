package serve

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/fixtures"
	"github.com/guidepub/guidepub/site"
	"github.com/guidepub/guidepub/site/viewpage"
)

// startCaddyConfig runs Caddy with the site block that `guidepub serve
// --print-config caddy` writes for root (and a global option that keeps it
// off the admin port), and returns its base URL.
func startCaddyConfig(t *testing.T, root string) string {
	t.Helper()
	return startCaddyWith(t, ConfigOptions{Dir: root})
}

// startCaddyWith is startCaddyConfig for the options opts, on a free
// address.
func startCaddyWith(t *testing.T, opts ConfigOptions) string {
	t.Helper()
	bin, err := exec.LookPath("caddy")
	if err != nil {
		fixtures.Missing(t, "Caddy", "install the Debian package caddy (apt-get install caddy)")
	}
	dir := t.TempDir()
	addr := freeAddr(t)
	opts.Listen = addr
	var conf bytes.Buffer
	conf.WriteString("{\n\tadmin off\n}\n")
	if err := WriteConfig(&conf, "caddy", opts); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "Caddyfile")
	if err := os.WriteFile(path, conf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "run", "--config", path, "--adapter", "caddyfile")
	cmd.Env = append(os.Environ(), "XDG_DATA_HOME="+dir, "XDG_CONFIG_HOME="+dir, "HOME="+dir)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start caddy: %v", err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-done
		if t.Failed() {
			t.Logf("caddy:\n%s", stderr.String())
		}
	})
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond); err == nil {
			c.Close()
			return "http://" + addr
		}
		select {
		case <-done:
			t.Fatalf("caddy exited:\n%s", stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("caddy does not answer on %s", addr)
		}
	}
}

// TestCaddyParity runs Debian's Caddy on the printed configuration (the
// site block of Caddyfile.tmpl) over an export of the sample bundles, and
// checks that it answers as guidepub serve does (status, Content-Type,
// Content-Encoding, security headers, surrogate keys, redirect target,
// body) for a page, a language page, the trailing-slash redirect, the 404
// for a browser and for an API client, and a precompressed document, and a
// POST's 405.
func TestCaddyParity(t *testing.T) {
	if _, err := exec.LookPath("caddy"); err != nil {
		fixtures.Missing(t, "Caddy", "install the Debian package caddy (apt-get install caddy)")
	}
	root := sharedExport(t)
	caddyURL := startCaddyConfig(t, root)
	_, hs, client := newTestServer(t, fsCase{"os", afero.NewOsFs(), root}, testConfig(noWatch))
	noRedirect := *client
	noRedirect.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

	const browser = "text/html,application/xhtml+xml,*/*;q=0.8"
	tests := []struct {
		path, accept, encoding string
		status                 int
		contentType            string
	}{
		{"/vKT301A", browser, "", 200, site.PageType},
		{"/vKT301A/fr", browser, "", 200, site.PageType},
		{"/u/vKT301A", browser, "", 200, site.PageType},
		{"/embed/vKT301A", browser, "", 200, site.PageType},
		{"/vKT301A/", browser, "", 301, ""},
		{"/no-such-view", browser, "", 404, site.PageType},
		{"/no-such-view", "application/json", "", 404, "application/json"},
		{"/no-such-view/data/status", "application/json", "", 404, "application/json"},
		{"/vKT301A/data/status", "", "gzip", 200, "application/json"},
		{"/" + viewpage.StylesheetPath, "text/css,*/*;q=0.1", "br", 200, site.StylesheetType},
		{"/" + viewpage.StylesheetPath, "text/css,*/*;q=0.1", "gzip", 200, site.StylesheetType},
		{"/" + viewpage.StylesheetPath, "text/css,*/*;q=0.1", "", 200, site.StylesheetType},
		{"/" + viewpage.StylesheetPath + ".br", "application/json", "br", 404, "application/json"},
	}
	compared := append([]string{"Content-Type", "Content-Encoding", "Cache-Control", "Content-Security-Policy", "X-Frame-Options", "X-Content-Type-Options", "Location"},
		site.SurrogateKeyHeaders...)
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.path, " ", tc.accept, tc.encoding), func(t *testing.T) {
			h := map[string]string{"Accept-Encoding": tc.encoding}
			if tc.accept != "" {
				h["Accept"] = tc.accept
			}
			ours, ourBody := do(t, &noRedirect, "GET", hs.URL+tc.path, h)
			theirs, theirBody := do(t, &noRedirect, "GET", caddyURL+tc.path, h)
			if ours.StatusCode != tc.status || theirs.StatusCode != tc.status {
				t.Fatalf("status: serve %d, caddy %d, want %d", ours.StatusCode, theirs.StatusCode, tc.status)
			}
			if got := ours.Header.Get("Content-Type"); got != tc.contentType {
				t.Errorf("serve Content-Type %q, want %q", got, tc.contentType)
			}
			for _, k := range compared {
				if a, b := ours.Header.Get(k), theirs.Header.Get(k); a != b {
					t.Errorf("%s: serve %q, caddy %q", k, a, b)
				}
			}
			// Bodies compared as sent: the precompressed document is the
			// same .gz sibling from both.
			if !bytes.Equal(ourBody, theirBody) {
				t.Errorf("bodies differ: serve %d bytes, caddy %d bytes: %.200q", len(ourBody), len(theirBody), theirBody)
			}
		})
	}
	ours, ourBody := do(t, &noRedirect, "POST", hs.URL+"/vKT301A/data/status", nil)
	theirs, theirBody := do(t, &noRedirect, "POST", caddyURL+"/vKT301A/data/status", nil)
	if theirs.StatusCode != ours.StatusCode || theirs.Header.Get("Allow") != ours.Header.Get("Allow") || !bytes.Equal(ourBody, theirBody) {
		t.Errorf("POST: serve %d %q %q, caddy %d %q %q", ours.StatusCode, ours.Header.Get("Allow"), ourBody, theirs.StatusCode, theirs.Header.Get("Allow"), theirBody)
	}
	if _, body := do(t, &noRedirect, "GET", caddyURL+"/no-such-view", map[string]string{"Accept": browser}); !strings.Contains(string(body), string(viewpage.NotFound[:40])) {
		t.Errorf("caddy's 404 page is not the guidepub one: %.200q", body)
	}
}

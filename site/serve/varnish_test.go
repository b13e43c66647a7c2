package serve

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/site/serve/varnishtest"
)

// TestVarnishCompiles compiles every printed VCL of testdata/config with
// varnishd -C, which checks it and the xkey vmod it imports.
func TestVarnishCompiles(t *testing.T) {
	bin := varnishtest.Varnishd(t)
	for _, c := range configCases {
		// Each compiles C for 2 s: the printed VCL with an IPv6 backend, and
		// the one with a sidecar and a purge ACL of ranges; the others run
		// in TestVarnishInFrontOfServe.
		if c.name != "ipv6" && c.name != "edge-ttl" {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var vcl bytes.Buffer
			if err := WriteConfig(&vcl, "varnish", c.opts); err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			p := filepath.Join(dir, "guidepub.vcl")
			if err := os.WriteFile(p, vcl.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			args := append([]string{"-C", "-n", dir, "-f", p}, varnishtest.JailArgs()...)
			out, err := exec.Command(bin, args...).CombinedOutput()
			if err != nil {
				t.Fatalf("varnishd -C: %v\n%s", err, varnishtest.LastLines(out, 20))
			}
		})
	}
}

// startVarnish runs varnishd with the VCL that WriteConfig prints for
// opts, and returns its base URL. It is stopped when the test ends.
func startVarnish(t *testing.T, opts ConfigOptions) string {
	t.Helper()
	var vcl bytes.Buffer
	if err := WriteConfig(&vcl, "varnish", opts); err != nil {
		t.Fatal(err)
	}
	return "http://" + varnishtest.Start(t, vcl.Bytes())
}

// TestVarnishInFrontOfServe runs real varnishd with the printed VCL in
// front of guidepub serve on the sample export: files of a public id are
// hits once warmed, one object per negotiated encoding (a br request gets
// br bytes, a gzip one gzip bytes, and a browser's full Accept-Encoding
// the br object); a purge by one id's key evicts exactly that id's
// objects, its 404 included; a purge from outside the ACL is refused; a
// purge of everything evicts the rest.
func TestVarnishInFrontOfServe(t *testing.T) {
	varnishtest.Varnishd(t)
	root := sharedExport(t)
	_, hs, client := newTestServer(t, fsCase{"os", afero.NewOsFs(), root}, testConfig(noWatch))
	u, _ := url.Parse(hs.URL)
	base := startVarnish(t, ConfigOptions{Listen: u.Host})

	const id = "vKT301A"
	ids := publicIDs(t, root)
	otherID := ""
	for _, i := range ids {
		if i != id {
			otherID = i
			break
		}
	}
	if otherID == "" {
		t.Fatalf("the samples have one public id only: %v", ids)
	}
	get := func(path, ae string) (*http.Response, []byte) {
		t.Helper()
		h := map[string]string{"Accept-Encoding": ae}
		if ae == "" {
			h = nil
		}
		return do(t, client, "GET", base+path, h)
	}
	expect := func(path, ae, cache, encoding string) []byte {
		t.Helper()
		resp, body := get(path, ae)
		if got := resp.Header.Get("X-Cache"); got != cache {
			t.Errorf("GET %s (%q): X-Cache %q, want %q", path, ae, got, cache)
		}
		if got := resp.Header.Get("Content-Encoding"); got != encoding {
			t.Errorf("GET %s (%q): Content-Encoding %q, want %q", path, ae, got, encoding)
		}
		if resp.Header.Get("Age") != "" && resp.StatusCode == 200 {
			t.Errorf("GET %s: Age %q sent for a keyed object", path, resp.Header.Get("Age"))
		}
		return decompress(t, encoding, body)
	}

	summary := "/" + id + "/data/summary"
	_, identity := do(t, client, "GET", hs.URL+summary, nil)
	for _, tc := range []struct{ ae, want string }{{"br", "br"}, {"gzip", "gzip"}, {"zstd", "zstd"}, {"", ""}} {
		if got := expect(summary, tc.ae, "MISS", tc.want); !bytes.Equal(got, identity) {
			t.Errorf("%s as %q: not the document", summary, tc.ae)
		}
	}
	for _, tc := range []struct{ ae, want string }{
		{"br", "br"}, {"gzip", "gzip"}, {"zstd", "zstd"}, {"", ""},
		{"gzip, deflate, br, zstd", "br"}, {"gzip, deflate", "gzip"}, {"br;q=0, gzip", "gzip"},
		{"deflate", ""}, {"*", "br"},
	} {
		expect(summary, tc.ae, "HIT", tc.want)
	}

	// The files of both ids, and a 404 of the first, warmed.
	paths := []string{"/" + id, "/" + id + "/data/status", "/" + id + "/doc/nothing.jpg", "/" + otherID + "/data/status", "/" + otherID}
	for _, p := range paths {
		expect(p, "br", "MISS", encodingOf(t, client, hs.URL, p))
		expect(p, "br", "HIT", encodingOf(t, client, hs.URL, p))
	}

	// A purge from outside the ACL (127.0.0.2 is not 127.0.0.1) is refused.
	if resp := purge(t, base, "127.0.0.2", "xkey-purge", "guidepub-"+id); resp.StatusCode != http.StatusForbidden {
		t.Errorf("purge from 127.0.0.2: %s, want 403", resp.Status)
	}
	expect("/"+id+"/data/status", "br", "HIT", "br")

	resp := purge(t, base, "", "xkey-purge", "guidepub-"+id)
	if resp.StatusCode != http.StatusOK || !strings.Contains(resp.Status, "Purged") {
		t.Errorf("purge of %s: %s", id, resp.Status)
	}
	t.Logf("purge of %s: %s", id, resp.Status)
	for _, p := range []string{summary, "/" + id, "/" + id + "/data/status", "/" + id + "/doc/nothing.jpg"} {
		expect(p, "br", "MISS", encodingOf(t, client, hs.URL, p))
	}
	for _, p := range []string{"/" + otherID + "/data/status", "/" + otherID} {
		expect(p, "br", "HIT", encodingOf(t, client, hs.URL, p))
	}

	if resp := purge(t, base, "", "xkey-purge-all", "1"); resp.StatusCode != http.StatusOK {
		t.Errorf("purge of everything: %s", resp.Status)
	}
	for _, p := range []string{"/" + otherID + "/data/status", "/" + otherID, summary} {
		expect(p, "br", "MISS", encodingOf(t, client, hs.URL, p))
	}
}

// encodingOf returns the Content-Encoding serve at serveURL answers path
// with for a br request.
func encodingOf(t *testing.T, client *http.Client, serveURL, path string) string {
	t.Helper()
	resp, _ := do(t, client, "HEAD", serveURL+path, map[string]string{"Accept-Encoding": "br"})
	return resp.Header.Get("Content-Encoding")
}

// purge sends PURGE / with the header name: value to base, from the local
// address from ("" for any).
func purge(t *testing.T, base, from, name, value string) *http.Response {
	t.Helper()
	d := &net.Dialer{Timeout: 5 * time.Second}
	if from != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(from)}
	}
	c := &http.Client{Transport: &http.Transport{DialContext: d.DialContext}, Timeout: 10 * time.Second}
	defer c.CloseIdleConnections()
	req, err := http.NewRequestWithContext(context.Background(), "PURGE", base+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(name, value)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// publicIDs lists the view ids and aliases of the exported tree at root:
// its folders with a data/status.
func publicIDs(t *testing.T, root string) []string {
	t.Helper()
	ents, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range ents {
		if _, err := os.Stat(filepath.Join(root, e.Name(), "data", "status")); err == nil {
			ids = append(ids, e.Name())
		}
	}
	sort.Strings(ids)
	return ids
}

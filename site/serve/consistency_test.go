package serve

import (
	"bytes"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/site"
)

// TestTornEncodingsNeverServed writes a document whose siblings disagree,
// as an export killed between them leaves it: the identity and .br new,
// .gz and .zst old. Whatever encoding a client accepts, it must get the
// identity's content, and the mismatch must be logged. It checks both a
// tree torn before start and one torn before a reload.
func TestTornEncodingsNeverServed(t *testing.T) {
	const doc = "v1/data/summary"
	oldBody, newBody := summaryJSON(300), summaryJSON(600)
	writeTorn := func(t *testing.T, fsys afero.Fs, root string) {
		t.Helper()
		files := map[string][]byte{
			doc:                       newBody,
			doc + site.Brotli.Ext:     compress(t, site.Brotli, newBody),
			doc + site.Gzip.Ext:       compress(t, site.Gzip, oldBody),
			doc + site.Zstd.Ext:       compress(t, site.Zstd, oldBody),
			"v1/data/status":          []byte(`{"ok":true}`),
			"v1/data/status" + ".br":  compress(t, site.Brotli, []byte(`{"ok":true}`)),
			"v1/data/status" + ".gz":  compress(t, site.Gzip, []byte(`{"ok":true}`)),
			"v1/data/status" + ".zst": compress(t, site.Zstd, []byte(`{"ok":true}`)),
		}
		for name, data := range files {
			p := filepath.Join(root, filepath.FromSlash(name))
			if err := fsys.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := afero.WriteFile(fsys, p, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, when := range []string{"at start", "on reload"} {
		for _, fc := range fsCases(t, newTestTree()) {
			t.Run(when+"/"+fc.name, func(t *testing.T) {
				var logs bytes.Buffer
				if when == "at start" {
					writeTorn(t, fc.fsys, fc.root)
				}
				cfg := testConfig(noWatch, func(c *Config) { c.Logger = slog.New(slog.NewTextHandler(&logs, nil)) })
				s, hs, client := newTestServer(t, fc, cfg)
				if when == "on reload" {
					writeTorn(t, fc.fsys, fc.root)
					s.Reload()
				}
				for _, accept := range []string{"br", "gzip", "zstd", "zstd, gzip", "gzip;q=1, br;q=0.5", ""} {
					resp, body := do(t, client, "GET", hs.URL+"/"+doc, map[string]string{"Accept-Encoding": accept})
					if resp.StatusCode != http.StatusOK {
						t.Fatalf("Accept-Encoding %q: status %d", accept, resp.StatusCode)
					}
					enc := resp.Header.Get("Content-Encoding")
					if got := decompress(t, enc, body); !bytes.Equal(got, newBody) {
						t.Errorf("Accept-Encoding %q: got %q content (%d bytes), want the document's (%d bytes)", accept, enc, len(got), len(newBody))
					}
					if enc == "gzip" || enc == "zstd" {
						t.Errorf("Accept-Encoding %q: served the stale %s sibling", accept, enc)
					}
				}
				// A consistent document keeps all its encodings.
				resp, _ := do(t, client, "GET", hs.URL+"/v1/data/status", map[string]string{"Accept-Encoding": "zstd"})
				if got := resp.Header.Get("Content-Encoding"); got != "zstd" {
					t.Errorf("consistent document: Content-Encoding %q, want zstd", got)
				}
				if !strings.Contains(logs.String(), "does not match") || !strings.Contains(logs.String(), doc) {
					t.Errorf("mismatch not logged; log:\n%s", logs.String())
				}
			})
		}
	}
}

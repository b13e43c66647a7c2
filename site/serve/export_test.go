package serve

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/exporter"
	"github.com/guidepub/guidepub/fixtures"
	"github.com/guidepub/guidepub/site"
	"github.com/guidepub/guidepub/site/clock/clocktest"
)

// exportFixtures exports the sample bundles into a temp dir and returns
// the public tree's root.
func exportFixtures(t testing.TB) string {
	t.Helper()
	out, err := exportSamples(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// exportSamples exports the sample bundles into dir and returns the
// public tree's root.
func exportSamples(dir string) (string, error) {
	src := fixtures.BundlesDir()
	if src == "" {
		return "", errors.New("fixtures.BundlesDir unknown")
	}
	out, priv := filepath.Join(dir, "public"), filepath.Join(dir, "private")
	osfs := afero.NewOsFs()
	cfg := exporter.DefaultConfig()
	cfg.Src, cfg.SrcDir, cfg.Out, cfg.OutDir, cfg.Private, cfg.PrivateDir = osfs, src, osfs, out, osfs, priv
	cfg.Clock = clocktest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	e, err := exporter.New(cfg)
	if err != nil {
		return "", err
	}
	rep, err := e.ExportAll(context.Background())
	if err != nil {
		return "", err
	}
	if rep.Views == 0 {
		return "", fmt.Errorf("export wrote no views: %s", rep.Summary())
	}
	return out, nil
}

// shared is the export of the sample bundles that the tests which only
// read it share: the export takes seconds, and each of them would make
// the same one. TestMain removes it.
var shared struct {
	once      sync.Once
	dir, root string
	err       error
}

// sharedExport returns the root of the shared export, made on first use.
// A test that changes the tree must use exportFixtures instead.
func sharedExport(t testing.TB) string {
	t.Helper()
	shared.once.Do(func() {
		if shared.dir, shared.err = os.MkdirTemp("", "guidepub-serve-samples-"); shared.err == nil {
			shared.root, shared.err = exportSamples(shared.dir)
		}
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.root
}

// removeSharedExport removes the shared export, if one was made.
func removeSharedExport() {
	if shared.dir != "" {
		os.RemoveAll(shared.dir)
	}
}

// TestServeRealExport serves a real export of the sample bundles: every
// document in every encoding decodes to its identity file, every media
// file comes back byte for byte, and the exporter's bookkeeping and
// siblings are never served by name.
func TestServeRealExport(t *testing.T) {
	root := sharedExport(t)
	_, hs, client := newTestServer(t, fsCase{"os", afero.NewOsFs(), root}, testConfig())
	osfs := afero.NewOsFs()
	var docs, media int
	err := afero.Walk(osfs, root, func(p string, info fs.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		want, err := afero.ReadFile(osfs, p)
		if err != nil {
			return err
		}
		if site.IsHidden(rel) {
			if resp, _ := do(t, client, "GET", hs.URL+"/"+rel, nil); resp.StatusCode != 404 {
				t.Errorf("%s: hidden file served with %d", rel, resp.StatusCode)
			}
			return nil
		}
		if _, _, ok := site.SplitEncoded(rel); ok {
			if resp, _ := do(t, client, "GET", hs.URL+"/"+rel, nil); resp.StatusCode != 404 {
				t.Errorf("%s: sibling served by name with %d", rel, resp.StatusCode)
			}
			return nil
		}
		if !site.IsDocument(rel) {
			media++
			resp, body := do(t, client, "GET", hs.URL+"/"+rel, map[string]string{"Accept-Encoding": "br, gzip"})
			if resp.StatusCode != 200 || string(body) != string(want) || resp.Header.Get("Content-Type") != site.ContentType(rel) {
				t.Errorf("%s: %d, %d bytes, %s", rel, resp.StatusCode, len(body), resp.Header.Get("Content-Type"))
			}
			return nil
		}
		docs++
		for _, accept := range []string{"br", "zstd", "gzip", "identity", "gzip, deflate, br, zstd"} {
			resp, body := do(t, client, "GET", hs.URL+"/"+rel, map[string]string{"Accept-Encoding": accept})
			if resp.StatusCode != 200 {
				t.Fatalf("%s (%s): status %d", rel, accept, resp.StatusCode)
			}
			enc := resp.Header.Get("Content-Encoding")
			if accept != "identity" && !strings.Contains(accept, enc) {
				t.Errorf("%s: asked %q, got %q", rel, accept, enc)
			}
			if got := decompress(t, enc, body); string(got) != string(want) {
				t.Errorf("%s (%s): decodes to other bytes", rel, enc)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if docs == 0 || media == 0 {
		t.Fatalf("served %d documents and %d media files; the export should have both", docs, media)
	}
	t.Logf("checked %d documents and %d media files", docs, media)
}

package exporter

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/site"
	"github.com/guidepub/guidepub/site/viewpage"
)

// TestStylesheet: the export publishes the pages' stylesheet once for the
// tree, with its siblings, before any page that links it and before any
// status; every page links it; it is not written again while it holds
// the same bytes, and neither removing every guide nor a new stylesheet
// removes it.
func TestStylesheet(t *testing.T) {
	for _, kind := range fsKinds {
		t.Run(kind.name, func(t *testing.T) {
			ev := newEnv(t, kind)
			p := viewpage.StylesheetPath
			// The stylesheet of an earlier version, which its pages link.
			old := site.AssetsDir + "/view.0123456789abcdef.css"
			if err := ev.out.MkdirAll(filepath.Join(ev.outDir, site.AssetsDir), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := afero.WriteFile(ev.out, filepath.Join(ev.outDir, old), []byte("body{}"), 0o644); err != nil {
				t.Fatal(err)
			}
			rep := ev.exportAll()
			pub := snapshot(t, ev.out, ev.outDir)
			checkStylesheet(t, pub)
			// One guide's export writes it, first of all its files.
			writers := 0
			for _, g := range rep.Guides {
				i := slices.IndexFunc(g.Changes, func(c FileChange) bool { return c.Path == p })
				if i < 0 {
					continue
				}
				writers++
				for _, c := range g.Changes[:i] {
					if c.Path != p && !strings.HasPrefix(c.Path, p+".") {
						t.Errorf("%s written before the stylesheet", c.Path)
					}
				}
			}
			if writers != 1 {
				t.Errorf("%d guides' exports wrote the stylesheet, want 1", writers)
			}
			pages := 0
			for name, data := range pub {
				if _, ok := site.PageKindOf(name); ok {
					pages++
					if !bytes.Contains(data, []byte(`<link rel="stylesheet" href="/`+p+`">`)) {
						t.Errorf("%s does not link /%s", name, p)
					}
				}
			}
			if pages == 0 {
				t.Fatal("no page exported")
			}

			// A guide changes; a new Exporter (a new process) writes its
			// pages but not the stylesheet, which holds the same bytes.
			ev.editGuide(kingFolder, func(g map[string]any) { g["property"].(map[string]any)["city"] = "Waterloo" })
			res, err := ev.exporter().ExportBundle(context.Background(), kingFolder)
			if err != nil || res.Err != nil || !res.Changed {
				t.Fatalf("export after an edit: %+v, %v", res, err)
			}
			for _, c := range res.Changes {
				if strings.HasPrefix(c.Path, site.AssetsDir+"/") {
					t.Errorf("%s written again", c.Path)
				}
			}

			// No guide left: the stylesheets stay.
			e := ev.exporter()
			folders, err := e.Folders()
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range folders {
				if _, err := e.RemoveBundle(context.Background(), f); err != nil {
					t.Fatal(err)
				}
			}
			pub = snapshot(t, ev.out, ev.outDir)
			checkStylesheet(t, pub)
			if _, ok := pub[old]; !ok {
				t.Errorf("the earlier stylesheet %s was removed", old)
			}
		})
	}
}

// checkStylesheet checks that pub holds the stylesheet and its siblings,
// which decode to it.
func checkStylesheet(t *testing.T, pub map[string][]byte) {
	t.Helper()
	p := viewpage.StylesheetPath
	if !bytes.Equal(pub[p], viewpage.Stylesheet()) {
		t.Fatalf("%s holds %d bytes, not the stylesheet", p, len(pub[p]))
	}
	for _, enc := range site.Encodings {
		r, put, err := enc.NewReader(bytes.NewReader(pub[p+enc.Ext]))
		if err != nil {
			t.Fatalf("%s%s: %v", p, enc.Ext, err)
		}
		data, err := io.ReadAll(r)
		put()
		if err != nil || !bytes.Equal(data, pub[p]) {
			t.Errorf("%s%s does not decode to the stylesheet (%v)", p, enc.Ext, err)
		}
	}
}

package exporter

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/exporter/write"
	"github.com/guidepub/guidepub/site"
	"github.com/guidepub/guidepub/site/filestamp"
)

func TestStaleTempsRemoved(t *testing.T) {
	for _, kind := range fsKinds {
		t.Run(kind.name, func(t *testing.T) {
			ev := newEnv(t, kind)
			ev.exportAll()
			// A process killed in the middle of writing a guide leaves its
			// marker.
			if err := ev.exporter().w.Begin(); err != nil {
				t.Fatal(err)
			}
			stale := write.ProcessStart().Add(-time.Hour)
			fresh := time.Now().Add(time.Minute) // a write in progress elsewhere
			files := []struct {
				path string
				dir  bool
				mod  time.Time
				keep bool
			}{
				{filepath.Join(ev.outDir, kingDefault, "data", site.TempPrefix+"abc"), false, stale, false},
				{filepath.Join(ev.outDir, site.TempPrefix+"top"), false, stale, false},
				{filepath.Join(ev.privDir, site.GuidesDir, site.TempPrefix+"p1"), false, stale, false},
				{filepath.Join(ev.outDir, kingDefault, site.TempPrefix+"writing"), false, fresh, true},
				{filepath.Join(ev.outDir, kingDefault, ".tmpnot"), false, stale, true},
				{filepath.Join(ev.outDir, kingDefault, "keep.tmp-x"), false, stale, true},
				{filepath.Join(ev.outDir, site.TempPrefix+"dir"), true, stale, true},
			}
			for _, f := range files {
				var err error
				if f.dir {
					err = ev.out.MkdirAll(f.path, 0o755)
				} else {
					err = afero.WriteFile(ev.out, f.path, []byte("partial"), 0o644)
				}
				if err != nil {
					t.Fatal(err)
				}
				if err := ev.out.Chtimes(f.path, f.mod, f.mod); err != nil {
					t.Fatal(err)
				}
			}
			ev.exportAll()
			for _, f := range files {
				_, err := ev.out.Stat(f.path)
				if exists := err == nil; exists != f.keep {
					t.Errorf("%s: exists %v after the next export, want %v", f.path, exists, f.keep)
				}
			}
		})
	}
}

// TestEncodingsRepaired leaves one compressed sibling of a document
// holding other content, as an export killed between writing a
// document's siblings and the document does, and checks that the next
// export (a new process: export, or watch at its start) or the next
// export of the bundle repairs it.
func TestEncodingsRepaired(t *testing.T) {
	comp := write.NewCompressor()
	for _, kind := range fsKinds {
		for _, enc := range site.Encodings {
			for _, how := range []string{"ExportAll", "ExportBundle"} {
				t.Run(kind.name+"/"+enc.Name+"/"+how, func(t *testing.T) {
					ev := newEnv(t, kind)
					ev.exportAll()
					doc := filepath.Join(ev.outDir, kingDefault, filepath.FromSlash(site.SummaryFile))
					want, err := afero.ReadFile(ev.out, doc)
					if err != nil {
						t.Fatal(err)
					}
					other, err := comp.Compress(enc, []byte(`{"status":"not-ready"}`), false)
					if err != nil {
						t.Fatal(err)
					}
					// A process killed in the middle of writing a guide:
					// its marker stays, one sibling holds other content.
					killed := ev.exporter()
					if err := killed.w.Begin(); err != nil {
						t.Fatal(err)
					}
					if err := afero.WriteFile(ev.out, doc+enc.Ext, other, 0o644); err != nil {
						t.Fatal(err)
					}
					e := ev.exporter()
					if how == "ExportAll" {
						_, err = e.ExportAll(context.Background())
					} else {
						_, err = e.ExportBundle(context.Background(), kingFolder)
					}
					if err != nil {
						t.Fatal(err)
					}
					z, err := afero.ReadFile(ev.out, doc+enc.Ext)
					if err != nil {
						t.Fatal(err)
					}
					got, err := decompress(enc, z)
					if err != nil || !bytes.Equal(got, want) {
						t.Errorf("%s%s decodes to %.60q (err %v), want the document %.60q", doc, enc.Ext, got, err, want)
					}
					marker := filepath.Join(ev.privDir, "."+site.ManifestFile+".writing")
					if _, err := ev.out.Stat(marker); (err == nil) != (how == "ExportBundle") {
						t.Errorf("marker exists: %v after %s, want %v (removed once ExportAll checked everything)", err == nil, how, how == "ExportBundle")
					}
				})
			}
		}
	}
}

// TestMarkerRemovedAfterCleanExports checks that exports that finish
// leave no marker, so the next process does not check every document.
func TestMarkerRemovedAfterCleanExports(t *testing.T) {
	ev := newEnv(t, fsKinds[0])
	e := ev.exporter()
	if _, err := e.ExportAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	ev.editGuide(kingFolder, func(g map[string]any) { g["property"].(map[string]any)["city"] = "Kitchener" })
	if _, err := e.ExportBundle(context.Background(), kingFolder); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(ev.privDir, "."+site.ManifestFile+".writing")
	if _, err := ev.out.Stat(marker); err == nil {
		t.Error("marker left after exports that finished")
	}
	if ev.exporter().w.Verifying() {
		t.Error("a new exporter checks every document after clean exports")
	}
}

// TestRewrittenBehindRepaired: a public document rewritten behind the
// exporter's back, no export killed (no marker), with other bytes of the
// same size and its modification time put back (as cp -p or rsync -t
// leave a file), makes its guide not up to date: the next ExportAll, of a
// new process, publishes the document again. Its change time, which the
// guide's ledger keeps, is what tells.
func TestRewrittenBehindRepaired(t *testing.T) {
	ev := osEnv(t)
	ev.exportAll()
	doc := filepath.Join(ev.outDir, kingDefault, filepath.FromSlash(site.SummaryFile))
	want := readFile(t, doc)
	fi, err := os.Stat(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(doc, bytes.Repeat([]byte(" "), len(want)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(doc, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	now, err := os.Stat(doc)
	if err != nil {
		t.Fatal(err)
	}
	if filestamp.ChangeTime(now).IsZero() {
		t.Skip("this file system does not report change times")
	}
	res, err := ev.exporter().ExportAll(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, doc); !bytes.Equal(got, want) {
		t.Errorf("the rewritten document holds %.40q, want it published again", got)
	}
	if res.Written == 0 {
		t.Errorf("nothing written: %+v", res)
	}
}

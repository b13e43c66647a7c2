package exporter

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/site"
)

// fixtureFolders are the bundle folders of the fixtures.
var fixtureFolders = []string{"301-king-st-e", "ansi-us-house", "not-drafted", "rue-saint-denis"}

// finalTree exports every fixture with ExportBundle, without quick
// siblings, into a fresh environment and returns its public tree.
func finalTree(t *testing.T, kind fsKind) map[string][]byte {
	t.Helper()
	ev := newEnv(t, kind)
	e := ev.exporter()
	for _, f := range fixtureFolders {
		if _, err := e.ExportBundle(context.Background(), f); err != nil {
			t.Fatalf("export %s: %v", f, err)
		}
	}
	return snapshot(t, ev.out, ev.outDir)
}

// exportQuick exports every fixture with quick siblings and checks what
// each result says: quick siblings listed, in the record too, and the
// guide due again now.
func exportQuick(t *testing.T, ev *env) *Exporter {
	t.Helper()
	ev.cfg.QuickSiblings = true
	e := ev.exporter()
	for _, f := range fixtureFolders {
		res, err := e.ExportBundle(context.Background(), f)
		if err != nil {
			t.Fatalf("export %s: %v", f, err)
		}
		if res.Quick == 0 || !res.NextChange.Equal(ev.now) || res.Recompressed {
			t.Errorf("%s: Quick %d, NextChange %v, Recompressed %v; want quick siblings, due now (%v)", f, res.Quick, res.NextChange, res.Recompressed, ev.now)
		}
		mg, ok := e.records.Get(res.GuideID)
		if !ok || len(mg.Quick) != res.Quick {
			t.Errorf("%s: the record lists %d quick siblings, want %d", f, len(mg.Quick), res.Quick)
		}
	}
	return e
}

// checkQuickTree checks a tree written with quick siblings against the
// final one: the same paths, every sibling decoding to its document, and
// the brotli siblings of pages not the final bytes.
func checkQuickTree(t *testing.T, got, final map[string][]byte) {
	t.Helper()
	if a, b := strings.Join(sortedNames(got), "\n"), strings.Join(sortedNames(final), "\n"); a != b {
		t.Fatalf("quick export published other paths than the final one:\n%s", lineDiff([]byte(b), []byte(a)))
	}
	differ := 0
	for name, data := range got {
		doc, enc, ok := site.SplitEncoded(name)
		if !ok {
			if !bytes.Equal(data, final[name]) {
				t.Errorf("%s: differs from the final export's", name)
			}
			continue
		}
		plain, err := decompress(enc, data)
		if err != nil || !bytes.Equal(plain, got[doc]) {
			t.Errorf("%s does not decode to %s (%v)", name, doc, err)
		}
		if !bytes.Equal(data, final[name]) {
			differ++
		}
	}
	if differ == 0 {
		t.Error("every sibling holds the final bytes: nothing was compressed quickly")
	}
}

// TestQuickSiblings: an export with quick siblings publishes every file a
// final export does, its siblings decoding to the same documents; the
// next export of the same bundles replaces them with the final bytes
// (the public tree then byte for byte an export's without quick
// siblings), without a new revision; the one after finds nothing to do.
func TestQuickSiblings(t *testing.T) {
	for _, kind := range fsKinds {
		t.Run(kind.name, func(t *testing.T) {
			final := finalTree(t, kind)
			ev := newEnv(t, kind)
			e := exportQuick(t, ev)
			checkQuickTree(t, snapshot(t, ev.out, ev.outDir), final)
			revisions := map[string]string{}
			for _, f := range fixtureFolders {
				res, err := e.ExportBundle(context.Background(), f)
				if err != nil {
					t.Fatalf("finish %s: %v", f, err)
				}
				if !res.Recompressed || res.Quick != 0 || res.Written == 0 || !res.NextChange.IsZero() && res.NextChange.Equal(ev.now) {
					t.Errorf("%s finished: Recompressed %v, Quick %d, Written %d, NextChange %v", f, res.Recompressed, res.Quick, res.Written, res.NextChange)
				}
				for _, c := range res.Changes {
					if _, _, ok := site.SplitEncoded(c.Path); !ok || c.Removed {
						t.Errorf("%s finished: changed %s (removed %v), not a compressed sibling", f, c.Path, c.Removed)
					}
				}
				revisions[f] = res.Revision
			}
			got := snapshot(t, ev.out, ev.outDir)
			for _, name := range sortedNames(final) {
				if !bytes.Equal(got[name], final[name]) {
					t.Errorf("%s after finishing: %d bytes, want the final export's %d", name, len(got[name]), len(final[name]))
				}
			}
			for _, f := range fixtureFolders {
				res, err := e.ExportBundle(context.Background(), f)
				if err != nil || res.Changed || res.Quick != 0 || res.Revision != revisions[f] {
					t.Errorf("%s once more: Changed %v, Quick %d, revision %s (was %s), %v", f, res.Changed, res.Quick, res.Revision, revisions[f], err)
				}
			}
		})
	}
}

// TestFinishingGivesWayToUploads: the export that finishes a guide's quick
// siblings (its bundle unchanged) does not start while another upload's
// export is in progress, nor while another finishing export runs: it
// writes nothing, leaves the record as it was and is due again a moment
// later; once nothing is in its way, it finishes. An upload of a changed
// bundle is exported all the same.
func TestFinishingGivesWayToUploads(t *testing.T) {
	ev := newEnv(t, fsKinds[0])
	e := exportQuick(t, ev)
	ctx := context.Background()
	folder, guide := fixtureFolders[0], kingGuide
	before := snapshot(t, ev.out, ev.outDir)
	quick := len(e.records.Summaries()[guide].Quick)
	retry := finishRetry
	check := func(when string) {
		t.Helper()
		res, err := e.ExportBundle(ctx, folder)
		if err != nil || res.Written > 0 || !res.Recompressed || res.Quick != quick || !res.NextChange.Equal(ev.now.Add(retry)) {
			t.Errorf("%s: %v, written %d, Recompressed %v, Quick %d, NextChange %v; want nothing written, due again after %v",
				when, err, res.Written, res.Recompressed, res.Quick, res.NextChange, retry)
		}
		retry *= 2 // each time in a row
		if c := changed(before, snapshot(t, ev.out, ev.outDir)); len(c) > 0 {
			t.Errorf("%s: changed %v", when, c)
		}
		if n := len(e.records.Summaries()[guide].Quick); n != quick {
			t.Errorf("%s: the record lists %d quick siblings, want %d", when, n, quick)
		}
	}
	upload := e.way.changed.start() // another guide's upload, being exported
	check("while an upload is exported")
	// A changed bundle is an upload: it is exported.
	ev.editGuide(fixtureFolders[1], func(g map[string]any) { g["workOrderId"] = "WO-CHANGED" })
	if res, err := e.ExportBundle(ctx, fixtureFolders[1]); err != nil || !res.Changed {
		t.Errorf("the upload of a changed bundle: Changed %v, %v", res.Changed, err)
	}
	upload()
	before = snapshot(t, ev.out, ev.outDir)
	release, ok := e.way.finishing() // another finishing export
	if !ok {
		t.Fatal("no finishing export may start with nothing in its way")
	}
	check("while another finishing export runs")
	release()
	res, err := e.ExportBundle(ctx, folder)
	if err != nil || !res.Recompressed || res.Quick != 0 || res.Written == 0 {
		t.Errorf("with nothing in its way: %v, Recompressed %v, Quick %d, Written %d; want it finished", err, res.Recompressed, res.Quick, res.Written)
	}
	if n := len(e.way.stepped); n != 0 {
		t.Errorf("%d guides still counted as having given way", n)
	}
}

// TestExpiryDoesNotGiveWay: a guide whose quick siblings are still to be
// finished, and one of whose views expires meanwhile, is exported at once
// although an upload is in progress: what its views show changed (the
// view is locked now), so it is no finishing export, which would give way
// for as long as uploads go on.
func TestExpiryDoesNotGiveWay(t *testing.T) {
	ev := newEnv(t, fsKinds[0])
	e := exportQuick(t, ev)
	const folder, view = "rue-saint-denis", "vSTDENIS-2099"
	ev.now = time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC) // after the view's expiresAt
	defer e.way.changed.start()()                        // another guide's upload, being exported
	res, err := e.ExportBundle(context.Background(), folder)
	if err != nil || res.Written == 0 || res.Recompressed {
		t.Fatalf("%v, written %d, Recompressed %v; want the guide exported, not given way", err, res.Written, res.Recompressed)
	}
	status, err := afero.ReadFile(ev.out, filepath.Join(ev.outDir, view, "data", "status"))
	if err != nil || !bytes.Contains(status, []byte(`"locked"`)) {
		t.Errorf("%s's status after its expiry: %s, %v; want locked", view, status, err)
	}
}

// TestFinishRetryBacksOff: each time in a row a guide's finishing gives
// way, it is tried again twice as late, maxFinishRetry at most; once done,
// the count starts again.
func TestFinishRetryBacksOff(t *testing.T) {
	var g giveWay
	var got []time.Duration
	for range 8 {
		got = append(got, g.steppedAside("g1"))
	}
	want := []time.Duration{1, 2, 4, 8, 16, 32, 32, 32}
	for i := range want {
		if got[i] != want[i]*time.Second {
			t.Fatalf("retries %v, want %v seconds", got, want)
		}
	}
	if d := g.steppedAside("g2"); d != finishRetry {
		t.Errorf("another guide's first retry after %v", d)
	}
	g.done("g1")
	if d := g.steppedAside("g1"); d != finishRetry {
		t.Errorf("after done, retry after %v", d)
	}
}

// TestQuickSiblingsAfterRestart: a process that stops after exporting with
// quick siblings leaves them listed in the records; the next start's
// export of the whole tree replaces them with the final bytes.
func TestQuickSiblingsAfterRestart(t *testing.T) {
	kind := fsKinds[1]
	final := finalTree(t, kind)
	ev := newEnv(t, kind)
	exportQuick(t, ev)
	ev.cfg.QuickSiblings = false
	rep := ev.exportAll()
	for _, g := range rep.Guides {
		if g.Err != nil || !g.Recompressed || g.Quick != 0 {
			t.Errorf("%s at restart: Recompressed %v, Quick %d, %v", g.Folder, g.Recompressed, g.Quick, g.Err)
		}
	}
	got := snapshot(t, ev.out, ev.outDir)
	for _, name := range sortedNames(final) {
		if !bytes.Equal(got[name], final[name]) {
			t.Errorf("%s after the restart: %d bytes, want the final export's %d", name, len(got[name]), len(final[name]))
		}
	}
	for id, mg := range ev.exporter().records.Summaries() {
		if len(mg.Quick) != 0 {
			t.Errorf("%s: record lists quick siblings %v after the restart's export", id, mg.Quick)
		}
	}
}

// TestStatusAfterItsView checks the order in which an upload's files get
// their names (render.Plan.Files): a view's status after every media
// file, document and default-language page of that view (and the
// alias's, for the default view); the default view's status before the
// other view's files; the pages in other languages after every status;
// the ready event last.
func TestStatusAfterItsView(t *testing.T) {
	ev := osEnv(t)
	log := recordSyncs(t, ev.outDir)
	if _, err := ev.exporter().ExportBundle(context.Background(), "301-king-st-e"); err != nil {
		t.Fatal(err)
	}
	named := map[string]int{} // public path -> when it got its name
	for i, s := range log.steps {
		if s.step == "link" || s.step == "rename" || s.step == "hardlink" {
			rel, _ := filepath.Rel(ev.outDir, s.name)
			named[filepath.ToSlash(rel)] = i
		}
	}
	status := func(id string) int {
		t.Helper()
		n, ok := named[id+"/"+site.StatusFile]
		if !ok {
			t.Fatalf("no status for %s", id)
		}
		return n
	}
	defStatus := min(status("vKT301A"), status("301-king-st-e"))
	otherStatus := status("vKT301B")
	for p, n := range named {
		doc, _, ok := site.SplitEncoded(p)
		if !ok {
			doc = p
		}
		top := strings.Split(strings.TrimPrefix(strings.TrimPrefix(doc, site.UnbrandedDir+"/"), site.EmbedDir+"/"), "/")
		otherLang := len(top) == 3 && top[2] == "index.html" || len(top) == 2 && top[1] != "index.html" && len(top[1]) == 2
		switch {
		case strings.HasSuffix(doc, "/"+site.StatusFile) || strings.HasPrefix(doc, site.AssetsDir+"/"):
		case otherLang:
			if n < otherStatus || n < defStatus {
				t.Errorf("%s named before a status", p)
			}
		case top[0] == "vKT301A" || top[0] == "301-king-st-e":
			if n > defStatus {
				t.Errorf("%s named after the default view's status", p)
			}
		case top[0] == "vKT301B":
			if n < defStatus || n > otherStatus {
				t.Errorf("%s named outside its view's stage (before the default view's status or after its own)", p)
			}
		default:
			t.Errorf("%s: a file of no view", p)
		}
	}
}

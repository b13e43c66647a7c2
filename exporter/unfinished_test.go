package exporter

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/guidepub/guidepub/exporter/publish/publishtest"
	"github.com/guidepub/guidepub/exporter/write"
	"github.com/guidepub/guidepub/site"
)

// TestFailedExportWithdraws checks what an export that fails half-way
// leaves of the version before. When it changes what a view shows (here
// it hides the default view's address), every public file it did not
// reach is deleted and listed as removed, so that neither the tree nor a
// live bucket keeps the address; when it does not (a room renamed), they
// stay as they were. The next export without the fault publishes the
// whole guide again.
func TestFailedExportWithdraws(t *testing.T) {
	const postalCode = "N2G 2L3" // of the king guide's address
	for _, tc := range []struct {
		name     string
		edit     func(g map[string]any)
		withdraw bool
	}{
		{"hide", func(g map[string]any) { g["views"].([]any)[0].(map[string]any)["hidden"] = []any{"address"} }, true},
		{"edit", func(g map[string]any) {
			b := g["summary"].(map[string]any)["buildings"].([]any)[0].(map[string]any)
			b["name"] = "Main house, renamed"
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := newEnv(t, fsKinds[0])
			if rep := ev.exportAll(); rep.Rejected != 0 {
				t.Fatal(rep.Summary())
			}
			before := snapshot(t, ev.out, ev.outDir)
			ev.editGuide(kingFolder, tc.edit)
			faults := publishtest.NewFaultFs(ev.out)
			faults.Fail(1000, func(op, name string) bool {
				return op == "rename" && strings.HasSuffix(filepath.ToSlash(name), "/reso/autofill")
			})
			ev.cfg.Out = faults
			res, err := ev.exporter().ExportBundle(context.Background(), kingFolder)
			if !errors.Is(err, syscall.ENOSPC) || faults.Failed() == 0 {
				t.Fatalf("error %v after %d failed writes, want the export failed on its autofill", err, faults.Failed())
			}
			after := snapshot(t, ev.out, ev.outDir)
			removed := map[string]bool{}
			for _, c := range res.Changes {
				if c.Removed {
					removed[c.Path] = true
				}
			}
			var gone []string
			for p := range before {
				if _, ok := after[p]; !ok {
					gone = append(gone, p)
					if !removed[p] {
						t.Errorf("%s deleted, not listed as removed", p)
					}
				}
			}
			if !tc.withdraw {
				if len(gone) > 0 {
					t.Fatalf("an export that hides nothing more deleted %v", gone)
				}
				return
			}
			if len(gone) == 0 {
				t.Fatal("nothing withdrawn")
			}
			for p, data := range after {
				if seg := strings.Split(p, "/"); !slices.Contains(seg, "vKT301A") && !slices.Contains(seg, kingFolder) {
					continue // the other view and its pages keep what they show
				}
				if doc, enc, ok := site.SplitEncoded(p); ok && enc != site.Identity {
					if data, err = decompress(enc, data); err != nil {
						t.Fatalf("%s: %v", p, err)
					}
					p = doc + " (" + enc.Name + ")"
				}
				if bytes.Contains(data, []byte(postalCode)) {
					t.Errorf("%s still shows the hidden address", p)
				}
			}

			ev.cfg.Out = ev.out
			if _, err := ev.exporter().ExportBundle(context.Background(), kingFolder); err != nil {
				t.Fatal(err)
			}
			for _, p := range gone {
				if _, err := ev.out.Stat(filepath.Join(ev.outDir, p)); err != nil {
					t.Errorf("%s not published again: %v", p, err)
				}
			}
		})
	}
}

// TestStoppedExportListsWhatItWrote: an export stopped after writing some
// files (its context ended once the first of them was in place: the
// process asked to stop) lists every public file it changed in its
// result, so that a live publisher puts them in the bucket too: the tree
// and the bucket must not part, least of all when the change hides
// something.
func TestStoppedExportListsWhatItWrote(t *testing.T) {
	ev := osEnv(t)
	if rep := ev.exportAll(); rep.Rejected != 0 {
		t.Fatal(rep.Summary())
	}
	before := snapshot(t, ev.out, ev.outDir)
	ev.editGuide(kingFolder, func(g map[string]any) {
		g["views"].([]any)[0].(map[string]any)["hidden"] = []any{"address"}
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	write.SyncHook = func(step, name string) {
		if strings.HasPrefix(name, ev.outDir+string(filepath.Separator)) && (step == "link" || step == "rename") {
			cancel()
		}
	}
	t.Cleanup(func() { write.SyncHook = nil })
	res, err := ev.exporter().ExportBundle(ctx, kingFolder)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want the export stopped", err)
	}
	listed := map[string]bool{}
	for _, c := range res.Changes {
		listed[c.Path] = true
	}
	c := changed(before, snapshot(t, ev.out, ev.outDir))
	if len(c) == 0 {
		t.Fatal("the export changed no public file before it stopped: the test shows nothing")
	}
	for _, p := range c {
		if !listed[p] {
			t.Errorf("%s changed but is not in the result's changes", p)
		}
	}
}

package exporter

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"slices"
	"testing"

	"github.com/spf13/afero"
)

// TestPublicFiles: a guide's result lists exactly the public files its
// export wrote (with the SHA-256 of their bytes) or removed, so that a
// live publisher sends those and nothing else.
func TestPublicFiles(t *testing.T) {
	for _, kind := range fsKinds {
		t.Run(kind.name, func(t *testing.T) {
			ev := newEnv(t, kind)
			ctx := context.Background()
			first := ev.exportAll()
			before := snapshot(t, ev.out, ev.outDir)
			// The first export lists every public file, each once.
			var all []string
			for _, g := range first.Guides {
				checkListed(t, ev, g.Changes)
				for _, f := range g.Changes {
					all = append(all, f.Path)
				}
			}
			slices.Sort(all)
			if want := sortedNames(before); !slices.Equal(all, want) {
				t.Fatalf("first export listed %d files, the tree holds %d", len(all), len(want))
			}

			// Nothing changed: nothing listed.
			res, err := ev.exporter().ExportBundle(ctx, kingFolder)
			if err != nil || len(res.Changes) != 0 {
				t.Fatalf("unchanged re-export lists %v (%v)", res.Changes, err)
			}

			// One view removed: its files are listed as removed, the
			// files that changed as written, and nothing else.
			ev.editGuide(kingFolder, func(g map[string]any) { g["views"] = g["views"].([]any)[:1] })
			res, err = ev.exporter().ExportBundle(ctx, kingFolder)
			if err != nil {
				t.Fatal(err)
			}
			after := snapshot(t, ev.out, ev.outDir)
			var listed []string
			for _, f := range res.Changes {
				listed = append(listed, f.Path)
			}
			want := changed(before, after)
			slices.Sort(listed)
			slices.Sort(want)
			if !slices.Equal(listed, want) {
				t.Fatalf("listed %v\nchanged %v", listed, want)
			}
			checkListed(t, ev, res.Changes)

			// The bundle removed: every public file it had is listed as removed.
			if err := ev.src.RemoveAll(filepath.Join(ev.srcDir, kingFolder)); err != nil {
				t.Fatal(err)
			}
			res, err = ev.exporter().RemoveBundle(ctx, kingFolder)
			if err != nil || len(res.Changes) == 0 {
				t.Fatalf("removal lists %d files (%v)", len(res.Changes), err)
			}
			for _, f := range res.Changes {
				if !f.Removed {
					t.Errorf("%s listed as written by a removal", f.Path)
				}
			}
			checkListed(t, ev, res.Changes)
		})
	}
}

// checkListed fails unless every written file listed holds the bytes whose
// hash is listed, and every removed one is gone.
func checkListed(t *testing.T, ev *env, files []FileChange) {
	t.Helper()
	for _, f := range files {
		data, err := afero.ReadFile(ev.out, filepath.Join(ev.outDir, filepath.FromSlash(f.Path)))
		if f.Removed {
			if err == nil {
				t.Errorf("%s listed as removed but exists", f.Path)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s listed as written: %v", f.Path, err)
			continue
		}
		if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != f.SHA256 {
			t.Errorf("%s: listed hash differs from the file's", f.Path)
		}
	}
}

// TestExportAllEach: ExportAllEach hands out every guide's result with
// the files it wrote, and its report keeps the results without them.
func TestExportAllEach(t *testing.T) {
	ev := newEnv(t, fsKinds[0])
	var all []string
	handed := map[string]bool{}
	rep, err := ev.exporter().ExportAllEach(context.Background(), func(g GuideResult) {
		if handed[g.Folder] {
			t.Errorf("%s handed out twice", g.Folder)
		}
		handed[g.Folder] = true
		checkListed(t, ev, g.Changes)
		for _, f := range g.Changes {
			all = append(all, f.Path)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range rep.Guides {
		if len(g.Changes) != 0 {
			t.Errorf("the report keeps %d changes of %s", len(g.Changes), g.Folder)
		}
		if g.Err == nil && !handed[g.Folder] {
			t.Errorf("%s exported but not handed out", g.Folder)
		}
	}
	slices.Sort(all)
	if want := sortedNames(snapshot(t, ev.out, ev.outDir)); !slices.Equal(all, want) {
		t.Fatalf("handed out %d files, the tree holds %d", len(all), len(want))
	}
}

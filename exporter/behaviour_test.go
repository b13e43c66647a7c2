package exporter

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/exporter/media/mediatest"
	"github.com/guidepub/guidepub/exporter/records"
	"github.com/guidepub/guidepub/exporter/records/recordstest"
	"github.com/guidepub/guidepub/exporter/render"
	"github.com/guidepub/guidepub/site"
)

// The fixture bundle most behaviour tests change.
const (
	kingFolder  = "301-king-st-e"
	kingGuide   = "gKT301KINGE1"
	kingAlias   = "301-king-st-e"
	kingDefault = "vKT301A"
	kingSecond  = "vKT301B"
)

// noTempFiles fails if a temporary file is left anywhere under dir.
func noTempFiles(t *testing.T, fsys afero.Fs, dir string) {
	t.Helper()
	for name := range snapshot(t, fsys, dir) {
		if strings.HasPrefix(filepath.Base(name), site.TempPrefix) {
			t.Errorf("temporary file left: %s", name)
		}
	}
}

// changed returns the paths whose content differs between two snapshots,
// including added and removed ones.
func changed(before, after map[string][]byte) []string {
	var out []string
	for name, data := range after {
		if old, ok := before[name]; !ok || !bytes.Equal(old, data) {
			out = append(out, name)
		}
	}
	for name := range before {
		if _, ok := after[name]; !ok {
			out = append(out, name)
		}
	}
	return out
}

// resultFor returns the result of folder in rep.
func resultFor(t *testing.T, rep *Report, folder string) GuideResult {
	t.Helper()
	for _, g := range rep.Guides {
		if g.Folder == folder {
			return g
		}
	}
	t.Fatalf("no result for folder %s in %+v", folder, rep.Guides)
	return GuideResult{}
}

func isDirMissing(fsys afero.Fs, p string) bool {
	_, err := fsys.Stat(p)
	return errors.Is(err, fs.ErrNotExist)
}

func TestIncremental(t *testing.T) {
	for _, kind := range fsKinds {
		t.Run(kind.name, func(t *testing.T) {
			ev := newEnv(t, kind)
			first := ev.exportAll()
			if first.Written == 0 {
				t.Fatal("first export wrote nothing")
			}
			pub0, priv0 := snapshot(t, ev.out, ev.outDir), snapshot(t, ev.out, ev.privDir)

			// Second export: nothing written, nothing deleted, same bytes.
			second := ev.exportAll()
			if second.Written != 0 || second.Deleted != 0 || second.Bytes != 0 {
				t.Fatalf("second export: %s", second.Summary())
			}
			// The stylesheet is no guide's: an unchanged guide is not
			// written at all, nor is the stylesheet checked for it.
			if shared := len(sharedPaths(pub0)); second.Unchanged != first.Written-shared || shared != 1+len(ev.cfg.Encodings) {
				t.Errorf("second export: %d unchanged, want %d (the files of the first but the %d of the stylesheet)", second.Unchanged, first.Written-shared, shared)
			}
			if c := changed(pub0, snapshot(t, ev.out, ev.outDir)); len(c) > 0 {
				t.Fatalf("second export changed %v", c)
			}

			// A deleted published file is restored even though no input changed.
			lost := filepath.Join(ev.outDir, kingDefault, "data", "summary.br")
			if err := ev.out.Remove(lost); err != nil {
				t.Fatal(err)
			}
			rep := ev.exportAll()
			if rep.Written != 1 {
				t.Errorf("restoring one deleted file: %s", rep.Summary())
			}
			if c := changed(pub0, snapshot(t, ev.out, ev.outDir)); len(c) > 0 {
				t.Fatalf("after restoring: changed %v", c)
			}

			// A media file changes (same guide.json, same pixel size): its
			// copies and renditions change.
			photo := filepath.Join(ev.srcDir, kingFolder, "photos", "front.jpg")
			if err := afero.WriteFile(ev.src, photo, mediatest.Sample("a new front photo.jpg", 960, 720), 0o644); err != nil {
				t.Fatal(err)
			}
			ev.exportAll()
			pubPhoto := snapshot(t, ev.out, ev.outDir)
			got := changed(pub0, pubPhoto)
			slices.Sort(got)
			want := []string{"vKT301A/doc/en/galleryFrontImage.jpg", "vKT301A/doc/photos/ph-1.jpg", "vKT301A/doc/photos/ph-1.w480.jpg",
				"vKT301B/doc/en/galleryFrontImage.jpg", "vKT301B/doc/photos/ph-1.jpg", "vKT301B/doc/photos/ph-1.w480.jpg"}
			if !slices.Equal(got, want) {
				t.Errorf("after changing a photo, changed %v, want %v", got, want)
			}
			pub0 = pubPhoto

			// One guide changes: only its files change.
			ev.editGuide(kingFolder, func(g map[string]any) {
				g["property"].(map[string]any)["city"] = "Waterloo"
			})
			rep = ev.exportAll()
			for _, g := range rep.Guides {
				if (g.Written > 0 || g.Changed) != (g.Folder == kingFolder) {
					t.Errorf("after changing %s: %s wrote %d files (changed %v)", kingFolder, g.Folder, g.Written, g.Changed)
				}
			}
			pub1, priv1 := snapshot(t, ev.out, ev.outDir), snapshot(t, ev.out, ev.privDir)
			for _, name := range changed(pub0, pub1) {
				top := strings.SplitN(name, "/", 2)[0]
				if top == site.UnbrandedDir || top == site.EmbedDir { // a view page: u/<id>/index.html
					top = strings.SplitN(name, "/", 3)[1]
				}
				if top != kingDefault && top != kingSecond && top != kingAlias {
					t.Errorf("public file of another guide changed: %s", name)
				}
			}
			for _, name := range changed(priv0, priv1) {
				if name != records.RecordsDir(0, 0)+"/"+kingGuide+".json" && !strings.HasPrefix(name, site.GuideDir(kingGuide)+"/") {
					t.Errorf("private file of another guide changed: %s", name)
				}
			}
			king := resultFor(t, rep, kingFolder)
			if king.Revision == "" || king.Revision == resultFor(t, first, kingFolder).Revision {
				t.Errorf("revision did not change: %q", king.Revision)
			}

			// A view goes away: its folder goes away.
			ev.editGuide(kingFolder, func(g map[string]any) {
				g["views"] = g["views"].([]any)[:1]
			})
			rep = ev.exportAll()
			if !isDirMissing(ev.out, filepath.Join(ev.outDir, kingSecond)) {
				t.Errorf("folder of removed view %s still exists", kingSecond)
			}
			if resultFor(t, rep, kingFolder).Deleted == 0 {
				t.Error("removing a view deleted nothing")
			}

			// The alias is renamed: the old alias folder goes away.
			ev.editGuide(kingFolder, func(g map[string]any) { g["alias"] = "king-301" })
			ev.exportAll()
			if !isDirMissing(ev.out, filepath.Join(ev.outDir, kingAlias)) {
				t.Error("old alias folder still exists")
			}
			if _, err := ev.out.Stat(filepath.Join(ev.outDir, "king-301", "data", "status")); err != nil {
				t.Errorf("new alias not published: %v", err)
			}

			// The bundle goes away: every file of the guide goes away.
			if err := ev.src.RemoveAll(filepath.Join(ev.srcDir, kingFolder)); err != nil {
				t.Fatal(err)
			}
			rep = ev.exportAll()
			if gone := resultFor(t, rep, kingFolder); gone.GuideID != kingGuide || gone.Deleted == 0 {
				t.Errorf("removal result %+v", gone)
			}
			for _, p := range []string{filepath.Join(ev.outDir, kingDefault), filepath.Join(ev.outDir, "king-301"), filepath.Join(ev.privDir, site.GuideDir(kingGuide))} {
				if !isDirMissing(ev.out, p) {
					t.Errorf("%s still exists after its bundle was removed", p)
				}
			}
			if _, ok := ev.exporter().Manifest().Guides[kingGuide]; ok {
				t.Error("removed guide still in the manifest")
			}
			noTempFiles(t, ev.out, filepath.Dir(ev.outDir))
		})
	}
}

func TestRejectedBundleKeepsPublished(t *testing.T) {
	for _, kind := range fsKinds {
		t.Run(kind.name, func(t *testing.T) {
			ev := newEnv(t, kind)
			ev.exportAll()
			pub0, priv0 := snapshot(t, ev.out, ev.outDir), snapshot(t, ev.out, ev.privDir)
			ev.editGuide(kingFolder, func(g map[string]any) {
				g["alias"] = "renamed-alias" // would move files if accepted
				g["views"].([]any)[1].(map[string]any)["hidden"] = []any{"maps"}
			})
			ev.editGuide("rue-saint-denis", func(g map[string]any) {
				g["property"].(map[string]any)["city"] = "Laval"
			})
			rep, err := ev.exporter().ExportAll(context.Background())
			if err != nil {
				t.Fatalf("ExportAll: %v", err)
			}
			if rep.Rejected != 1 {
				t.Fatalf("rejected %d, want 1", rep.Rejected)
			}
			var be *bundle.Error
			if king := resultFor(t, rep, kingFolder); !errors.As(king.Err, &be) || !strings.Contains(be.Error(), "$.views[1].hidden[0]") {
				t.Fatalf("want a *bundle.Error naming the hidden feature, got %v", king.Err)
			}
			pub1, priv1 := snapshot(t, ev.out, ev.outDir), snapshot(t, ev.out, ev.privDir)
			for _, name := range changed(pub0, pub1) {
				top := strings.SplitN(name, "/", 2)[0]
				if top == kingDefault || top == kingSecond || top == kingAlias || top == "renamed-alias" {
					t.Errorf("rejected bundle changed %s", name)
				}
			}
			for _, name := range changed(priv0, priv1) {
				if strings.HasPrefix(name, site.GuideDir(kingGuide)+"/") {
					t.Errorf("rejected bundle changed private %s", name)
				}
			}
			if len(changed(pub0, pub1)) == 0 {
				t.Error("the other, valid bundle was not exported")
			}

			// ExportBundle of the rejected folder: same error, nothing changes.
			_, err = ev.exporter().ExportBundle(context.Background(), kingFolder)
			if !errors.As(err, &be) {
				t.Fatalf("ExportBundle: want *bundle.Error, got %v", err)
			}
			if c := changed(pub1, snapshot(t, ev.out, ev.outDir)); len(c) > 0 {
				t.Errorf("ExportBundle of a rejected bundle changed %v", c)
			}
			noTempFiles(t, ev.out, filepath.Dir(ev.outDir))
		})
	}
}

// copyBundle copies the bundle folder from to a new folder to, then edits
// its guide.json.
func (ev *env) copyBundle(from, to string, edit func(g map[string]any)) {
	ev.t.Helper()
	src := filepath.Join(ev.srcDir, from)
	err := afero.Walk(ev.src, src, func(p string, fi fs.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		dst := filepath.Join(ev.srcDir, to, rel)
		if fi.IsDir() {
			return ev.src.MkdirAll(dst, 0o755)
		}
		data, err := afero.ReadFile(ev.src, p)
		if err != nil {
			return err
		}
		return afero.WriteFile(ev.src, dst, data, 0o644)
	})
	if err != nil {
		ev.t.Fatal(err)
	}
	ev.editGuide(to, edit)
}

// otherIDs gives a copied bundle its own guide id, view ids and alias.
func otherIDs(suffix string) func(g map[string]any) {
	return func(g map[string]any) {
		g["guideId"] = "g" + suffix
		g["alias"] = "alias-" + suffix
		for i, v := range g["views"].([]any) {
			v.(map[string]any)["viewId"] = "v" + suffix + "-" + string(rune('a'+i))
		}
	}
}

func TestConflicts(t *testing.T) {
	tests := []struct {
		name   string
		folder string // the copy; "aa-" sorts before the original, "zz-" after
		edit   func(g map[string]any)
		path   string // JSON path of the expected problem
	}{
		{"alias claimed, copy sorts first", "aa-copy", func(g map[string]any) {
			otherIDs("AA")(g)
			g["alias"] = kingAlias
		}, "$.alias"},
		{"view id claimed, copy sorts last", "zz-copy", func(g map[string]any) {
			otherIDs("ZZ")(g)
			g["views"].([]any)[1].(map[string]any)["viewId"] = kingSecond
		}, "$.views[1].viewId"},
		{"view id claimed as alias", "aa-copy", func(g map[string]any) {
			otherIDs("AB")(g)
			g["alias"] = kingDefault
		}, "$.alias"},
		{"guide id claimed", "aa-copy", func(g map[string]any) {
			otherIDs("AC")(g)
			g["guideId"] = kingGuide
		}, "$.guideId"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Across runs: the published bundle wins whatever the names.
			ev := newEnv(t, fsKinds[0])
			ev.exportAll()
			pub0 := snapshot(t, ev.out, ev.outDir)
			ev.copyBundle(kingFolder, tc.folder, tc.edit)
			rep := ev.exportAll()
			res := resultFor(t, rep, tc.folder)
			var be *bundle.Error
			if !errors.As(res.Err, &be) || !strings.Contains(be.Error(), tc.path) {
				t.Fatalf("copy: want a *bundle.Error at %s, got %v", tc.path, res.Err)
			}
			if king := resultFor(t, rep, kingFolder); king.Err != nil {
				t.Fatalf("published bundle rejected: %v", king.Err)
			}
			if c := changed(pub0, snapshot(t, ev.out, ev.outDir)); len(c) > 0 {
				t.Errorf("conflicting bundle changed %v", c)
			}
			if _, err := ev.exporter().ExportBundle(context.Background(), tc.folder); !errors.As(err, &be) {
				t.Errorf("ExportBundle: want *bundle.Error, got %v", err)
			}

			// Within one fresh build: the first folder by name wins.
			fresh := newEnv(t, fsKinds[0])
			fresh.copyBundle(kingFolder, tc.folder, tc.edit)
			rep = fresh.exportAll()
			first, second := tc.folder, kingFolder
			if tc.folder > kingFolder {
				first, second = kingFolder, tc.folder
			}
			if r := resultFor(t, rep, first); r.Err != nil {
				t.Errorf("fresh build: %s (first by name) rejected: %v", first, r.Err)
			}
			if r := resultFor(t, rep, second); !errors.As(r.Err, &be) {
				t.Errorf("fresh build: %s (second by name) not rejected", second)
			}
			if rep.Rejected != 1 {
				t.Errorf("fresh build: %d rejected, want 1", rep.Rejected)
			}
		})
	}
}

func TestExpiry(t *testing.T) {
	ev := newEnv(t, fsKinds[0])
	rep := ev.exportAll()
	denis := resultFor(t, rep, "rue-saint-denis")
	want2099 := time.Date(2099, 12, 31, 23, 59, 59, 0, time.UTC)
	if !denis.NextChange.Equal(want2099) {
		t.Errorf("NextChange %v, want %v", denis.NextChange, want2099)
	}
	status := func(view string) string {
		data, err := afero.ReadFile(ev.out, filepath.Join(ev.outDir, view, "data", "status"))
		if err != nil {
			t.Fatal(err)
		}
		var s site.StatusDoc
		if err := json.Unmarshal(data, &s); err != nil {
			t.Fatal(err)
		}
		return s.Status
	}
	if got := status("vSTDENIS-2099"); got != site.StatusReady {
		t.Fatalf("before expiry: %s", got)
	}
	if got := status("vSTDENIS-2020"); got != site.StatusLocked {
		t.Fatalf("expired view: %s", got)
	}
	ev.now = want2099 // expiry is inclusive: locked from that instant on
	rep = ev.exportAll()
	if got := status("vSTDENIS-2099"); got != site.StatusLocked {
		t.Fatalf("after expiry: %s", got)
	}
	if !isDirMissing(ev.out, filepath.Join(ev.outDir, "vSTDENIS-2099", "reso")) {
		t.Error("autofill of a locked view still published")
	}
	if !isDirMissing(ev.out, filepath.Join(ev.outDir, "vSTDENIS-2099", "doc")) {
		t.Error("media of a locked view still published")
	}
	if r := resultFor(t, rep, "rue-saint-denis"); !r.NextChange.IsZero() || !r.Changed {
		t.Errorf("after expiry: NextChange %v, changed %v", r.NextChange, r.Changed)
	}

	// The default view expires: the ready event goes away, the record says so.
	ev.editGuide(kingFolder, func(g map[string]any) {
		g["views"].([]any)[0].(map[string]any)["expiresAt"] = "2030-01-01T00:00:00Z"
	})
	ev.exportAll()
	if _, err := ev.out.Stat(filepath.Join(ev.privDir, site.EventPath(kingGuide))); err == nil {
		t.Error("ready event of a locked default view still exists")
	}
	var rec site.GuideRecord
	data, err := afero.ReadFile(ev.out, filepath.Join(ev.privDir, site.RecordPath(kingGuide)))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &rec); err != nil || rec.Ready {
		t.Errorf("record of a locked default view: ready %v (err %v)", rec.Ready, err)
	}
	if !isDirMissing(ev.out, filepath.Join(ev.privDir, site.GuideDir(kingGuide), site.MediaDir)) {
		t.Error("private documents of a guide without event still exist")
	}
}

func TestDeterministic(t *testing.T) {
	a, b := newEnv(t, fsKinds[1]), newEnv(t, fsKinds[1])
	a.cfg.Jobs, b.cfg.Jobs = 1, 4
	a.exportAll()
	b.exportAll()
	for _, tr := range []struct{ a, b string }{{a.outDir, b.outDir}, {filepath.Join(a.privDir, site.GuidesDir), filepath.Join(b.privDir, site.GuidesDir)}} {
		sa, sb := snapshot(t, a.out, tr.a), snapshot(t, b.out, tr.b)
		if len(sa) == 0 {
			t.Fatal("nothing exported")
		}
		if c := changed(sa, sb); len(c) > 0 {
			t.Errorf("two exports differ in %v", c)
		}
	}
}

// viewFiles returns the published files of one view folder, relative to it.
func viewFiles(pub map[string][]byte, view string) map[string][]byte {
	out := map[string][]byte{}
	for name, data := range pub {
		if rest, ok := strings.CutPrefix(name, view+"/"); ok {
			out[rest] = data
		}
	}
	return out
}

// TestHiddenUnreachable checks the hidden features rule (docs/documents.md#hidden-features) on every view of the
// fixtures: nothing a view hides is in its documents or its media folder,
// and every media URL it shows resolves.
func TestHiddenUnreachable(t *testing.T) {
	ev := newEnv(t, fsKinds[0])
	ev.exportAll()
	pub := snapshot(t, ev.out, ev.outDir)
	for name := range pub {
		if strings.HasSuffix(name, ".zip") {
			t.Errorf("private document in the public tree: %s", name)
		}
	}
	folders, err := ev.exporter().Folders()
	if err != nil {
		t.Fatal(err)
	}
	checked := map[string]bool{}
	for _, folder := range folders {
		b, err := bundle.Load(ev.src, filepath.Join(ev.srcDir, folder))
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range b.Guide.Views {
			files := viewFiles(pub, v.ViewID)
			if render.ViewStatus(&b.Guide, &v, ev.now) != site.StatusReady {
				// Status, summary and the page that says the view is not
				// ready, in each of the guide's languages.
				pages := 0
				for name := range files {
					if strings.HasSuffix(name, site.PageFile) {
						pages++
					}
				}
				if len(files) != (2+pages)*(1+len(site.Encodings)) || files[site.PageFile] == nil {
					t.Errorf("%s not ready: want only status, summary and page, got %v", v.ViewID, sortedNames(files))
				}
				continue
			}
			for _, h := range v.Hidden {
				checked[h] = true
			}
			t.Run(v.ViewID, func(t *testing.T) { checkHidden(t, &b.Guide, v, files, pub) })
		}
	}
	for _, h := range bundle.HiddenFeatures {
		if !checked[h] {
			t.Errorf("no ready fixture view hides %q: the check is not exercised", h)
		}
	}
}

func checkHidden(t *testing.T, g *bundle.Guide, v bundle.View, files, pub map[string][]byte) {
	hides := v.Hides
	_, hasSummary := files[site.SummaryFile]
	if hasSummary == hides(bundle.HideMeasurements) {
		t.Errorf("data/summary present %v with measurements hidden %v", hasSummary, hides(bundle.HideMeasurements))
	}
	if hasSummary && hides(bundle.HideRoomDimensions) {
		var doc site.SummaryDoc
		if err := json.Unmarshal(files[site.SummaryFile], &doc); err != nil {
			t.Fatal(err)
		}
		for _, b := range doc.Summary.Buildings {
			for _, f := range b.Floors {
				for _, r := range f.Rooms {
					if len(r.Dims) != 0 {
						t.Errorf("room %d has dims with roomDimensions hidden", r.ID)
					}
				}
			}
		}
	}
	var media []string
	for name := range files {
		if strings.HasPrefix(name, site.MediaDir+"/") {
			media = append(media, name)
		}
	}
	for _, name := range media {
		base := filepath.Base(name)
		if hides(bundle.HideFloorPlans) && (strings.HasPrefix(base, "pdf") || strings.HasPrefix(base, "jpg") || strings.HasPrefix(base, "embedImage")) {
			t.Errorf("floor plan file %s with floorPlans hidden", name)
		}
		// The hide table is the rule for every file (docs/output.md#the-hide-table).
		if f, id, ok := site.PublicFileOf(v.ViewID + "/" + name); !ok || id != v.ViewID {
			t.Errorf("%s: no row of the hide table", name)
		} else if f.HiddenIn(v.Hidden) {
			t.Errorf("%s (%s) published by a view hiding %v", name, f.Kind, v.Hidden)
		}
		if hides(bundle.HidePhotos) && (strings.Contains(name, "/photos/") || strings.HasPrefix(base, "galleryFrontImage")) {
			t.Errorf("photo file %s with photos hidden", name)
		}
	}
	data, hasAutofill := files[site.AutofillFile]
	if hasAutofill == hides(bundle.HideAutofill) {
		t.Errorf("reso/autofill present %v with autofill hidden %v", hasAutofill, hides(bundle.HideAutofill))
	}
	if !hasAutofill {
		return
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	a := doc["value"].([]any)[0].(map[string]any)
	var walk func(x any, path string)
	walk = func(x any, path string) {
		switch x := x.(type) {
		case map[string]any:
			for k, val := range x {
				p := path + "." + k
				if k == "Media" {
					continue // pixel sizes, not measures
				}
				measure := strings.HasSuffix(k, "Area") || strings.HasSuffix(k, "Length") || strings.HasSuffix(k, "Width") ||
					strings.HasSuffix(k, "Thickness") || strings.HasSuffix(k, "Units") || strings.HasSuffix(k, "Source")
				if hides(bundle.HideMeasurements) && measure {
					t.Errorf("%s present with measurements hidden", p)
				}
				if hides(bundle.HideRoomDimensions) && (k == "RoomWidth" || k == "RoomLength" || strings.HasPrefix(k, "RoomLengthWidth")) {
					t.Errorf("%s present with roomDimensions hidden", p)
				}
				walk(val, p)
			}
		case []any:
			for _, el := range x {
				walk(el, path+"[]")
			}
		}
	}
	walk(a, "$")
	for _, k := range []string{"Country", "StateOrProvince", "City", "PostalCode", "StreetName", "StreetNumber", "UnitNumber"} {
		if _, ok := a[k]; ok == hides(bundle.HideAddress) && (ok || k == "City") {
			t.Errorf("address field %s present %v with address hidden %v", k, ok, hides(bundle.HideAddress))
		}
	}
	categories := map[string]int{}
	for _, m := range a["Media"].([]any) {
		rec := m.(map[string]any)
		cat := rec["MediaCategory"].(string)
		categories[cat]++
		u := rec["MediaURL"].(string)
		switch cat {
		case site.MediaVideo:
			if u != g.Media.Video || len(rec) != 3 {
				t.Errorf("video record %v", rec)
			}
		case site.MediaBrandedTour, site.MediaUnbrandedTour:
			// The branded tour frames the embedded page, the unbranded tour
			// the unbranded page (docs/pages.md#mls-rules).
			framed := testURLs.embed + "/" + v.ViewID
			if cat == site.MediaUnbrandedTour {
				framed = u
			}
			if !strings.HasSuffix(u, "/"+v.ViewID) || !strings.Contains(rec["MediaHTML"].(string), `src="`+framed+`"`) {
				t.Errorf("tour record %v", rec)
			}
		default:
			rel, ok := strings.CutPrefix(u, testURLs.view+"/")
			if !ok {
				t.Errorf("media URL %s is not under the view URL", u)
			} else if _, ok := pub[rel]; !ok {
				t.Errorf("media URL %s does not resolve to a published file", u)
			}
		}
	}
	if (categories[site.MediaFloorPlan] > 0) == hides(bundle.HideFloorPlans) {
		t.Errorf("%d floor plan records with floorPlans hidden %v", categories[site.MediaFloorPlan], hides(bundle.HideFloorPlans))
	}
	if (categories[site.MediaPhoto] > 0) == hides(bundle.HidePhotos) {
		t.Errorf("%d photo records with photos hidden %v", categories[site.MediaPhoto], hides(bundle.HidePhotos))
	}
	if (categories[site.MediaVideo] > 0) == (hides(bundle.HideVideo) || g.Media.Video == "") {
		t.Errorf("%d video records with video hidden %v", categories[site.MediaVideo], hides(bundle.HideVideo))
	}
}

func TestExportBundleAndRemoveBundle(t *testing.T) {
	ev := newEnv(t, fsKinds[0])
	e := ev.exporter()
	folders, err := e.Folders()
	if err != nil {
		t.Fatal(err)
	}
	// Concurrent exports of different folders, and twice the same folder.
	var wg sync.WaitGroup
	results := make([]*GuideResult, len(folders)+1)
	for i, f := range append(folders, kingFolder) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := e.ExportBundle(context.Background(), f)
			if err != nil {
				t.Errorf("ExportBundle %s: %v", f, err)
			}
			results[i] = r
		}()
	}
	wg.Wait()
	all := snapshot(t, ev.out, ev.outDir)
	ref := newEnv(t, fsKinds[0])
	ref.exportAll()
	if c := changed(snapshot(t, ref.out, ref.outDir), all); len(c) > 0 {
		t.Fatalf("concurrent ExportBundle differs from ExportAll in %v", c)
	}
	king := results[0]
	if king.Folder != kingFolder || !king.Ready || king.Revision == "" || king.GuideID != kingGuide {
		t.Errorf("result %+v", king)
	}
	// The manifest a new Exporter reads knows every guide.
	if got := len(ev.exporter().Manifest().Guides); got != len(folders) {
		t.Errorf("manifest has %d guides, want %d", got, len(folders))
	}

	r, err := e.RemoveBundle(context.Background(), kingFolder)
	if err != nil || r.Deleted == 0 || !r.Changed {
		t.Fatalf("RemoveBundle: %+v, %v", r, err)
	}
	after := snapshot(t, ev.out, ev.outDir)
	for name := range after {
		top := strings.SplitN(name, "/", 2)[0]
		if top == kingDefault || top == kingSecond || top == kingAlias {
			t.Errorf("%s still published after RemoveBundle", name)
		}
	}
	if len(after) == 0 || len(after) >= len(all) {
		t.Errorf("RemoveBundle left %d of %d files", len(after), len(all))
	}
	if r, err := e.RemoveBundle(context.Background(), kingFolder); err != nil || r.Deleted != 0 {
		t.Errorf("second RemoveBundle: %+v, %v", r, err)
	}
	if _, err := e.ExportBundle(context.Background(), "../escape"); err == nil {
		t.Error("ExportBundle accepted a folder name with a slash")
	}
}

// TestRecordsOnePerGuide checks that each guide's record lists the hashes
// and stamp of every public file it published, as the file is on disk,
// and that exporting one changed guide rewrites that guide's record only.
func TestRecordsOnePerGuide(t *testing.T) {
	ev := newEnv(t, fsKinds[1])
	e := ev.exporter()
	check := func(when string) {
		t.Helper()
		n, last := 0, ""
		for f, err := range e.Records().PublicFiles() {
			if err != nil {
				t.Fatal(err)
			}
			if f.Path <= last {
				t.Errorf("%s: %s after %s: not in path order", when, f.Path, last)
			}
			n, last = n+1, f.Path
			p := filepath.Join(ev.outDir, filepath.FromSlash(f.Path))
			data, err := afero.ReadFile(ev.out, p)
			if err != nil {
				t.Fatalf("%s: %v", when, err)
			}
			sum, m := sha256.Sum256(data), md5.Sum(data)
			fi, _ := ev.out.Stat(p)
			if f.SHA256 != hex.EncodeToString(sum[:]) || f.MD5 != hex.EncodeToString(m[:]) || !f.Holds(fi) {
				t.Errorf("%s: record of %s is %+v, file has hashes %x, %x and size %d", when, f.Path, f, sum, m, fi.Size())
			}
		}
		// The stylesheet is no guide's, so in no record.
		if pub := snapshot(t, ev.out, ev.outDir); n != len(pub)-len(sharedPaths(pub)) {
			t.Errorf("%s: %d public files recorded, %d in the tree and %d of them no guide's", when, n, len(pub), len(sharedPaths(pub)))
		}
	}
	if _, err := e.ExportAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	check("after ExportAll")
	before := snapshot(t, ev.out, ev.privDir)
	ev.editGuide(kingFolder, func(g map[string]any) {
		g["property"].(map[string]any)["city"] = "Waterloo"
	})
	if r, err := e.ExportBundle(context.Background(), kingFolder); err != nil || !r.Changed {
		t.Fatalf("ExportBundle after an edit: %+v, %v", r, err)
	}
	check("after one guide changed")
	for _, name := range changed(before, snapshot(t, ev.out, ev.privDir)) {
		if strings.HasPrefix(name, records.RecordsDir(0, 0)+"/") && name != records.RecordsDir(0, 0)+"/"+kingGuide+".json" {
			t.Errorf("exporting %s rewrote %s", kingFolder, name)
		}
	}
	if _, err := e.RemoveBundle(context.Background(), kingFolder); err != nil {
		t.Fatal(err)
	}
	check("after a guide was removed")
	if _, err := ev.out.Stat(filepath.Join(ev.privDir, records.RecordsDir(0, 0), kingGuide+".json")); err == nil {
		t.Error("the removed guide's record is left")
	}
}

// TestEncodingsSetting checks that --encodings chooses the siblings and
// that dropping one deletes its files.
func TestEncodingsSetting(t *testing.T) {
	ev := newEnv(t, fsKinds[0])
	ev.exportAll()
	ev.cfg.Encodings = []site.Encoding{site.Gzip}
	rep := ev.exportAll()
	pub := snapshot(t, ev.out, ev.outDir)
	docs := 0
	for name := range pub {
		if strings.HasSuffix(name, ".br") || strings.HasSuffix(name, ".zst") {
			t.Errorf("%s left after its encoding was dropped", name)
		}
		if site.IsDocument(name) {
			docs++
			if _, ok := pub[name+".gz"]; !ok {
				t.Errorf("%s has no .gz", name)
			}
		}
	}
	if rep.Deleted != 2*docs {
		t.Errorf("deleted %d, want %d", rep.Deleted, 2*docs)
	}
	// Only the records change (their revision covers the deleted files);
	// the .gz siblings were up to date.
	if rep.Written != len(rep.Guides) {
		t.Errorf("wrote %d files, want %d (one record per guide)", rep.Written, len(rep.Guides))
	}
	ev.cfg.Encodings = []site.Encoding{{Name: "lzma", Ext: ".xz"}}
	if _, err := New(ev.cfg); err == nil {
		t.Error("unknown encoding accepted")
	}
}

// TestRecordErrors checks that a damaged record stops the exporter with a
// clear error naming it instead of republishing blindly.
func TestRecordErrors(t *testing.T) {
	ev := newEnv(t, fsKinds[0])
	ev.exportAll()
	p := filepath.Join(ev.privDir, records.RecordsDir(0, 0), kingGuide+".json")
	if err := afero.WriteFile(ev.out, p, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := New(ev.cfg); err == nil || !strings.Contains(err.Error(), p) {
		t.Errorf("damaged record: got %v", err)
	}
}

// TestManifestMigrated checks that a tree exported by a version that kept
// one manifest.json is taken over: the manifest becomes per-guide records,
// and the next export changes no public file.
func TestManifestMigrated(t *testing.T) {
	ev := newEnv(t, fsKinds[0])
	ev.exportAll()
	// Make the private tree what the previous version left.
	legacy := ev.exporter().Manifest()
	data, err := render.MarshalJSON(legacy)
	if err != nil {
		t.Fatal(err)
	}
	if err := ev.out.RemoveAll(filepath.Join(ev.privDir, records.RecordsDir(0, 0))); err != nil {
		t.Fatal(err)
	}
	if err := afero.WriteFile(ev.out, filepath.Join(ev.privDir, site.ManifestFile), data, 0o600); err != nil {
		t.Fatal(err)
	}
	pub0 := snapshot(t, ev.out, ev.outDir)
	e := ev.exporter()
	if got := e.Manifest(); len(got.Guides) != len(legacy.Guides) {
		t.Fatalf("converted %d guides, want %d", len(got.Guides), len(legacy.Guides))
	}
	rep, err := e.ExportAll(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if c := changed(pub0, snapshot(t, ev.out, ev.outDir)); len(c) > 0 || rep.Deleted != 0 {
		t.Errorf("the export after the conversion changed %v, deleted %d", c, rep.Deleted)
	}
	if _, err := ev.out.Stat(filepath.Join(ev.privDir, site.ManifestFile)); err == nil {
		t.Error("manifest.json left after its conversion")
	}
}

// TestMoveBetweenExports renames a published bundle folder between two
// ExportAll runs: the guide moves to its new folder without being
// unpublished first (no file deleted, none rewritten), and its ids stay
// its own.
func TestMoveBetweenExports(t *testing.T) {
	ev := newEnv(t, fsKinds[0])
	ev.exportAll()
	pub0 := snapshot(t, ev.out, ev.outDir)
	if err := ev.src.Rename(filepath.Join(ev.srcDir, kingFolder), filepath.Join(ev.srcDir, "moved-king")); err != nil {
		t.Fatal(err)
	}
	rep := ev.exportAll()
	if rep.Deleted != 0 || rep.Written != 0 {
		t.Errorf("move: deleted %d, wrote %d files, want none", rep.Deleted, rep.Written)
	}
	if c := changed(pub0, snapshot(t, ev.out, ev.outDir)); len(c) > 0 {
		t.Errorf("move changed %v", c)
	}
	if got := ev.exporter().Manifest().Guides[kingGuide].Folder; got != "moved-king" {
		t.Errorf("guide published from %q, want moved-king", got)
	}
}

// TestExportAllBesideExportBundle runs ExportAll while every folder is
// exported by ExportBundle at the same time (a watcher reacting to
// uploads during its catch-up export): ExportAll holds no folder for its
// whole run, and the result is the tree a lone ExportAll makes.
func TestExportAllBesideExportBundle(t *testing.T) {
	ev := newEnv(t, fsKinds[0])
	e := ev.exporter()
	folders, err := e.Folders()
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		if _, err := e.ExportAll(context.Background()); err != nil {
			t.Errorf("ExportAll: %v", err)
		}
	})
	for _, f := range folders {
		wg.Go(func() {
			if _, err := e.ExportBundle(context.Background(), f); err != nil {
				t.Errorf("ExportBundle %s: %v", f, err)
			}
		})
	}
	wg.Wait()
	ref := newEnv(t, fsKinds[0])
	ref.exportAll()
	if c := changed(snapshot(t, ref.out, ref.outDir), snapshot(t, ev.out, ev.outDir)); len(c) > 0 {
		t.Errorf("differs from a lone ExportAll in %v", c)
	}
	if got := len(ev.exporter().Manifest().Guides); got != len(folders) {
		t.Errorf("%d guides recorded, want %d", got, len(folders))
	}
}

// TestGuideIDReplacedInPlace changes the guideId of a published bundle,
// keeping its view ids and alias: the new guide takes them over, the old
// guide is unpublished, and none of the files the new guide now publishes
// is deleted with the old one.
func TestGuideIDReplacedInPlace(t *testing.T) {
	ev := newEnv(t, fsKinds[0])
	ev.exportAll()
	ev.editGuide(kingFolder, func(g map[string]any) { g["guideId"] = "gKT301REPLACED" })
	rep := ev.exportAll()
	if r := resultFor(t, rep, kingFolder); r.Err != nil {
		t.Fatalf("replaced guide rejected: %v", r.Err)
	}
	m := ev.exporter().Manifest()
	if _, ok := m.Guides[kingGuide]; ok {
		t.Error("the old guide is still recorded")
	}
	mg, ok := m.Guides["gKT301REPLACED"]
	if !ok {
		t.Fatal("the new guide is not recorded")
	}
	for _, p := range mg.Files {
		if _, err := ev.out.Stat(filepath.Join(ev.outDir, filepath.FromSlash(p))); err != nil {
			t.Errorf("file of the new guide missing: %v", err)
		}
	}
	// The same through ExportBundle, as a watcher does it.
	ev.editGuide(kingFolder, func(g map[string]any) { g["guideId"] = "gKT301AGAIN" })
	e := ev.exporter()
	if _, err := e.ExportBundle(context.Background(), kingFolder); err != nil {
		t.Fatal(err)
	}
	mg = e.Manifest().Guides["gKT301AGAIN"]
	if len(mg.Files) == 0 {
		t.Fatal("the new guide is not recorded")
	}
	for _, p := range mg.Files {
		if _, err := ev.out.Stat(filepath.Join(ev.outDir, filepath.FromSlash(p))); err != nil {
			t.Errorf("ExportBundle: file of the new guide missing: %v", err)
		}
	}
}

// TestGuideIDReplacedBeforeRecordsAreRead: an upload made as the exporter
// starts (Start) is published while its records are still read (their
// folder held closed), the guide its folder published before under
// another guide id is left as it is, and ExportAll, once they are read,
// unpublishes it without touching what the new guide took over.
func TestGuideIDReplacedBeforeRecordsAreRead(t *testing.T) {
	ev := newEnv(t, fsKinds[0])
	ev.exportAll()
	ev.editGuide(kingFolder, func(g map[string]any) { g["guideId"] = "gKT301EARLY" })
	e, release := ev.startHeld()
	done := make(chan error, 1)
	go func() {
		_, err := e.ExportBundle(context.Background(), kingFolder)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("ExportBundle: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("ExportBundle waited for every record")
	}
	if _, err := ev.out.Stat(filepath.Join(ev.privDir, records.RecordsDir(0, 0), kingGuide+".json")); err != nil {
		t.Errorf("the old guide's record is gone before the records are read: %v", err)
	}
	release()
	if _, err := e.ExportAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	m := e.Manifest()
	if _, ok := m.Guides[kingGuide]; ok {
		t.Error("the old guide is still recorded after ExportAll")
	}
	mg := m.Guides["gKT301EARLY"]
	if len(mg.Files) == 0 {
		t.Fatal("the new guide is not recorded")
	}
	for _, p := range mg.Files {
		if _, err := ev.out.Stat(filepath.Join(ev.outDir, filepath.FromSlash(p))); err != nil {
			t.Errorf("file of the new guide missing: %v", err)
		}
	}
}

// startHeld starts an Exporter over the environment (Start) whose read
// of its records is held until release is called or the test ends, and
// returns once that read has begun.
func (ev *env) startHeld() (e *Exporter, release func()) {
	ev.t.Helper()
	held := recordstest.Hold(ev.cfg.Private, filepath.Join(ev.privDir, records.RecordsDir(0, 0)))
	ev.t.Cleanup(held.Release)
	cfg := ev.cfg
	cfg.Private = held
	e, err := Start(cfg)
	if err != nil {
		ev.t.Fatal(err)
	}
	<-held.Reached()
	return e, held.Release
}

// TestRacingClaimsBeforeRecordsAreRead: bundles uploaded at once, while the
// records are still read, all claiming the same view id and alias (each
// with its own guide id): exactly one is published, the others are
// rejected, and the ids stay with the one published once the records are
// read.
func TestRacingClaimsBeforeRecordsAreRead(t *testing.T) {
	ev := newEnv(t, fsKinds[0])
	fixtures := len(ev.exportAll().Guides)
	const racers = 8
	for i := range racers {
		suffix := fmt.Sprintf("race%d", i)
		ev.copyBundle(kingFolder, "racer-"+suffix, func(g map[string]any) {
			otherIDs("shared")(g)
			g["guideId"] = "g" + suffix
		})
	}
	e, release := ev.startHeld()
	errs := make([]error, racers)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range racers {
		wg.Go(func() {
			<-start
			_, errs[i] = e.ExportBundle(context.Background(), fmt.Sprintf("racer-race%d", i))
		})
	}
	close(start)
	wg.Wait()
	winner := -1
	for i, err := range errs {
		var be *bundle.Error
		switch {
		case err == nil && winner >= 0:
			t.Errorf("racers %d and %d both published the shared ids", winner, i)
		case err == nil:
			winner = i
		case !errors.As(err, &be):
			t.Errorf("racer %d: %v, want a rejection", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no racer was published")
	}
	release()
	if err := e.Loaded(); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("grace%d", winner)
	for _, id := range []string{"vshared-a", "alias-shared"} {
		if gid := e.Manifest().Guides[want]; !slices.Contains(gid.Ids, id) {
			t.Errorf("%s: not the winner's (%s) once the records are read", id, want)
		}
	}
	if n := len(e.Manifest().Guides); n != fixtures+1 {
		t.Errorf("%d guides recorded, want the %d fixtures and the winner", n, fixtures)
	}
}

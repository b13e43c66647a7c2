package records

import (
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/exporter/claims"
	"github.com/guidepub/guidepub/exporter/ledger"
	"github.com/guidepub/guidepub/exporter/write"
	"github.com/guidepub/guidepub/site"
)

// memRecords returns empty records in a memory file system.
func memRecords() *Records {
	r := newRecords(write.Tree{FS: afero.NewMemMapFs(), Root: "/private", Perm: 0o600}, RecordsDir(0, 0))
	r.finishLoad(nil)
	return r
}

// claim is c.Claim for a test: an error (records that could not be read)
// fails it.
func claim(t *testing.T, c *claims.Claims, folder string, g claims.IDs, m *Records, alive claims.Alive) []bundle.Problem {
	t.Helper()
	problems, err := c.Claim(folder, g, m, alive)
	if err != nil {
		t.Fatalf("claim %s: %v", folder, err)
	}
	return problems
}

// TestRecordsRoundTrip checks that records written one guide at a time are
// read back whole by OpenRecords, that a change rewrites that guide's file
// only, and that a removal deletes its file.
func TestRecordsRoundTrip(t *testing.T) {
	fsys := afero.NewMemMapFs()
	r, err := OpenRecords(fsys, "/private", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	next := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	a := site.ManifestGuide{Folder: "fa", Ids: []string{"v1"}, Files: []string{"v1/data/status", "v1/data/status.br"}, Private: []string{"guides/a/record.json"}}
	b := site.ManifestGuide{Folder: "fb", Ids: []string{"v2", "alias"}, NextChange: &next, Ready: true, Views: 1}
	pubA := ledger.Ledger{{Path: "v1/data/status", SHA256: "00", Stamp: ledger.Stamp{Size: 3, ModTime: 7}},
		{Path: "v1/data/status.br", SHA256: "11", Stamp: ledger.Stamp{Size: 2, ModTime: 8}}}
	for _, rec := range []*record{newRecord("a", a, ledger.Guide{Public: pubA}), newRecord("b", b, ledger.Guide{})} {
		if err := r.write(rec); err != nil {
			t.Fatal(err)
		}
	}
	fileB := filepath.Join("/private", RecordsDir(0, 0), "b.json")
	before, err := fsys.Stat(fileB)
	if err != nil {
		t.Fatal(err)
	}
	a.Revision = "r2"
	if err := r.write(newRecord("a", a, ledger.Guide{Public: pubA})); err != nil {
		t.Fatal(err)
	}
	if after, _ := fsys.Stat(fileB); !after.ModTime().Equal(before.ModTime()) {
		t.Error("changing guide a rewrote guide b's record")
	}
	back, err := OpenRecords(fsys, "/private", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := back.Snapshot().Guides
	if len(got) != 2 || got["a"].Revision != "r2" || !got["b"].NextChange.Equal(next) || !slices.Equal(got["a"].Files, a.Files) {
		t.Errorf("read back %+v", got)
	}
	if gid, _, ok, err := back.owner("alias"); !ok || gid != "b" || err != nil {
		t.Errorf("owner(alias) = %q, %v, %v", gid, ok, err)
	}
	f, ok, err := back.Lookup("v1/data/status.br")
	if err != nil || !ok || !reflect.DeepEqual(f, pubA[1]) {
		t.Errorf("Lookup = %+v, %v, %v", f, ok, err)
	}
	if err := back.Delete("a"); err != nil {
		t.Fatal(err)
	}
	if _, err := fsys.Stat(filepath.Join("/private", RecordsDir(0, 0), "a.json")); err == nil {
		t.Error("record of a removed guide left")
	}
}

// TestRecordsMigrateManifest checks that a legacy manifest.json becomes one
// record per guide and is deleted, and that a damaged one stops OpenRecords.
func TestRecordsMigrateManifest(t *testing.T) {
	fsys := afero.NewMemMapFs()
	legacy := `{"version":1,"guides":{"g1":{"folder":"f1","revision":"r1","ids":["v1"],"files":["v1/data/status"],"private":[]}}}`
	if err := afero.WriteFile(fsys, "/private/manifest.json", []byte(legacy), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := OpenRecords(fsys, "/private", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if mg, ok := r.Get("g1"); !ok || mg.Folder != "f1" || mg.Revision != "r1" || !slices.Equal(mg.Files, []string{"v1/data/status"}) {
		t.Errorf("converted entry %+v, %v", mg, ok)
	}
	if _, err := fsys.Stat("/private/manifest.json"); err == nil {
		t.Error("manifest.json left after its conversion")
	}
	if f, ok, err := r.Lookup("v1/data/status"); err != nil || !ok || f.SHA256 != "" {
		t.Errorf("converted file %+v, %v, %v: want a record with no hash", f, ok, err)
	}
	for _, tc := range []struct{ name, data, want string }{
		{"not JSON", "{", "unexpected end"},
		{"other version", `{"version":2,"guides":{}}`, "version 2, want 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := afero.NewMemMapFs()
			if err := afero.WriteFile(fsys, "/private/manifest.json", []byte(tc.data), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := OpenRecords(fsys, "/private", 0, 0); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("OpenRecords = %v, want an error with %q", err, tc.want)
			}
		})
	}
}

func TestRecordsInFolder(t *testing.T) {
	m := memRecords()
	m.Set("g2", site.ManifestGuide{Folder: "f"})
	m.Set("g1", site.ManifestGuide{Folder: "f"})
	m.Set("g3", site.ManifestGuide{Folder: "other"})
	if got := m.InFolder("f", ""); !slices.Equal(got, []string{"g1", "g2"}) {
		t.Errorf("inFolder(f) = %v", got)
	}
	if got := m.InFolder("f", "g1"); !slices.Equal(got, []string{"g2"}) {
		t.Errorf("inFolder(f, except g1) = %v", got)
	}
	snap := m.Snapshot()
	snap.Guides["g9"] = site.ManifestGuide{}
	if _, ok := m.Get("g9"); ok {
		t.Error("snapshot shares its map with the manifest")
	}
}

// guide returns a guide with the given ids, for claims.
func guide(id, alias string, views ...string) *bundle.Guide {
	g := &bundle.Guide{GuideID: id, Alias: alias}
	for _, v := range views {
		g.Views = append(g.Views, bundle.View{ViewID: v})
	}
	return g
}

func TestClaims(t *testing.T) {
	always := func(string, string) bool { return true }
	never := func(string, string) bool { return false }
	published := memRecords()
	published.Set("pub", site.ManifestGuide{Folder: "fp", Ids: []string{"pv", "palias"}})
	tests := []struct {
		name   string
		before []*bundle.Guide // claimed first, in folder "f-<guide id>"
		folder string
		g      *bundle.Guide
		alive  claims.Alive
		want   []string // JSON paths of the problems
	}{
		{"free", nil, "f", guide("g", "a", "v"), always, nil},
		{"published guide id", nil, "f", guide("pub", "", "v"), always, []string{"$.guideId"}},
		{"published guide id, folder gone", nil, "f", guide("pub", "", "v"), never, nil},
		{"same folder republishes", nil, "fp", guide("pub", "palias", "pv"), always, nil},
		{"published view id", nil, "f", guide("g", "", "x", "pv"), always, []string{"$.views[1].viewId"}},
		{"published alias as alias", nil, "f", guide("g", "palias", "v"), always, []string{"$.alias"}},
		// A vanished folder may be moving: its guide keeps its ids.
		{"published view id, folder gone", nil, "f", guide("g", "pv", "v"), never, []string{"$.alias"}},
		{"published view id, folder holds another guide", nil, "fp", guide("g", "palias", "pv"), never, nil},
		{"claimed guide id", []*bundle.Guide{guide("g", "", "w")}, "f", guide("g", "", "v"), always, []string{"$.guideId"}},
		{"claimed view id", []*bundle.Guide{guide("h", "", "v")}, "f", guide("g", "", "v"), always, []string{"$.views[0].viewId"}},
		{"claimed alias", []*bundle.Guide{guide("h", "x", "w")}, "f", guide("g", "", "x"), always, []string{"$.views[0].viewId"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := claims.NewClaims()
			for _, b := range tc.before {
				if p := claim(t, c, "f-"+b.GuideID, claims.IDsOf(b), published, tc.alive); p != nil {
					t.Fatalf("setup claim: %v", p)
				}
			}
			problems := claim(t, c, tc.folder, claims.IDsOf(tc.g), published, tc.alive)
			var got []string
			for _, p := range problems {
				got = append(got, p.Path)
				if p.File != tc.folder+"/"+bundle.FileName {
					t.Errorf("problem file %q", p.File)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("problems at %v, want %v (%v)", got, tc.want, problems)
			}
			if rejected := len(problems) > 0; rejected {
				return
			}
			if claim(t, c, "other-"+tc.folder, claims.IDsOf(tc.g), memRecords(), tc.alive) == nil {
				t.Fatal("accepted but not claimed: another folder claims the same guide")
			}
			c.Release(claims.IDsOf(tc.g))
			if again := claim(t, c, "elsewhere", claims.IDsOf(guide(tc.g.GuideID+"-2", tc.g.Alias, tc.g.Views[0].ViewID)), memRecords(), tc.alive); again != nil && len(tc.before) == 0 {
				t.Errorf("ids still claimed after release: %v", again)
			}
		})
	}
}

// TestClaimsReleaseKeepsOthers checks that releasing a guide leaves the
// ids another guide claimed.
func TestClaimsReleaseKeepsOthers(t *testing.T) {
	c := claims.NewClaims()
	m := memRecords()
	a, b := guide("a", "", "va"), guide("b", "", "vb")
	for _, g := range []*bundle.Guide{a, b} {
		if p := claim(t, c, "f"+g.GuideID, claims.IDsOf(g), m, nil); p != nil {
			t.Fatal(p)
		}
	}
	c.Release(claims.IDsOf(a))
	if p := claim(t, c, "fx", claims.IDsOf(guide("x", "", "vb")), m, nil); len(p) != 1 {
		t.Errorf("view id of a guide still claimed: problems %v, want one", p)
	}
	if p := claim(t, c, "fy", claims.IDsOf(guide("y", "", "va")), m, nil); p != nil {
		t.Errorf("released view id: %v", p)
	}
}

// TestRecordsKeepSummaries: open records keep each guide's summary in
// memory, not its lists of files, and Get reads those from the record.
func TestRecordsKeepSummaries(t *testing.T) {
	r := memRecords()
	rec := memoryRecord(1)
	if err := r.write(rec); err != nil {
		t.Fatal(err)
	}
	back, err := OpenRecords(r.t.FS, r.t.Root, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	id := memoryID(1)
	if sum, ok := back.Summaries()[id]; !ok || sum.Files != nil || sum.Private != nil || sum.Inputs != nil || sum.Folder != rec.Folder {
		t.Fatalf("kept in memory: %+v", sum)
	}
	if mg, ok := back.Get(id); !ok || !slices.Equal(mg.Files, rec.Files) || !slices.Equal(mg.Private, rec.Private) || !slices.Equal(mg.Inputs, rec.Inputs) {
		t.Fatalf("Get = %+v", mg)
	}
	if f, ok, err := back.Lookup(rec.Files[3]); err != nil || !ok || !reflect.DeepEqual(f, rec.Ledger.Public[3]) {
		t.Fatalf("Lookup = %+v %v %v", f, ok, err)
	}
}

// TestEntryOfUnreadableRecord: a record that cannot be read once the
// records are open gives Entry an error, never the summary alone, whose
// empty lists would let an export keep a stale file (one a new hide
// removes) or take the guide for up to date.
func TestEntryOfUnreadableRecord(t *testing.T) {
	r := memRecords()
	rec := memoryRecord(2)
	if err := r.write(rec); err != nil {
		t.Fatal(err)
	}
	back, err := OpenRecords(r.t.FS, r.t.Root, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	id := memoryID(2)
	back.mu.Lock()
	clear(back.heads) // as when other guides' entries were read since
	back.mu.Unlock()
	if err := afero.WriteFile(r.t.FS, r.t.Abs(back.file(id)), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := back.Entry(id); !ok || err == nil {
		t.Fatalf("Entry of an unreadable record: ok %v, err %v; want the guide and an error", ok, err)
	}
	if _, ok, err := back.Entry("gNONE"); ok || err != nil {
		t.Fatalf("Entry of no guide: ok %v, err %v", ok, err)
	}
}

// TestDecodeSummary checks that the summary decoded at start is the
// record's head without its lists of files and inputs: a record with every
// field set decodes to its summary.
func TestDecodeSummary(t *testing.T) {
	next := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	mg := site.ManifestGuide{Folder: "fa", Revision: "r1", Ids: []string{"v1", "alias"}, Files: []string{"v1/data/status"},
		Private: []string{"guides/a/event.json"}, Source: "abc", Inputs: []string{"guide.json"}, NextChange: &next,
		Views: 2, Ready: true, Quick: []string{"v1/data/status.br"}}
	data, err := newRecord("a", mg, ledger.Guide{Public: ledger.Ledger{{Path: "v1/data/status", SHA256: "00", Stamp: ledger.Stamp{Size: 3, ModTime: 7}}}}).encode()
	if err != nil {
		t.Fatal(err)
	}
	rec, err := decodeSummary(data)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := rec.entry(), summary(mg); !reflect.DeepEqual(got, want) {
		t.Errorf("decodeSummary: %+v, want %+v", got, want)
	}
	if rec.GuideID != "a" || rec.Version != recordVersion {
		t.Errorf("decodeSummary: guide %q version %d", rec.GuideID, rec.Version)
	}
}

// TestWithdrawn: a file in the folder of a public id a record holds is
// withdrawn when no record holding the id lists it (a hide); a file the
// record lists is not, nor a file of an id no record holds (a removed
// guide, another exporter's tree), nor a file outside any id's folder.
func TestWithdrawn(t *testing.T) {
	fsys := afero.NewMemMapFs()
	r, err := OpenRecords(fsys, "/private", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	a := site.ManifestGuide{Folder: "fa", Ids: []string{"v1", "home"}, Files: []string{"u/v1/index.html", "v1/data/status", "v1/media/p1.jpg"}}
	pubA := ledger.Guide{Public: ledger.Ledger{{Path: "u/v1/index.html"}, {Path: "v1/data/status"}, {Path: "v1/media/p1.jpg"}}}
	// A guide whose id changed: its folder's old guide still holds v1
	// and lists a file the new one does not.
	old := site.ManifestGuide{Folder: "fa", Ids: []string{"v1"}, Files: []string{"v1/media/old.jpg"}}
	for _, rec := range []*record{newRecord("a", a, pubA), newRecord("old", old, ledger.Guide{Public: ledger.Ledger{{Path: "v1/media/old.jpg"}}})} {
		if err := r.write(rec); err != nil {
			t.Fatal(err)
		}
	}
	back, err := OpenRecords(fsys, "/private", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]bool{
		"v1/media/p1.jpg":     false, // listed
		"v1/data/status":      false,
		"u/v1/index.html":     false,
		"v1/media/old.jpg":    false, // listed by the other holder
		"v1/media/p2.jpg":     true,  // hidden since
		"u/v1/fr/index.html":  true,
		"embed/v1/index.html": true,
		"home/index.html":     true,  // the alias's page, not written
		"v9/media/p1.jpg":     false, // no record holds v9
		"v1.css":              false, // not in v1's folder
		"style.css":           false,
	} {
		got, err := back.Withdrawn(p)
		if err != nil || got != want {
			t.Errorf("Withdrawn(%s) = %v, %v; want %v", p, got, err, want)
		}
	}
}

// TestWithdrawnRemoved: an id this exporter stopped publishing (a view
// dropped from a guide, a guide removed) stays withdrawn once no record
// holds it, read back from disk; it no longer is once a record lists it
// again.
func TestWithdrawnRemoved(t *testing.T) {
	fsys := afero.NewMemMapFs()
	pub := write.Tree{FS: fsys, Root: "/public", Perm: 0o644}
	r, err := OpenRecords(fsys, "/private", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	save := func(id string, ids []string, hadOld bool) {
		t.Helper()
		if err := r.Save(pub, write.Tree{}, id, &site.ManifestGuide{Folder: "f" + id, Ids: ids}, &write.Written{}, hadOld); err != nil {
			t.Fatal(err)
		}
		r.Set(id, site.ManifestGuide{Folder: "f" + id, Ids: ids})
	}
	withdrawn := func(r *Records, p string, want bool) {
		t.Helper()
		if got, err := r.Withdrawn(p); err != nil || got != want {
			t.Errorf("Withdrawn(%s) = %v, %v; want %v", p, got, err, want)
		}
	}
	save("a", []string{"v1", "v2"}, false)
	withdrawn(r, "v2/data/status", true) // held, not listed
	save("a", []string{"v1"}, true)      // v2 dropped from the guide
	withdrawn(r, "v2/data/status", true)
	withdrawn(r, "embed/v2/index.html", true)
	withdrawn(r, "v3/data/status", false) // never published here
	if err := r.Delete("a"); err != nil {
		t.Fatal(err)
	}
	r.Forget("a")
	back, err := OpenRecords(fsys, "/private", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	withdrawn(back, "v1/doc/photos/ph-1.jpg", true)
	withdrawn(back, "u/v2/index.html", true)
	withdrawn(back, "v3/data/status", false)

	// Another guide publishes v2 again: its record decides.
	if err := pub.WriteSynced("v2/data/status", []byte(`{"status":"ready"}`)); err != nil {
		t.Fatal(err)
	}
	if err := back.Save(pub, write.Tree{}, "b", &site.ManifestGuide{Folder: "fb", Ids: []string{"v2"}, Files: []string{"v2/data/status"}}, &write.Written{}, false); err != nil {
		t.Fatal(err)
	}
	back.Set("b", site.ManifestGuide{Folder: "fb", Ids: []string{"v2"}, Files: []string{"v2/data/status"}})
	withdrawn(back, "v2/data/status", false)
	withdrawn(back, "v2/doc/photos/ph-1.jpg", true)
	if _, err := fsys.Stat(filepath.Join("/private", RecordsDir(0, 0), RemovedDir, "v2")); err == nil {
		t.Error("the removed mark of v2 stays while a record lists it")
	}
}

// TestSameButStamps: two records that differ in the modification times of
// their files only are the same; a different hash, size or head is not.
func TestSameButStamps(t *testing.T) {
	head := `{"version":3,"guideId":"g1","files":["v1/a","v1/b"],"private":["guides/g1/doc.pdf"]}`
	type file struct {
		sha          string
		size         int
		mtime, ctime int64
		src          string // the source's path
		srcTime      int64  // the source's times
	}
	rec := func(head string, a file) []byte {
		return fmt.Appendf(nil, "%s\n[{\"sha256\":\"%s\",\"size\":%d,\"mtime\":%d,\"ctime\":%d},{\"sha256\":\"bb\",\"size\":2,\"mtime\":1},"+
			"{\"sha256\":\"cc\",\"size\":3,\"mtime\":1,\"src\":{\"path\":\"%s\",\"made\":\"pdf 0 x\",\"stamp\":{\"size\":4,\"mtime\":%d,\"ctime\":%d}}}]\n",
			head, a.sha, a.size, a.mtime, a.ctime, a.src, a.srcTime, a.srcTime)
	}
	base := file{sha: "aa", size: 1, mtime: 1, ctime: 1, src: "doc/a.pdf", srcTime: 1}
	with := func(f func(*file)) file { c := base; f(&c); return c }
	a := rec(head, base)
	for _, c := range []struct {
		name string
		b    []byte
		want bool
	}{
		{"other times", rec(head, with(func(f *file) { f.mtime, f.ctime = 99, 98 })), true},
		{"other seal", rec(strings.Replace(head, `"private"`, `"seal":"5e","private"`, 1), base), true},
		{"other source times", rec(head, with(func(f *file) { f.srcTime = 99 })), true},
		{"other hash", rec(head, with(func(f *file) { f.sha = "ab" })), false},
		{"other size", rec(head, with(func(f *file) { f.size = 3 })), false},
		{"other source", rec(head, with(func(f *file) { f.src = "doc/b.pdf" })), false},
		{"other head", rec(strings.Replace(head, "g1", "g2", 1), base), false},
		{"not a record", []byte("{}"), false},
	} {
		if got := SameButStamps(a, c.b); got != c.want {
			t.Errorf("%s: SameButStamps = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestRecordLedger: a record keeps the ledger of the guide's public and
// private files, media sources and change times included; a record of
// version 2 (public files only, without change times) is still read, its
// private files known by path only.
func TestRecordLedger(t *testing.T) {
	mg := site.ManifestGuide{Folder: "f", Ids: []string{"v1"}, Files: []string{"v1/a.jpg", "v1/data/status"}, Private: []string{"guides/g/doc.pdf"}}
	src := &ledger.Source{Path: "doc/a.pdf", Made: ledger.Made("pdf", 0, "rules"), Stamp: ledger.Stamp{Size: 9, ModTime: 5, ChangeTime: 6}}
	l := ledger.Guide{
		Public: ledger.Ledger{{Path: "v1/a.jpg", SHA256: "aa", MD5: "a1", Stamp: ledger.Stamp{Size: 1, ModTime: 2, ChangeTime: 3}, Source: src},
			{Path: "v1/data/status", SHA256: "bb", MD5: "b1", Stamp: ledger.Stamp{Size: 4, ModTime: 5, ChangeTime: 6}}},
		Private: ledger.Ledger{{Path: "guides/g/doc.pdf", SHA256: "cc", Stamp: ledger.Stamp{Size: 7, ModTime: 8, ChangeTime: 9}, Source: src}},
	}
	data, err := newRecord("g", mg, l).encode()
	if err != nil {
		t.Fatal(err)
	}
	back, err := decodeRecord(data, true)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Ledger, l) {
		t.Errorf("ledger read back:\n%+v\nwant\n%+v", back.Ledger, l)
	}
	v2 := `{"version":2,"guideId":"g","folder":"f","revision":"","ids":["v1"],"files":["v1/a.jpg","v1/data/status"],"private":["guides/g/doc.pdf"]}` + "\n" +
		`[{"sha256":"aa","md5":"a1","size":1,"mtime":2},{"sha256":"bb","md5":"b1","size":4,"mtime":5}]` + "\n"
	old, err := decodeRecord([]byte(v2), true)
	if err != nil {
		t.Fatal(err)
	}
	if len(old.Ledger.Private) != 0 || len(old.Ledger.Public) != 2 || old.Ledger.Public[1].Path != "v1/data/status" || old.Ledger.Public[1].ChangeTime != 0 {
		t.Errorf("version 2 record read as %+v", old.Ledger)
	}
	r := memRecords()
	if err := r.t.Write(r.file("g"), []byte(v2)); err != nil {
		t.Fatal(err)
	}
	if got, err := r.Ledger("g"); err != nil || len(got.Public) != 2 {
		t.Errorf("Ledger of a version 2 record = %+v, %v", got, err)
	}
	if got, err := r.Ledger("absent"); err != nil || len(got.Public)+len(got.Private) != 0 {
		t.Errorf("Ledger of a guide without a record = %+v, %v", got, err)
	}
}

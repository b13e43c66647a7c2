package exporter

import (
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/site"
)

// TestManifestEncode checks that the cached encoding of the manifest is
// exactly what encoding/json writes, after entries are set, replaced and
// removed, and that needsSave notices every change and only changes.
func TestManifestEncode(t *testing.T) {
	next := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	m := newManifest()
	steps := []struct {
		name string
		do   func()
	}{
		{"empty", func() {}},
		{"set a", func() {
			m.set("a", site.ManifestGuide{Folder: "fa", Ids: []string{"v1"}, Files: []string{"v1/data/status"}})
		}},
		{"set b", func() { m.set("b<&>", site.ManifestGuide{Folder: "fb", NextChange: &next, Ready: true}) }},
		{"replace a", func() { m.set("a", site.ManifestGuide{Folder: "fa2", Views: 3}) }},
		{"remove b", func() { m.remove("b<&>") }},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			s.do()
			data, changed, err := m.needsSave()
			if err != nil {
				t.Fatal(err)
			}
			want, err := marshalJSON(m.snapshot())
			if err != nil {
				t.Fatal(err)
			}
			if string(data) != string(want) {
				t.Errorf("encode:\n%s\nwant\n%s", data, want)
			}
			if !changed {
				t.Error("needsSave reports no change after a change")
			}
			m.saved(data)
			if _, changed, _ := m.needsSave(); changed {
				t.Error("needsSave reports a change right after saving")
			}
			back := newManifest()
			if err := back.decode(data); err != nil {
				t.Fatalf("decode: %v", err)
			}
			if _, changed, _ := back.needsSave(); changed {
				t.Error("a decoded manifest needs saving")
			}
		})
	}
}

func TestManifestDecodeErrors(t *testing.T) {
	for _, tc := range []struct{ name, data, want string }{
		{"not JSON", "{", "unexpected end"},
		{"other version", `{"version":2,"guides":{}}`, "version 2, want 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := newManifest().decode([]byte(tc.data))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("decode(%s) = %v, want an error with %q", tc.data, err, tc.want)
			}
		})
	}
	m := newManifest()
	if err := m.decode([]byte(`{"version":1}`)); err != nil || m.guides == nil {
		t.Errorf("decode without guides: %v, guides %v", err, m.guides)
	}
}

func TestManifestInFolder(t *testing.T) {
	m := newManifest()
	m.set("g2", site.ManifestGuide{Folder: "f"})
	m.set("g1", site.ManifestGuide{Folder: "f"})
	m.set("g3", site.ManifestGuide{Folder: "other"})
	if got := m.inFolder("f", ""); !slices.Equal(got, []string{"g1", "g2"}) {
		t.Errorf("inFolder(f) = %v", got)
	}
	if got := m.inFolder("f", "g1"); !slices.Equal(got, []string{"g2"}) {
		t.Errorf("inFolder(f, except g1) = %v", got)
	}
	snap := m.snapshot()
	snap.Guides["g9"] = site.ManifestGuide{}
	if _, ok := m.get("g9"); ok {
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
	published := newManifest()
	published.set("pub", site.ManifestGuide{Folder: "fp", Ids: []string{"pv", "palias"}})
	tests := []struct {
		name   string
		before []*bundle.Guide // claimed first, in folder "f-<guide id>"
		folder string
		g      *bundle.Guide
		alive  alive
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
			c := newClaims()
			for _, b := range tc.before {
				if p := c.claim("f-"+b.GuideID, b, published, tc.alive); p != nil {
					t.Fatalf("setup claim: %v", p)
				}
			}
			problems := c.claim(tc.folder, tc.g, published, tc.alive)
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
			_, claimed := c.guides[tc.g.GuideID]
			if rejected := len(problems) > 0; rejected {
				return
			}
			if !claimed {
				t.Fatal("accepted but not claimed")
			}
			c.release(tc.g)
			if again := c.claim("elsewhere", guide(tc.g.GuideID+"-2", tc.g.Alias, tc.g.Views[0].ViewID), newManifest(), tc.alive); again != nil && len(tc.before) == 0 {
				t.Errorf("ids still claimed after release: %v", again)
			}
		})
	}
}

// TestClaimsReleaseKeepsOthers checks that releasing a guide leaves the
// ids another guide claimed.
func TestClaimsReleaseKeepsOthers(t *testing.T) {
	c := newClaims()
	m := newManifest()
	a, b := guide("a", "", "va"), guide("b", "", "vb")
	for _, g := range []*bundle.Guide{a, b} {
		if p := c.claim("f"+g.GuideID, g, m, nil); p != nil {
			t.Fatal(p)
		}
	}
	c.release(a)
	if p := c.claim("fx", guide("x", "", "vb"), m, nil); len(p) != 1 {
		t.Errorf("view id of a guide still claimed: problems %v, want one", p)
	}
	if p := c.claim("fy", guide("y", "", "va"), m, nil); p != nil {
		t.Errorf("released view id: %v", p)
	}
}

func TestFolderLocks(t *testing.T) {
	var l folderLocks
	if first := l.get("a"); l.get("a") != first {
		t.Fatal("two mutexes for one folder")
	}
	if l.get("a") == l.get("b") {
		t.Fatal("one mutex for two folders")
	}
	unlock := l.lockAll([]string{"a", "b"})
	if l.get("a").TryLock() || l.get("b").TryLock() {
		t.Fatal("lockAll left a folder unlocked")
	}
	unlock()
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() { l.lockAll([]string{"a", "b"})() })
	}
	wg.Wait()
	if !l.get("a").TryLock() {
		t.Fatal("a folder stays locked")
	}
}

func TestReportAdd(t *testing.T) {
	var r Report
	r.add(GuideResult{Folder: "a", Views: 2, Written: 3, Unchanged: 1, Bytes: 2048})
	r.add(GuideResult{Folder: "b", Err: &bundle.Error{Folder: "b"}})
	r.add(GuideResult{Folder: "c", Deleted: 4, Err: json.Unmarshal([]byte("{"), new(any))})
	if r.Views != 2 || r.Written != 3 || r.Unchanged != 1 || r.Deleted != 4 || r.Rejected != 1 || r.Bytes != 2048 || len(r.Guides) != 3 {
		t.Errorf("report %+v", r)
	}
	if s := r.Summary(); !strings.Contains(s, "1 rejected, 1 failed") || !strings.Contains(s, "2.0 KiB") {
		t.Errorf("summary %q", s)
	}
}

package records

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/exporter/claims"
	"github.com/guidepub/guidepub/exporter/records/recordstest"
	"github.com/guidepub/guidepub/exporter/write"
	"github.com/guidepub/guidepub/site"
)

// publishedRecords writes, through records an exporter opened on fsys,
// the records of the guides given as id -> entry, and returns once they
// are on disk.
func publishedRecords(t *testing.T, fsys afero.Fs, guides map[string]site.ManifestGuide) {
	t.Helper()
	r, err := StartRecords(fsys, "/private", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Wait(); err != nil {
		t.Fatal(err)
	}
	pub := write.Tree{FS: fsys, Root: "/out", Perm: 0o644}
	for id, mg := range guides {
		if err := r.Save(pub, write.Tree{}, id, &mg, &write.Written{}, false); err != nil {
			t.Fatal(err)
		}
		r.Set(id, mg)
	}
}

// heldRecords starts records on fsys with their load held until the test
// ends or release is called.
func heldRecords(t *testing.T, fsys afero.Fs) (r *Records, release func()) {
	t.Helper()
	h := recordstest.Hold(fsys, "/private/"+RecordsDir(0, 0))
	t.Cleanup(h.Release)
	r, err := StartRecords(h, "/private", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	return r, h.Release
}

// claimDone claims g in folder on r and returns the problems' paths once
// the claim returns, or false when it is still waiting after wait.
func claimDone(t *testing.T, r *Records, folder string, g *bundle.Guide, wait time.Duration) ([]string, bool) {
	t.Helper()
	type result struct {
		problems []bundle.Problem
		err      error
	}
	done := make(chan result, 1)
	go func() {
		p, err := claims.NewClaims().Claim(folder, claims.IDsOf(g), r, func(string, string) bool { return true })
		done <- result{p, err}
	}()
	select {
	case res := <-done:
		if res.err != nil {
			t.Fatalf("claim: %v", res.err)
		}
		var paths []string
		for _, p := range res.problems {
			paths = append(paths, p.Path)
		}
		return paths, true
	case <-time.After(wait):
		return nil, false
	}
}

// TestClaimsBeforeRecordsAreRead: while the records are still being read,
// a claim is decided through the ids index, in a few file reads: free ids
// are free, ids a record lists are not, and a guide's own folder may
// publish it again.
func TestClaimsBeforeRecordsAreRead(t *testing.T) {
	fsys := afero.NewMemMapFs()
	publishedRecords(t, fsys, map[string]site.ManifestGuide{
		"pub": {Folder: "fp", Ids: []string{"pv", "palias"}},
	})
	r, _ := heldRecords(t, fsys)
	tests := []struct {
		name   string
		folder string
		g      *bundle.Guide
		want   []string
	}{
		{"free", "f", guide("g", "a", "v"), nil},
		{"published view id", "f", guide("g", "", "x", "pv"), []string{"$.views[1].viewId"}},
		{"published alias", "f", guide("g", "palias", "v"), []string{"$.alias"}},
		{"published guide id", "f", guide("pub", "", "v"), []string{"$.guideId"}},
		{"same folder republishes", "fp", guide("pub", "palias", "pv"), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, done := claimDone(t, r, tc.folder, tc.g, 10*time.Second)
			if !done {
				t.Fatal("the claim waited for every record")
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("problems at %v, want %v", got, tc.want)
			}
		})
	}
}

// TestClaimsWaitWhenTheIndexCannotTell: an index file naming a guide whose
// record does not list the id (left by a crash between the two writes), an
// unreadable one, and an index not complete (records of an earlier
// version) make a claim wait for every record, then be decided by them.
func TestClaimsWaitWhenTheIndexCannotTell(t *testing.T) {
	published := map[string]site.ManifestGuide{
		"a": {Folder: "fx", Ids: []string{"pv"}},
		"b": {Folder: "fb", Ids: []string{"bv"}},
	}
	tests := []struct {
		name  string
		spoil func(fsys afero.Fs)
		g     *bundle.Guide
		want  []string
	}{
		// Guide b of folder fx took pv over from a (same folder) and was
		// killed after indexing pv, before writing its record.
		{"index names a guide whose record does not list the id", func(fsys afero.Fs) {
			writeFile(t, fsys, "/private/exported/ids/pv", "b\n")
		}, guide("c", "", "pv"), []string{"$.views[0].viewId"}},
		{"index file emptied by a power loss", func(fsys afero.Fs) {
			writeFile(t, fsys, "/private/exported/ids/pv", "")
		}, guide("c", "", "pv"), []string{"$.views[0].viewId"}},
		{"index of an earlier version", func(fsys afero.Fs) {
			if err := fsys.RemoveAll("/private/exported/ids"); err != nil {
				t.Fatal(err)
			}
			if err := fsys.Remove("/private/exported/" + idsMarker); err != nil {
				t.Fatal(err)
			}
		}, guide("c", "", "pv"), []string{"$.views[0].viewId"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fsys := afero.NewMemMapFs()
			publishedRecords(t, fsys, published)
			tc.spoil(fsys)
			r, release := heldRecords(t, fsys)
			if _, done := claimDone(t, r, "fy", tc.g, 200*time.Millisecond); done {
				t.Fatal("the claim did not wait for the records")
			}
			release()
			got, done := claimDone(t, r, "fy", tc.g, 10*time.Second)
			if !done {
				t.Fatal("the claim still waits once the records are read")
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("problems at %v, want %v", got, tc.want)
			}
		})
	}
}

func writeFile(t *testing.T, fsys afero.Fs, name, content string) {
	t.Helper()
	if err := afero.WriteFile(fsys, name, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestIndexFollowsRecords: Save indexes a guide's ids before its record
// and drops the ids it no longer lists, Delete drops them all, and neither
// touches an index file naming another guide.
func TestIndexFollowsRecords(t *testing.T) {
	fsys := afero.NewMemMapFs()
	r, err := StartRecords(fsys, "/private", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Wait(); err != nil {
		t.Fatal(err)
	}
	var steps []string
	fs := &stepFs{Fs: fsys, steps: &steps}
	r.t.FS = fs
	pub := write.Tree{FS: fsys, Root: "/out", Perm: 0o644}
	owner := func(pid string) string {
		gid, err := r.indexedOwner(pid)
		if err != nil {
			t.Fatalf("index of %s: %v", pid, err)
		}
		return gid
	}
	if err := r.Save(pub, write.Tree{}, "g", &site.ManifestGuide{Folder: "f", Ids: []string{"v1", "al"}}, &write.Written{}, false); err != nil {
		t.Fatal(err)
	}
	if owner("v1") != "g" || owner("al") != "g" {
		t.Fatalf("index after the first save: v1 %q, al %q", owner("v1"), owner("al"))
	}
	if i, j := slices.Index(steps, "rename ids/v1"), slices.Index(steps, "rename g.json"); i < 0 || j < 0 || i > j {
		t.Errorf("steps %v: the index file is not renamed into place before the record", steps)
	}
	writeFile(t, fsys, "/private/exported/ids/al", "other\n") // another guide's now
	if err := r.Save(pub, write.Tree{}, "g", &site.ManifestGuide{Folder: "f", Ids: []string{"v2"}}, &write.Written{}, true); err != nil {
		t.Fatal(err)
	}
	if owner("v1") != "" || owner("v2") != "g" || owner("al") != "other" {
		t.Errorf("index after the ids changed: v1 %q, v2 %q, al %q", owner("v1"), owner("v2"), owner("al"))
	}
	if err := r.Delete("g"); err != nil {
		t.Fatal(err)
	}
	if owner("v2") != "" || owner("al") != "other" {
		t.Errorf("index after the delete: v2 %q, al %q", owner("v2"), owner("al"))
	}
}

// stepFs records the renames into the records folder made through it,
// by the name's path in that folder ("ids/v1", "g.json").
type stepFs struct {
	afero.Fs
	steps *[]string
}

func (s *stepFs) Rename(oldname, newname string) error {
	err := s.Fs.Rename(oldname, newname)
	if rel, ok := strings.CutPrefix(newname, "/private/"+RecordsDir(0, 0)+"/"); ok && err == nil {
		*s.steps = append(*s.steps, "rename "+rel)
	}
	return err
}

// TestIndexBuiltOnceForEarlierRecords: records written without the index
// get it, and its marker, on their first load by an exporter
// (StartRecords), not by a reader (OpenRecords); and the marker is a file
// the loaders of earlier versions refuse as a record, so that none of them
// goes on publishing without keeping the index.
func TestIndexBuiltOnceForEarlierRecords(t *testing.T) {
	fsys := afero.NewMemMapFs()
	publishedRecords(t, fsys, map[string]site.ManifestGuide{
		"a": {Folder: "fa", Ids: []string{"va", "alias"}},
		"b": {Folder: "fb", Ids: []string{"vb"}},
	})
	if err := fsys.RemoveAll("/private/exported/ids"); err != nil {
		t.Fatal(err)
	}
	if err := fsys.Remove("/private/exported/" + idsMarker); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenRecords(fsys, "/private", 0, 0); err != nil {
		t.Fatal(err)
	}
	if ok, _ := afero.Exists(fsys, "/private/exported/"+idsMarker); ok {
		t.Fatal("a reader wrote the index")
	}
	r, err := StartRecords(fsys, "/private", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Wait(); err != nil {
		t.Fatal(err)
	}
	for pid, want := range map[string]string{"va": "a", "alias": "a", "vb": "b"} {
		if gid, err := r.indexedOwner(pid); err != nil || gid != want {
			t.Errorf("index of %s: %q, %v, want %q", pid, gid, err, want)
		}
	}
	if !r.indexComplete() {
		t.Error("no marker once the index is built")
	}
	// What a loader of records version 2 does with every *.json name.
	if _, err := r.readWith("ids.index", decodeSummary); err == nil {
		t.Error("the marker reads as a record")
	}
}

// TestLoadLeavesWhatChangedMeanwhile: a guide published or removed while
// the records are read keeps the state it was given, whatever the load
// read of it, and a guide that took over the ids of its folder's previous
// guide keeps them (that guide's record still lists them until it is
// unpublished).
func TestLoadLeavesWhatChangedMeanwhile(t *testing.T) {
	fsys := afero.NewMemMapFs()
	publishedRecords(t, fsys, map[string]site.ManifestGuide{
		"a": {Folder: "fa", Revision: "r1", Ids: []string{"va"}},
		"b": {Folder: "fb", Revision: "r1", Ids: []string{"vb"}},
		"c": {Folder: "fc", Revision: "r1", Ids: []string{"vc"}},
	})
	r, release := heldRecords(t, fsys)
	r.Set("a", site.ManifestGuide{Folder: "fa", Revision: "r2", Ids: []string{"va2"}})
	r.Forget("b") // its record file stays: the load reads it
	r.Set("n", site.ManifestGuide{Folder: "fc", Revision: "r1", Ids: []string{"vc"}})
	release()
	if err := r.Wait(); err != nil {
		t.Fatal(err)
	}
	if mg, ok := r.Summary("a"); !ok || mg.Revision != "r2" {
		t.Errorf("guide a after the load: %+v, %v, want revision r2", mg, ok)
	}
	if _, ok := r.Summary("b"); ok {
		t.Error("guide b, forgotten while the records were read, is back")
	}
	if gid, _, ok, _ := r.owner("va"); ok {
		t.Errorf("va still held by %q", gid)
	}
	if gid, _, _, _ := r.owner("vc"); gid != "n" {
		t.Errorf("vc held by %q, want n, which took it over", gid)
	}
}

// TestOwnedByOtherAfterAKilledHandover: a guide that took over the ids of
// its folder's previous guide, killed before that guide was unpublished,
// leaves two records listing the same ids; whichever the load read last,
// the previous guide's removal must keep the files under them.
func TestOwnedByOtherAfterAKilledHandover(t *testing.T) {
	for _, order := range [][]string{{"old", "new"}, {"new", "old"}} {
		r := memRecords()
		for _, id := range order {
			r.loaded(id, site.ManifestGuide{Folder: "f", Ids: []string{"v", "alias"}})
		}
		r.loaded("other", site.ManifestGuide{Folder: "g", Ids: []string{"w"}})
		if !r.OwnedByOther("v/data/status", "old") || !r.OwnedByOther("alias/index.html", "old") {
			t.Errorf("read in order %v: the new guide's files are not kept", order)
		}
		if r.OwnedByOther("w/data/status", "other") {
			t.Errorf("read in order %v: a guide's own file is taken for another's", order)
		}
	}
}

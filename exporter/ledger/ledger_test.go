package ledger

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestHoldsAndMadeFrom: a file is held only at the stamp it was recorded
// with and with a known digest; a media file is the product of its source
// only with the source, transformation and source stamp recorded.
func TestHoldsAndMadeFrom(t *testing.T) {
	src := Stamp{Size: 10, ModTime: 1_800_000_000_000_000_005, ChangeTime: 1_800_000_000_000_000_005}
	dst := Stamp{Size: 8, ModTime: 1_800_000_001_000_000_005, ChangeTime: 1_800_000_001_000_000_005}
	made := Made("pdf", 0, "rules v1")
	e := Entry{Path: "v/doc/en/a.pdf", SHA256: "00", Stamp: dst, Source: &Source{Path: "doc/a.pdf", Made: made, Stamp: src}}
	if !e.Stamp.Shows(dst) || !e.MadeFrom(Source{Path: "doc/a.pdf", Made: made, Stamp: src}) {
		t.Fatal("the file recorded is not held")
	}
	later := func(s Stamp, mtime, ctime int64) Stamp { s.ModTime += mtime; s.ChangeTime += ctime; return s }
	for name, c := range map[string]struct {
		src Source
		dst Stamp
	}{
		"other source":           {Source{Path: "doc/b.pdf", Made: made, Stamp: src}, dst},
		"other transformation":   {Source{Path: "doc/a.pdf", Made: Made("pdf", 480, "rules v1"), Stamp: src}, dst},
		"other media rules":      {Source{Path: "doc/a.pdf", Made: Made("pdf", 0, "rules v2"), Stamp: src}, dst},
		"source touched":         {Source{Path: "doc/a.pdf", Made: made, Stamp: later(src, 1, 0)}, dst},
		"source changed inode":   {Source{Path: "doc/a.pdf", Made: made, Stamp: later(src, 0, 1)}, dst},
		"destination rewritten":  {Source{Path: "doc/a.pdf", Made: made, Stamp: src}, Stamp{Size: 9, ModTime: dst.ModTime, ChangeTime: dst.ChangeTime}},
		"destination time reset": {Source{Path: "doc/a.pdf", Made: made, Stamp: src}, later(dst, 0, 1)},
		"destination touched":    {Source{Path: "doc/a.pdf", Made: made, Stamp: src}, later(dst, 1, 1)},
	} {
		if e.MadeFrom(c.src) && e.Stamp.Shows(c.dst) {
			t.Errorf("%s: held", name)
		}
	}
	// A record written before change times were kept compares the rest.
	old := Stamp{Size: dst.Size, ModTime: dst.ModTime}
	if !old.Shows(dst) || old.Shows(later(dst, 1, 0)) {
		t.Error("a stamp without a change time is not compared on size and modification time")
	}
}

// TestHoldsRealFile: on the real file system, a file rewritten with the
// same size and its modification time set back (as cp -p or rsync -t
// leave it) is no longer held, nor one without a known digest, nor a
// folder.
func TestHoldsRealFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.json")
	if err := os.WriteFile(p, []byte(`{"a":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	fi := stat(t, p)
	e := Entry{Path: "a.json", SHA256: "ab", Stamp: StampOf(fi)}
	if !e.Holds(fi) {
		t.Fatal("a file just recorded is not held")
	}
	if (Entry{Stamp: e.Stamp}).Holds(fi) {
		t.Error("a file without a known digest is held")
	}
	if e.Holds(stat(t, dir)) {
		t.Error("a folder is held")
	}
	time.Sleep(10 * time.Millisecond) // a change time the clock can tell apart
	if err := os.WriteFile(p, []byte(`{"a":2}`), 0o644); err != nil {
		t.Fatal(err)
	}
	mtime := time.Unix(0, e.ModTime)
	if err := os.Chtimes(p, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	now := stat(t, p)
	if StampOf(now).ChangeTime == 0 {
		t.Skip("this file system does not report change times")
	}
	if e.Holds(now) {
		t.Error("a file rewritten with the same size and modification time is held")
	}
}

func stat(t *testing.T, p string) fs.FileInfo {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi
}

// TestFind: entries are found by path in a sorted ledger, Sum decodes a
// digest and refuses one that is not.
func TestFind(t *testing.T) {
	l := Ledger{{Path: "a"}, {Path: "b/c", SHA256: "0102"}, {Path: "b/d"}}
	if e, ok := l.Find("b/c"); !ok || e.SHA256 != "0102" {
		t.Errorf("Find(b/c) = %v, %v", e, ok)
	}
	if _, ok := l.Find("b"); ok {
		t.Error("found a path not listed")
	}
	if _, ok := (Entry{SHA256: "0102"}).Sum(); ok {
		t.Error("a short digest decoded")
	}
	full := Entry{SHA256: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"}
	if sum, ok := full.Sum(); !ok || sum[0] != 0xe3 || sum[31] != 0x55 {
		t.Errorf("Sum = %x, %v", sum, ok)
	}
}

// TestSeal: the seal of a ledger is what a Sealer gives from the same
// stamps, in the same order; another stamp, path or tree gives another;
// a ledger with an entry whose digest is unknown has none.
func TestSeal(t *testing.T) {
	g := Guide{
		Public:  Ledger{{Path: "v1/a", SHA256: "aa", Stamp: Stamp{Size: 1, ModTime: 2, ChangeTime: 3}}, {Path: "v1/b", SHA256: "bb", Stamp: Stamp{Size: 4, ModTime: 5}}},
		Private: Ledger{{Path: "guides/g/record.json", SHA256: "cc", Stamp: Stamp{Size: 6, ModTime: 7, ChangeTime: 8}}},
	}
	seal := func(private []bool, paths []string, stamps []Stamp) string {
		var s Sealer
		for i := range paths {
			s.Add(private[i], paths[i], stamps[i])
		}
		return s.Sum()
	}
	priv := []bool{false, false, true}
	paths := []string{"v1/a", "v1/b", "guides/g/record.json"}
	stamps := []Stamp{g.Public[0].Stamp, g.Public[1].Stamp, g.Private[0].Stamp}
	want := g.Seal()
	if want == "" || seal(priv, paths, stamps) != want {
		t.Fatal("a Sealer of the recorded stamps does not give the ledger's seal")
	}
	moved := slices.Clone(stamps)
	moved[2].ChangeTime++
	for name, got := range map[string]string{
		"a change time":  seal(priv, paths, moved),
		"a path":         seal(priv, []string{"v1/a", "v1/c", "guides/g/record.json"}, stamps),
		"a tree":         seal([]bool{false, true, true}, paths, stamps),
		"a file missing": seal(priv[:2], paths[:2], stamps[:2]),
	} {
		if got == want {
			t.Errorf("another %s gives the same seal", name)
		}
	}
	g.Public[1].SHA256 = ""
	if g.Seal() != "" {
		t.Error("a ledger with an unknown digest has a seal")
	}
}

package write

import (
	"strconv"
	"testing"
	"time"

	"github.com/guidepub/guidepub/exporter/media"
)

// TestMediaMemo: a file is held only with the source, transformation and
// stamps it was recorded with; the memo keeps at most memoCap files,
// forgetting the least recently used ones first.
func TestMediaMemo(t *testing.T) {
	var mm mediaMemo
	tree := Tree{Root: "/pub"}
	now := time.Unix(1_800_000_000, 5)
	src, dst := stamp{size: 10, mtime: now, ctime: now}, stamp{size: 8, mtime: now.Add(time.Second), ctime: now.Add(time.Second)}
	k := mediaKey{src: "/src/b/doc/a.pdf", format: media.PDF}
	m := made{key: k, src: src, sum: [32]byte{1}}
	mm.set(tree, "v/doc/en/a.pdf", m, dst)
	if sum, ok := mm.holds(tree, "v/doc/en/a.pdf", k, src, dst); !ok || sum != m.sum {
		t.Fatal("the file recorded is not held")
	}
	later := now.Add(time.Nanosecond)
	for name, c := range map[string]struct {
		tree     Tree
		p        string
		k        mediaKey
		src, dst stamp
	}{
		"other tree":             {Tree{Root: "/priv"}, "v/doc/en/a.pdf", k, src, dst},
		"other path":             {tree, "v/doc/fr/a.pdf", k, src, dst},
		"other source":           {tree, "v/doc/en/a.pdf", mediaKey{src: "/src/b/doc/b.pdf", format: media.PDF}, src, dst},
		"other transformation":   {tree, "v/doc/en/a.pdf", mediaKey{src: k.src}, src, dst},
		"source touched":         {tree, "v/doc/en/a.pdf", k, stamp{size: 10, mtime: later, ctime: now}, dst},
		"source changed inode":   {tree, "v/doc/en/a.pdf", k, stamp{size: 10, mtime: now, ctime: later}, dst},
		"destination rewritten":  {tree, "v/doc/en/a.pdf", k, src, stamp{size: 9, mtime: dst.mtime, ctime: dst.ctime}},
		"destination time reset": {tree, "v/doc/en/a.pdf", k, src, stamp{size: 8, mtime: dst.mtime, ctime: later}},
	} {
		if _, ok := mm.holds(c.tree, c.p, c.k, c.src, c.dst); ok {
			t.Errorf("%s: held", name)
		}
	}
	mm.set(tree, "v/doc/en/a.pdf", made{}, stamp{})
	if _, ok := mm.holds(tree, "v/doc/en/a.pdf", k, src, dst); ok {
		t.Error("a forgotten file is held")
	}

	path := func(i int) string { return "f" + strconv.Itoa(i) }
	for i := range memoCap {
		mm.set(tree, path(i), m, dst)
		if i == memoCap/2 {
			// The first file, used again, stays.
			if _, ok := mm.holds(tree, path(0), k, src, dst); !ok {
				t.Fatal("file 0 forgotten too early")
			}
		}
	}
	if len(mm.cur)+len(mm.prev) > memoCap {
		t.Errorf("%d files kept, more than %d", len(mm.cur)+len(mm.prev), memoCap)
	}
	for i, want := range map[int]bool{0: true, 1: false, memoCap - 1: true} {
		if _, ok := mm.holds(tree, path(i), k, src, dst); ok != want {
			t.Errorf("file %d held %v, want %v", i, ok, want)
		}
	}
}

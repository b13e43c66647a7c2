package exporter

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/guidepub/guidepub/exporter/records"
	"github.com/guidepub/guidepub/site"
)

// TestShardsGiveTheSameTree exports the fixtures once whole and once split
// into n shards writing into one public and one private tree: the trees are
// byte-identical but for the records, each shard's records hold only
// its own folders, and together they hold every folder once.
func TestShardsGiveTheSameTree(t *testing.T) {
	for _, n := range []int{2, 3} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			whole := newEnv(t, fsKinds[0])
			whole.exportAll()

			split := newEnv(t, fsKinds[0])
			var folders []string
			for i := range n {
				split.cfg.Shard, split.cfg.Shards = i, n
				rep := split.exportAll()
				for _, g := range rep.Guides {
					if got := ShardOf(g.Folder, n); got != i {
						t.Errorf("shard %d/%d exported %s, which belongs to shard %d", i, n, g.Folder, got)
					}
				}
				recs, err := records.OpenRecords(split.out, split.privDir, i, n)
				if err != nil {
					t.Fatalf("records of shard %d: %v", i, err)
				}
				for _, mg := range recs.Snapshot().Guides {
					folders = append(folders, mg.Folder)
				}
			}
			wantFolders, err := whole.exporter().Folders()
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(folders)
			if !slices.Equal(folders, wantFolders) {
				t.Errorf("shard manifests hold %v, want every folder once: %v", folders, wantFolders)
			}

			sameTree(t, "public", snapshot(t, whole.out, whole.outDir), snapshot(t, split.out, split.outDir))
			wholePriv, splitPriv := snapshot(t, whole.out, whole.privDir), snapshot(t, split.out, split.privDir)
			// The records hold the files' modification times: they differ.
			maps.DeleteFunc(wholePriv, func(name string, _ []byte) bool { return strings.HasPrefix(name, records.RecordsDir(0, 0)+"/") })
			for i := range n {
				maps.DeleteFunc(splitPriv, func(name string, _ []byte) bool { return strings.HasPrefix(name, records.RecordsDir(i, n)+"/") })
			}
			sameTree(t, "private", wholePriv, splitPriv)

			// A second sharded run changes nothing and unpublishes nothing.
			for i := range n {
				split.cfg.Shard, split.cfg.Shards = i, n
				if rep := split.exportAll(); rep.Written != 0 || rep.Deleted != 0 {
					t.Errorf("second run of shard %d/%d: %d written, %d deleted, want 0", i, n, rep.Written, rep.Deleted)
				}
			}
		})
	}
}

func TestShardConfig(t *testing.T) {
	ev := newEnv(t, fsKinds[0])
	ev.cfg.Shard, ev.cfg.Shards = 3, 3
	if _, err := New(ev.cfg); err == nil {
		t.Error("New accepted shard 3 of 3")
	}
	if records.ManifestName(0, 1) != site.ManifestFile || records.ManifestName(1, 4) != "manifest-1-of-4.json" {
		t.Errorf("records.ManifestName: %q, %q", records.ManifestName(0, 1), records.ManifestName(1, 4))
	}
	if records.RecordsDir(0, 1) != "exported" || records.RecordsDir(1, 4) != "exported-1-of-4" {
		t.Errorf("records.RecordsDir: %q, %q", records.RecordsDir(0, 1), records.RecordsDir(1, 4))
	}
	for _, f := range []string{"a", "301-king-st-e", "rue-saint-denis"} {
		if s := ShardOf(f, 4); s < 0 || s >= 4 || s != ShardOf(f, 4) {
			t.Errorf("ShardOf(%q, 4) = %d", f, s)
		}
	}
}

// sameTree fails the test for every file that differs between two
// snapshots.
func sameTree(t *testing.T, name string, want, got map[string][]byte) {
	t.Helper()
	for p, w := range want {
		g, ok := got[p]
		switch {
		case !ok:
			t.Errorf("%s tree: %s missing", name, p)
		case !bytes.Equal(w, g):
			t.Errorf("%s tree: %s differs", name, p)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("%s tree: unexpected %s", name, p)
		}
	}
}

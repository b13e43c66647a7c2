package records

import (
	"fmt"
	"os"
	"syscall"
	"testing"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/site"
)

// BenchmarkOpenRecords measures OpenRecords over n records on the real file
// system, each as large as a generated two-view guide's (40 public files):
// what an Exporter reads at start before it can export anything. The
// cold runs drop the kernel's page cache before each read (as after a
// reboot, or on a machine whose corpus is larger than its memory); they
// need root and are skipped without it.
func BenchmarkOpenRecords(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		for _, cold := range []bool{false, true} {
			b.Run(fmt.Sprintf("guides=%d/cold=%t", n, cold), func(b *testing.B) {
				benchmarkOpenRecords(b, n, cold)
			})
		}
	}
}

// benchmarkOpenRecords is one run of BenchmarkOpenRecords.
func benchmarkOpenRecords(b *testing.B, n int, cold bool) {
	if cold {
		if err := dropCaches(); err != nil {
			b.Skipf("cannot drop the page cache: %v", err)
		}
	}
	dir := b.TempDir()
	fsys := afero.NewOsFs()
	r, err := OpenRecords(fsys, dir, 0, 0)
	if err != nil {
		b.Fatal(err)
	}
	for i := range n {
		id := fmt.Sprintf("gREC%06d", i)
		mg := site.ManifestGuide{Folder: fmt.Sprintf("guide-%06d", i), Revision: "r", Ids: []string{id + "A", id + "B", "alias-" + id},
			Private: []string{"guides/" + id + "/record.json"}, Source: "s", Inputs: []string{"doc/a.jpg"}, Views: 2, Ready: true}
		var public []PublicFile
		for j := range 40 {
			p := fmt.Sprintf("%sA/doc/photos/p%02d.jpg", id, j)
			mg.Files = append(mg.Files, p)
			public = append(public, PublicFile{Path: p, SHA256: fmt.Sprintf("%064x", j), Size: 1024, ModTime: 1_700_000_000_000_000_000})
		}
		if err := r.write(newRecord(id, mg, public)); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		if cold {
			b.StopTimer()
			if err := dropCaches(); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		r, err := OpenRecords(fsys, dir, 0, 0)
		if err != nil || r.Len() != n {
			b.Fatalf("OpenRecords: %v, %d records", err, r.Len())
		}
	}
}

// dropCaches writes what is dirty and drops the kernel's clean page,
// dentry and inode caches (root only).
func dropCaches() error {
	syscall.Sync()
	return os.WriteFile("/proc/sys/vm/drop_caches", []byte("3"), 0)
}

package records

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/exporter/ledger"
	"github.com/guidepub/guidepub/exporter/write"
	"github.com/guidepub/guidepub/site"
	"github.com/guidepub/guidepub/site/procstat"
)

// memoryFiles is how many public files each generated record lists: as
// many as a guide of the real sample the memory figures were taken from.
const memoryFiles = 157

// BenchmarkRecordsMemory measures the memory of what `guidepub publish
// --private` does with the records of n guides (generated record files of
// memoryFiles public files each, written directly): OpenRecords, then a
// Lookup of every public file in the order a walk of the public tree
// visits them (the aliases, then each guide's views). It reports the peak
// RSS of the process over that (after the corpus is generated and its
// memory given back) and the heap the open records keep.
func BenchmarkRecordsMemory(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("guides=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			fsys := afero.NewOsFs()
			w := newRecords(write.Tree{FS: fsys, Root: dir, Perm: 0o600}, RecordsDir(0, 0))
			for i := range n {
				if err := w.write(memoryRecord(i)); err != nil {
					b.Fatal(err)
				}
			}
			w = nil
			var peak, kept float64
			for b.Loop() {
				debug.FreeOSMemory()
				_ = procstat.ResetPeakRSS()
				r, err := OpenRecords(fsys, dir, 0, 0)
				if err != nil || r.Len() != n {
					b.Fatalf("OpenRecords: %v", err)
				}
				found := 0
				for _, view := range []string{"", "A", "B"} {
					for i := range n {
						for j := range memoryFiles / 3 {
							p := memoryPath(i, view, j)
							if _, ok, err := r.Lookup(p); err != nil || !ok {
								b.Fatalf("Lookup %s: %v %v", p, ok, err)
							}
							found++
						}
					}
				}
				peak, _ = procstat.PeakRSS()
				kept = heapMB()
				runtime.KeepAlive(r)
			}
			b.ReportMetric(peak, "peak-RSS-MB")
			b.ReportMetric(kept, "kept-heap-MB")
		})
	}
}

// heapMB returns the heap in use after a collection, in MB.
func heapMB() float64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return float64(ms.HeapAlloc) / 1e6
}

// memoryID returns the guide id of generated record i.
func memoryID(i int) string { return fmt.Sprintf("gMEM%06d", i) }

// memoryPath returns public file j of view ("A", "B") or alias ("") of
// generated record i.
func memoryPath(i int, view string, j int) string {
	top := memoryID(i) + view
	if view == "" {
		top = "alias-" + memoryID(i)
	}
	return fmt.Sprintf("%s/doc/photos/p%03d.jpg", top, j)
}

// memoryRecord returns generated record i: two views and an alias,
// memoryFiles/3 public files under each (so that paths stay sorted).
func memoryRecord(i int) *record {
	id := memoryID(i)
	mg := site.ManifestGuide{Folder: fmt.Sprintf("guide-%06d", i), Revision: fmt.Sprintf("%064x", i), Ids: []string{id + "A", id + "B", "alias-" + id},
		Private: []string{"guides/" + id + "/record.json", "guides/" + id + "/event.json"}, Source: fmt.Sprintf("%064x", i),
		Inputs: []string{"doc/a.jpg", "doc/b.pdf"}, Views: 2, Ready: true}
	var public ledger.Ledger
	for _, view := range []string{"", "A", "B"} {
		for j := range memoryFiles / 3 {
			p := memoryPath(i, view, j)
			mg.Files = append(mg.Files, p)
			public = append(public, ledger.Entry{Path: p, SHA256: fmt.Sprintf("%064x", j), MD5: fmt.Sprintf("%032x", j),
				Stamp: ledger.Stamp{Size: 1024, ModTime: 1_700_000_000_000_000_000}})
		}
	}
	return newRecord(id, mg, ledger.Guide{Public: public})
}

package records

import (
	"fmt"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/exporter/claims"
	"github.com/guidepub/guidepub/exporter/ledger"
	"github.com/guidepub/guidepub/site"
	"github.com/guidepub/guidepub/site/procstat"
)

// BenchmarkOpenRecords measures OpenRecords over n records on the real file
// system, each as large as a generated two-view guide's (40 public files):
// what an Exporter reads at start before it can export anything. The
// cold runs drop the kernel's page cache before each read (as after a
// reboot, or on a machine whose corpus is larger than its memory); they
// need root and are skipped without it.
func BenchmarkOpenRecords(b *testing.B) { coldAndWarm(b, benchmarkOpenRecords) }

// coldAndWarm runs run over 1,000 and 10,000 records, from the page
// cache and from the disk (cold: skipped unless the page cache can be
// dropped, which needs root).
func coldAndWarm(b *testing.B, run func(b *testing.B, n int, cold bool)) {
	for _, n := range []int{1000, 10000} {
		for _, cold := range []bool{false, true} {
			b.Run(fmt.Sprintf("guides=%d/cold=%t", n, cold), func(b *testing.B) {
				if cold {
					if err := procstat.DropCaches(); err != nil {
						b.Skipf("cannot drop the page cache: %v", err)
					}
				}
				run(b, n, cold)
			})
		}
	}
}

// dropIfCold drops the page cache, the timer stopped, when cold.
func dropIfCold(b *testing.B, cold bool) {
	if !cold {
		return
	}
	b.StopTimer()
	if err := procstat.DropCaches(); err != nil {
		b.Fatal(err)
	}
	b.StartTimer()
}

// benchmarkOpenRecords is one run of BenchmarkOpenRecords.
func benchmarkOpenRecords(b *testing.B, n int, cold bool) {
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
		var public ledger.Ledger
		for j := range 40 {
			p := fmt.Sprintf("%sA/doc/photos/p%02d.jpg", id, j)
			mg.Files = append(mg.Files, p)
			public = append(public, ledger.Entry{Path: p, SHA256: fmt.Sprintf("%064x", j), Stamp: ledger.Stamp{Size: 1024, ModTime: 1_700_000_000_000_000_000}})
		}
		if err := r.write(newRecord(id, mg, ledger.Guide{Public: public})); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		dropIfCold(b, cold)
		r, err := OpenRecords(fsys, dir, 0, 0)
		if err != nil || r.Len() != n {
			b.Fatalf("OpenRecords: %v, %d records", err, r.Len())
		}
	}
}

// BenchmarkClaimAtStart measures what an upload made as an exporter starts
// waits for before its ids are checked: StartRecords over n records of
// the real sample's size (memoryRecord: two views, an alias, 157 public
// files) with their ids index, then the claim of a new guide's ids, which
// the ids index answers (claim-ms), beside the read of every record it
// had to wait for before the index (all-read-ms, the baseline, measured in
// the same runs: Wait after the claim). The cold runs drop the page cache
// first (root only, skipped otherwise).
func BenchmarkClaimAtStart(b *testing.B) { coldAndWarm(b, benchmarkClaimAtStart) }

// benchmarkClaimAtStart is one run of BenchmarkClaimAtStart.
func benchmarkClaimAtStart(b *testing.B, n int, cold bool) {
	dir := b.TempDir()
	fsys := afero.NewOsFs()
	w, err := StartRecords(fsys, dir, 0, 0)
	if err != nil || w.Wait() != nil {
		b.Fatal(err, w.Wait())
	}
	for i := range n {
		rec := memoryRecord(i)
		if err := w.link(rec.GuideID, rec.Ids); err != nil {
			b.Fatal(err)
		}
		if err := w.write(rec); err != nil {
			b.Fatal(err)
		}
	}
	g := claims.IDs{Guide: "gNEW", Public: []string{"vNEW-A", "vNEW-B", "alias-new"}, Views: 2}
	taken := claims.IDs{Guide: "gNEW2", Public: []string{memoryID(n/2) + "A"}, Views: 1}
	alive := func(string, string) bool { return true }
	var claimed, read time.Duration
	for b.Loop() {
		dropIfCold(b, cold)
		t0 := time.Now()
		r, err := StartRecords(fsys, dir, 0, 0)
		if err != nil {
			b.Fatal(err)
		}
		c := claims.NewClaims()
		if p, err := c.Claim("guide-new", g, r, alive); err != nil || p != nil {
			b.Fatalf("claim of free ids: %v, %v", p, err)
		}
		if p, err := c.Claim("guide-new-2", taken, r, alive); err != nil || len(p) != 1 {
			b.Fatalf("claim of a taken view id: %v, %v, want one problem", p, err)
		}
		claimed += time.Since(t0)
		if err := r.Wait(); err != nil || r.Len() != n {
			b.Fatalf("records: %v, %d read", err, r.Len())
		}
		read += time.Since(t0)
	}
	b.ReportMetric(float64(claimed.Microseconds())/1000/float64(b.N), "claim-ms")
	b.ReportMetric(float64(read.Microseconds())/1000/float64(b.N), "all-read-ms")
}

package exporter

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/site/procstat"
)

// BenchmarkExportAllMemory measures the memory of ExportAll over n small
// generated guides (genGuide with two photos and six rooms, no compressed
// siblings, to keep the set-up short) on the real file system: a first export, every guide new, then a
// second with nothing changed, each by a new Exporter (as a new process
// would), through ExportAllEach with a consumer that counts the files each
// guide changed (as `guidepub export` and `watch` run it). It reports each run's peak RSS (the corpus generated and its
// memory given back first) and the heap the report and exporter keep
// after it, and how long the export that finds nothing changed takes
// (same-s: every guide's fingerprint and files checked against its
// record). The difference between the two sizes is what grows with the
// corpus.
func BenchmarkExportAllMemory(b *testing.B) {
	for _, n := range []int{3000, 6000} {
		b.Run(fmt.Sprintf("guides=%d", n), func(b *testing.B) {
			root := b.TempDir()
			src := filepath.Join(root, "src")
			for i := range n {
				g := genGuide(i)
				g.Media.Photos = g.Media.Photos[:2]
				for f := range g.Summary.Buildings[0].Floors {
					fl := &g.Summary.Buildings[0].Floors[f]
					fl.Rooms = fl.Rooms[:2]
				}
				writeCorpusGuide(b, src, i, g)
			}
			osfs := afero.NewOsFs()
			var metrics [6]float64
			iter := 0
			for b.Loop() {
				out, priv := filepath.Join(root, fmt.Sprint("out", iter)), filepath.Join(root, fmt.Sprint("private", iter))
				iter++
				for run, want := range []int{n, 0} {
					debug.FreeOSMemory()
					_ = procstat.ResetPeakRSS()
					cfg := testConfig(osfs, src, out, priv)
					cfg.Encodings = nil
					e, err := New(cfg)
					if err != nil {
						b.Fatal(err)
					}
					changes := 0
					start := time.Now()
					rep, err := e.ExportAllEach(context.Background(), func(g GuideResult) { changes += len(g.Changes) })
					if run == 1 {
						metrics[5] = time.Since(start).Seconds()
					}
					if err != nil || rep.Rejected > 0 || changedGuides(rep) != want {
						b.Fatalf("export %d: %v, %d rejected, %d changed, want %d", run, err, rep.Rejected, changedGuides(rep), want)
					}
					if run == 0 {
						metrics[4] = float64(changes) / float64(n)
					}
					metrics[2*run], _ = procstat.PeakRSS()
					metrics[2*run+1] = heapMB()
					runtime.KeepAlive(e)
					runtime.KeepAlive(rep)
				}
			}
			b.ReportMetric(metrics[0], "new-peak-RSS-MB")
			b.ReportMetric(metrics[1], "new-kept-heap-MB")
			b.ReportMetric(metrics[2], "same-peak-RSS-MB")
			b.ReportMetric(metrics[3], "same-kept-heap-MB")
			b.ReportMetric(metrics[4], "changes/guide")
			b.ReportMetric(metrics[5], "same-s")
		})
	}
}

// changedGuides returns how many guides of rep changed.
func changedGuides(rep *Report) int {
	n := 0
	for _, g := range rep.Guides {
		if g.Changed {
			n++
		}
	}
	return n
}

// heapMB returns the heap in use after a collection, in MB.
func heapMB() float64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return float64(ms.HeapAlloc) / 1e6
}

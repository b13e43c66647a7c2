package exporter

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/exporter/write"
	"github.com/guidepub/guidepub/site"
)

// BenchmarkEditNewProcess measures the export of one guide whose
// guide.json alone changed, by a new process (a new Exporter, its
// records read): a guide with 12 camera-size photos (4000×3000 JPEGs)
// and 8 floor pages (renditionGuide), two views and an alias, alone and
// in a corpus of 500 generated guides more. "ledger" is the export as it
// runs, which leaves a media file alone when the guide's ledger shows it
// made from its source as it is now; "checked" is the same export with
// every media file checked (the marker of an interrupted export present,
// as a process without a ledger checked them): each source read and
// compared with its published file. Each iteration runs both, in turn,
// five times; ledger-ms and checked-ms are the medians, the reads count
// the sources read by an export, images/export the images it decoded.
func BenchmarkEditNewProcess(b *testing.B) {
	const folder = "bundle-00000"
	for _, extra := range []int{0, 500} {
		root := b.TempDir()
		osfs := afero.NewOsFs()
		src, out, priv := filepath.Join(root, "src"), filepath.Join(root, "out"), filepath.Join(root, "private")
		renditionGuide(b, src)
		for i := 1; i <= extra; i++ {
			writeCorpusGuide(b, src, i, genGuide(i))
		}
		cfg := testConfig(osfs, src, out, priv)
		e, err := New(cfg)
		if err != nil {
			b.Fatal(err)
		}
		if rep, err := e.ExportAll(context.Background()); err != nil || rep.Rejected > 0 {
			b.Fatalf("first export: %v, %d rejected", err, rep.Rejected)
		}
		var reads atomic.Int64
		write.CopyHook = func(string, int) { reads.Add(1) }
		b.Cleanup(func() { write.CopyHook = nil })
		marker := filepath.Join(priv, "."+site.ManifestFile+".writing")
		area := 0.0
		// export edits the guide, then exports it by a new Exporter, with
		// the marker of an interrupted export when checked, and returns
		// how long the export took and how many sources it read.
		export := func(b *testing.B, checked bool) (time.Duration, int64) {
			area++
			shiftArea(b, filepath.Join(src, folder, "guide.json"), area)
			if checked {
				if err := os.WriteFile(marker, []byte("bench"), 0o644); err != nil {
					b.Fatal(err)
				}
				defer os.Remove(marker)
			}
			e, err := New(cfg)
			if err != nil {
				b.Fatal(err)
			}
			if err := e.Records().Wait(); err != nil {
				b.Fatal(err)
			}
			reads.Store(0)
			runtime.GC() // the set-up's garbage is not this export's
			start := time.Now()
			res, err := e.ExportBundle(context.Background(), folder)
			took := time.Since(start)
			if err != nil || !res.Changed {
				b.Fatalf("export: %v, changed %v", err, res != nil && res.Changed)
			}
			return took, reads.Load()
		}
		b.Run(fmt.Sprintf("guides=%d", extra+1), func(b *testing.B) {
			var withLedger, checked []time.Duration
			var ledgerReads, checkedReads int64
			images := write.ImagesDecoded()
			for b.Loop() {
				// Both ways in turn, so that neither gets the warmer
				// machine; pairsPerOp of them, so that the medians are of
				// enough runs whatever -benchtime.
				for range pairsPerOp {
					d, n := export(b, false)
					withLedger, ledgerReads = append(withLedger, d), ledgerReads+n
					d, n = export(b, true)
					checked, checkedReads = append(checked, d), checkedReads+n
				}
			}
			runs := float64(len(withLedger))
			b.ReportMetric(median(withLedger), "ledger-ms")
			b.ReportMetric(median(checked), "checked-ms")
			b.ReportMetric(float64(ledgerReads)/runs, "ledger-reads/export")
			b.ReportMetric(float64(checkedReads)/runs, "checked-reads/export")
			b.ReportMetric(float64(write.ImagesDecoded()-images)/runs/2, "images/export")
		})
	}
}

// pairsPerOp is how many exports of each way one iteration of
// BenchmarkEditNewProcess runs.
const pairsPerOp = 5

// median returns the median of ds in milliseconds.
func median(ds []time.Duration) float64 {
	s := slices.Sorted(slices.Values(ds))
	return float64(s[len(s)/2].Microseconds()) / 1000
}

// shiftArea sets the area of the first room of the guide.json at p to
// 40 plus by: another guide.json, the same media.
func shiftArea(b *testing.B, p string, by float64) {
	b.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		b.Fatal(err)
	}
	var g map[string]any
	if err := json.Unmarshal(data, &g); err != nil {
		b.Fatal(err)
	}
	fl := g["summary"].(map[string]any)["buildings"].([]any)[0].(map[string]any)["floors"].([]any)[0]
	fl.(map[string]any)["rooms"].([]any)[0].(map[string]any)["area"] = 40 + by
	data, err = json.Marshal(g)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		b.Fatal(err)
	}
}

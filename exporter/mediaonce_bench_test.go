package exporter

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/exporter/write"
	"github.com/guidepub/guidepub/site"
)

// BenchmarkEditNewProcess measures the export of one guide whose
// guide.json alone changed, by a new process (a new Exporter, its
// records read): the sample 301-king-st-e (real photos with their
// renditions, floor plan PDFs and pages in two views), in a corpus of the
// samples alone and with 500 generated guides more. "ledger" is the
// export as it runs, which leaves a media file alone when the guide's
// ledger shows it made from its source as it is now; "checked" is the
// same export with every media file checked (the marker of an
// interrupted export present, as a process without a ledger checked
// them): each source read and compared with its published file.
// media-reads/op counts the sources read, images/op the images decoded.
func BenchmarkEditNewProcess(b *testing.B) {
	for _, extra := range []int{0, 500} {
		root := b.TempDir()
		osfs := afero.NewOsFs()
		src, out, priv := filepath.Join(root, "src"), filepath.Join(root, "out"), filepath.Join(root, "private")
		copyFixtures(b, osfs, src)
		for i := range extra {
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
		area := 0.0
		for _, mode := range []string{"ledger", "checked"} {
			b.Run(fmt.Sprintf("guides=%d/%s", extra+4, mode), func(b *testing.B) {
				marker := filepath.Join(priv, "."+site.ManifestFile+".writing")
				reads.Store(0)
				images := write.ImagesDecoded()
				var total time.Duration
				for b.Loop() {
					b.StopTimer()
					area++
					shiftArea(b, filepath.Join(src, kingFolder, "guide.json"), area)
					if mode == "checked" {
						if err := os.WriteFile(marker, []byte("bench"), 0o644); err != nil {
							b.Fatal(err)
						}
					}
					e, err := New(cfg)
					if err != nil {
						b.Fatal(err)
					}
					if err := e.Records().Wait(); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
					start := time.Now()
					res, err := e.ExportBundle(context.Background(), kingFolder)
					total += time.Since(start)
					if err != nil || !res.Changed {
						b.Fatalf("export: %v, changed %v", err, res != nil && res.Changed)
					}
					b.StopTimer()
					os.Remove(marker)
					b.StartTimer()
				}
				b.ReportMetric(float64(reads.Load())/float64(b.N), "media-reads/op")
				b.ReportMetric(float64(write.ImagesDecoded()-images)/float64(b.N), "images/op")
				b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "export-ms")
			})
		}
	}
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

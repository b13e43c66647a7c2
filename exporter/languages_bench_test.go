package exporter

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/fixtures"
	"github.com/guidepub/guidepub/site/procstat"
)

// languagesBundle writes the sample 301-king-st-e into dir with its
// documents in langs languages (en's copied to each other one: every
// language names the same media files) and the area of its first room
// shifted by shift.
func languagesBundle(tb testing.TB, dir string, langs []string, shift float64) {
	tb.Helper()
	files, err := fixtures.BundleFiles("301-king-st-e")
	if err != nil {
		tb.Fatal(err)
	}
	var g map[string]any
	if err := json.Unmarshal(files["guide.json"], &g); err != nil {
		tb.Fatal(err)
	}
	docs := g["media"].(map[string]any)["documents"].(map[string]any)
	en := docs["en"]
	clear(docs)
	for _, l := range langs {
		docs[l] = en
	}
	fl := g["summary"].(map[string]any)["buildings"].([]any)[0].(map[string]any)["floors"].([]any)[0]
	room := fl.(map[string]any)["rooms"].([]any)[0].(map[string]any)
	room["area"] = room["area"].(float64) + shift
	if files["guide.json"], err = json.Marshal(g); err != nil {
		tb.Fatal(err)
	}
	for rel, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if rel == "guide.json" {
			if old, err := os.ReadFile(p); err == nil && string(old) == string(data) {
				continue
			}
		} else if _, err := os.Stat(p); err == nil {
			continue // media unchanged: same file, same stamp
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

// BenchmarkReexportLanguages measures what an upload that changes one
// room's area costs to export again (ExportBundle of an Exporter that
// exported the guide before, as the watcher does), the media unchanged,
// for the sample 301-king-st-e with its documents in 1 and in 5 languages
// naming the same media files: cpu-ms/export is the process's CPU time
// (user and system) per export, wall-ms/export the elapsed time. The
// goal: five languages cost no more than 1.25 times one.
func BenchmarkReexportLanguages(b *testing.B) {
	for _, langs := range [][]string{{"en"}, {"en", "es", "fr", "it", "zh"}} {
		b.Run(fmt.Sprintf("langs=%d", len(langs)), func(b *testing.B) {
			root := b.TempDir()
			src := filepath.Join(root, "src")
			const folder = "301-king-st-e"
			languagesBundle(b, filepath.Join(src, folder), langs, 0)
			osfs := afero.NewOsFs()
			cfg := testConfig(osfs, src, filepath.Join(root, "out"), filepath.Join(root, "private"))
			e, err := New(cfg)
			if err != nil {
				b.Fatal(err)
			}
			if rep, err := e.ExportAll(context.Background()); err != nil || rep.Rejected > 0 {
				b.Fatalf("first export: %v, %d rejected", err, rep.Rejected)
			}
			var cpu, wall time.Duration
			var cpus []time.Duration
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				languagesBundle(b, filepath.Join(src, folder), langs, float64(i+1))
				b.StartTimer()
				c0, t0 := procstat.CPUTime(), time.Now()
				res, err := e.ExportBundle(context.Background(), folder)
				c := procstat.CPUTime() - c0
				wall += time.Since(t0)
				cpu += c
				cpus = append(cpus, c)
				if err != nil || !res.Changed {
					b.Fatalf("export %d: %v (changed %v)", i, err, res.Changed)
				}
			}
			slices.Sort(cpus)
			b.ReportMetric(float64(cpu.Microseconds())/1e3/float64(b.N), "cpu-ms/export")
			b.ReportMetric(float64(cpus[len(cpus)/2].Microseconds())/1e3, "cpu-p50-ms")
			b.ReportMetric(float64(wall.Microseconds())/1e3/float64(b.N), "wall-ms/export")
		})
	}
}

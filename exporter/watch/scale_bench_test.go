package watch_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/exporter"
	"github.com/guidepub/guidepub/exporter/watch"
	"github.com/guidepub/guidepub/fixtures"
	"github.com/guidepub/guidepub/site/procstat"
)

// scaleSizes are the corpus sizes of BenchmarkWatchAtScale;
// GUIDEPUB_BENCH_GUIDES (comma-separated) replaces them.
func scaleSizes(b *testing.B) []int {
	sizes := []int{1000, 10000}
	if testing.Short() {
		sizes = []int{50, 200}
	}
	if v := os.Getenv("GUIDEPUB_BENCH_GUIDES"); v != "" {
		sizes = nil
		for _, s := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil || n < 2 {
				b.Fatalf("GUIDEPUB_BENCH_GUIDES=%q: want sizes of at least 2, comma-separated", v)
			}
			sizes = append(sizes, n)
		}
	}
	return sizes
}

// BenchmarkWatchAtScale measures what one upload costs a watcher over a
// source folder of n guides already exported, for each corpus size n (no
// compressed siblings, as with --encodings none, to keep the setup short;
// the export of one guide is the same at every size):
//
//   - start-to-served-ms: from the start (a new Exporter reading its
//     records, a new Watcher, the catch-up export of the whole tree beside
//     it) until a bundle renamed into place once the watcher runs is
//     exported; found-at-start-ms: until a bundle renamed into place as
//     the start begins (before the source folder is watched) is exported;
//   - open-ms, watch-setup-ms: of that, exporter.New (reading the records)
//     and watch.New (watching the source folder itself: the bundle
//     folders are watched in the background once the watcher runs);
//   - catchup-ms: how long the catch-up export of the n unchanged bundles
//     took, beside that; all-watched-ms: until every bundle folder was
//     watched too (the background set-up), which the uploads below wait
//     for, so that they measure a watcher at rest;
//   - served-p50-ms, served-max-ms: from an edit of an existing guide's
//     guide.json (renamed into place, so exported with no quiet period)
//     until its new document is on disk;
//   - cpu-ms/upload: process CPU time per upload (user + system);
//   - rss-MB: resident memory after the uploads; rss-growth-MB/1k-guides:
//     its growth from before the start (after the setup), per 1,000 guides;
//   - incr-export-ms: a new Exporter's ExportAll after one guide changed
//     (what "guidepub export" does), all other bundles unchanged.
//
// Each run is scaleUploads uploads, so that the default -benchtime (one
// run, as a run takes longer than a second) measures 20 of them.
func BenchmarkWatchAtScale(b *testing.B) {
	for _, n := range scaleSizes(b) {
		b.Run(fmt.Sprintf("guides=%d", n), func(b *testing.B) { benchWatchAtScale(b, n) })
	}
}

// scaleBundle returns guide.json of generated guide n (from the sample
// 301-king-st-e) with the area of every room shifted by shift, and the
// sample's other files.
func scaleBundle(b *testing.B, n int, shift float64) map[string][]byte {
	b.Helper()
	files, err := fixtures.BundleFiles("301-king-st-e")
	if err != nil {
		b.Fatal(err)
	}
	var g map[string]any
	if err := json.Unmarshal(files["guide.json"], &g); err != nil {
		b.Fatal(err)
	}
	g["guideId"] = fmt.Sprintf("gSCALE%06d", n)
	g["alias"] = fmt.Sprintf("scale-%06d", n)
	for i, v := range g["views"].([]any) {
		v.(map[string]any)["viewId"] = scaleViewID(n, i)
	}
	for _, bl := range g["summary"].(map[string]any)["buildings"].([]any) {
		for _, fl := range bl.(map[string]any)["floors"].([]any) {
			for _, r := range fl.(map[string]any)["rooms"].([]any) {
				room := r.(map[string]any)
				room["area"] = room["area"].(float64) + float64(n) + shift
			}
		}
	}
	if files["guide.json"], err = json.Marshal(g); err != nil {
		b.Fatal(err)
	}
	return files
}

// scaleUploads is the number of uploads of one run of BenchmarkWatchAtScale.
const scaleUploads = 20

func scaleViewID(n, i int) string { return fmt.Sprintf("vS%06d%c", n, 'A'+i) }

// writeScaleBundle writes files into dir, guide.json last through a
// temporary name.
func writeScaleBundle(b *testing.B, dir string, files map[string][]byte) {
	b.Helper()
	for rel, data := range files {
		if rel == "guide.json" {
			continue
		}
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	tmp := filepath.Join(dir, "guide.json.tmp")
	if err := os.WriteFile(tmp, files["guide.json"], 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "guide.json")); err != nil {
		b.Fatal(err)
	}
}

// waitFile waits until p exists with content other than not.
func waitFile(b *testing.B, p string, not []byte) {
	b.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		data, err := os.ReadFile(p)
		if err == nil && !bytes.Equal(data, not) {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%s not written", p)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// waitFiles waits until every path exists and returns when each was
// first seen.
func waitFiles(b *testing.B, paths ...string) []time.Time {
	b.Helper()
	seen := make([]time.Time, len(paths))
	deadline := time.Now().Add(2 * time.Minute)
	for left := len(paths); left > 0; {
		for i, p := range paths {
			if seen[i].IsZero() {
				if _, err := os.Stat(p); err == nil {
					seen[i] = time.Now()
					left--
				}
			}
		}
		if time.Now().After(deadline) {
			b.Fatalf("not all of %v written", paths)
		}
		time.Sleep(2 * time.Millisecond)
	}
	return seen
}

func benchWatchAtScale(b *testing.B, n int) {
	root := b.TempDir()
	src, out, priv := filepath.Join(root, "src"), filepath.Join(root, "out"), filepath.Join(root, "private")
	osfs := afero.NewOsFs()
	cfg := exporter.DefaultConfig()
	cfg.Src, cfg.SrcDir, cfg.Out, cfg.OutDir, cfg.Private, cfg.PrivateDir = osfs, src, osfs, out, osfs, priv
	cfg.Encodings, cfg.Logger = nil, slog.New(slog.DiscardHandler)
	setup := time.Now()
	for i := range n {
		writeScaleBundle(b, filepath.Join(src, fmt.Sprintf("guide-%06d", i)), scaleBundle(b, i, 0))
	}
	first, err := exporter.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	if rep, err := first.ExportAll(context.Background()); err != nil || rep.Rejected > 0 {
		b.Fatalf("first export: %v, %d rejected", err, rep.Rejected)
	}
	b.Logf("setup: %d guides generated and exported in %v", n, time.Since(setup).Round(time.Millisecond))
	first = nil
	debug.FreeOSMemory()
	rss0, _ := procstat.RSS(0)
	// The uploads of the start measures, staged beforehand: one renamed
	// into place as the start begins (before the source folder is
	// watched: no event tells of it), one once the watcher runs.
	early := filepath.Join(src, "early.partial")
	writeScaleBundle(b, early, scaleBundle(b, n+1, 0))
	staged := filepath.Join(src, "new.partial")
	writeScaleBundle(b, staged, scaleBundle(b, n, 0))

	// Start: records read, watcher up, catch-up beside it, two uploads.
	t0 := time.Now()
	if err := os.Rename(early, filepath.Join(src, "early")); err != nil {
		b.Fatal(err)
	}
	ex, err := exporter.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	opened := time.Since(t0)
	wcfg := watch.DefaultConfig()
	wcfg.Dir, wcfg.Handler, wcfg.Logger, wcfg.Since = src, exportHandler{ex}, cfg.Logger, t0
	w, err := watch.New(wcfg)
	if err != nil {
		b.Fatal(err)
	}
	watching := time.Since(t0) - opened
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- w.Run(ctx) }()
	caughtUp := make(chan time.Duration, 1)
	go func() {
		if _, err := ex.ExportAll(ctx); err != nil {
			b.Errorf("catch-up export: %v", err)
		}
		caughtUp <- time.Since(t0)
	}()
	if err := os.Rename(staged, filepath.Join(src, "new")); err != nil {
		b.Fatal(err)
	}
	served := waitFiles(b, filepath.Join(out, scaleViewID(n, 0), "data", "summary"),
		filepath.Join(out, scaleViewID(n+1, 0), "data", "summary"))
	startToServed, foundAtStart := served[0].Sub(t0), served[1].Sub(t0)
	catchUp := <-caughtUp
	// The uploads below measure a watcher at rest: the catch-up done and
	// every bundle folder watched, so their CPU is theirs alone.
	select {
	case <-watch.WatchedAll(w):
	case <-time.After(5 * time.Minute):
		b.Fatal("the bundle folders were not all watched after 5 minutes")
	}
	allWatched := time.Since(t0)

	// Uploads: edits of existing guides, one at a time.
	var lat []time.Duration
	cpu0 := procstat.CPUTime()
	b.ResetTimer()
	for i := range b.N * scaleUploads {
		g := (i * 7919) % n
		p := filepath.Join(out, scaleViewID(g, 0), "data", "summary")
		before, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		files := scaleBundle(b, g, float64(i+1))
		dir := filepath.Join(src, fmt.Sprintf("guide-%06d", g))
		t := time.Now()
		writeScaleBundle(b, dir, map[string][]byte{"guide.json": files["guide.json"]})
		waitFile(b, p, before)
		lat = append(lat, time.Since(t))
	}
	b.StopTimer()
	cpu := procstat.CPUTime() - cpu0
	rss, _ := procstat.RSS(0)
	cancel()
	if err := <-ran; err != nil {
		b.Error(err)
	}

	// Incremental export after one change, in a new Exporter.
	g := n / 2
	writeScaleBundle(b, filepath.Join(src, fmt.Sprintf("guide-%06d", g)),
		map[string][]byte{"guide.json": scaleBundle(b, g, -1)["guide.json"]})
	e2, err := exporter.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	t1 := time.Now()
	rep, err := e2.ExportAll(context.Background())
	incr := time.Since(t1)
	if err != nil || rep.Written == 0 {
		b.Fatalf("incremental export: %v, %s", err, rep.Summary())
	}

	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(startToServed), "start-to-served-ms")
	b.ReportMetric(ms(foundAtStart), "found-at-start-ms")
	b.ReportMetric(ms(opened), "open-ms")
	b.ReportMetric(ms(watching), "watch-setup-ms")
	b.ReportMetric(ms(catchUp), "catchup-ms")
	b.ReportMetric(ms(allWatched), "all-watched-ms")
	b.ReportMetric(ms(lat[len(lat)/2]), "served-p50-ms")
	b.ReportMetric(ms(lat[len(lat)-1]), "served-max-ms")
	b.ReportMetric(ms(cpu)/float64(len(lat)), "cpu-ms/upload")
	b.ReportMetric(rss, "rss-MB")
	b.ReportMetric((rss-rss0)/float64(n)*1000, "rss-growth-MB/1k-guides")
	b.ReportMetric(ms(incr), "incr-export-ms")
}

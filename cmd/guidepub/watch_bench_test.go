package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/exporter"
	"github.com/guidepub/guidepub/exporter/pipeline"
	"github.com/guidepub/guidepub/exporter/watch"
	"github.com/guidepub/guidepub/fixtures"
	"github.com/guidepub/guidepub/site/serve"
)

// benchTemplate is the sample bundle the benchmark's guides are made from:
// a two-view guide with a measured summary, photos and floor plans.
const benchTemplate = "301-king-st-e"

// benchBundle returns the files of generated guide n, its webhook pointed at
// hookURL.
func benchBundle(b *testing.B, n int, hookURL string) map[string][]byte {
	b.Helper()
	files, err := fixtures.BundleFiles(benchTemplate)
	if err != nil {
		b.Fatal(err)
	}
	var g map[string]any
	if err := json.Unmarshal(files["guide.json"], &g); err != nil {
		b.Fatal(err)
	}
	g["guideId"] = fmt.Sprintf("gBENCH%05d", n)
	g["alias"] = fmt.Sprintf("bench-%05d", n)
	g["workOrderId"] = fmt.Sprintf("WO-B%05d", n)
	for i, v := range g["views"].([]any) {
		v.(map[string]any)["viewId"] = benchViewID(n, i)
	}
	g["webhooks"] = []any{map[string]any{"url": hookURL, "secret": devTestSecret}}
	// Every guide measures differently, so no two guides share a document
	// (the exporter would reuse a compressed copy).
	for _, bl := range g["summary"].(map[string]any)["buildings"].([]any) {
		for _, fl := range bl.(map[string]any)["floors"].([]any) {
			for _, r := range fl.(map[string]any)["rooms"].([]any) {
				room := r.(map[string]any)
				room["area"] = room["area"].(float64) + float64(n)
			}
		}
	}
	files["guide.json"], err = json.Marshal(g)
	if err != nil {
		b.Fatal(err)
	}
	return files
}

// benchViewID returns the id of view i of generated guide n.
func benchViewID(n, i int) string { return fmt.Sprintf("vB%05d%c", n, 'A'+i) }

// writeBundle writes files into dir: media first, guide.json last through a
// temporary name, as an uploader does.
func writeBundle(b *testing.B, dir string, files map[string][]byte) {
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

// arrivals records when the first delivery of each guide reached the
// receiver.
type arrivals struct {
	mu   sync.Mutex
	at   map[string]time.Time
	kick chan struct{}
}

func (a *arrivals) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	var ev struct {
		GuideID string `json:"guideId"`
	}
	body, _ := io.ReadAll(r.Body)
	json.Unmarshal(body, &ev)
	a.mu.Lock()
	if _, ok := a.at[ev.GuideID]; !ok {
		a.at[ev.GuideID] = now
	}
	a.mu.Unlock()
	select {
	case a.kick <- struct{}{}:
	default:
	}
	w.WriteHeader(http.StatusNoContent)
}

func (a *arrivals) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.at)
}

func (a *arrivals) of(guideID string) (time.Time, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	t, ok := a.at[guideID]
	return t, ok
}

// wait blocks until cond holds or the deadline passes.
func (a *arrivals) wait(b *testing.B, what string, d time.Duration, cond func() bool) {
	b.Helper()
	deadline := time.After(d)
	for !cond() {
		select {
		case <-a.kick:
		case <-time.After(5 * time.Millisecond):
		case <-deadline:
			b.Fatalf("timed out waiting for %s", what)
		}
	}
}

// percentile returns the p-th percentile (0-100, nearest rank) of sorted.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*p/100+0.5) - 1
	i = max(0, min(i, len(sorted)-1))
	return sorted[i]
}

// BenchmarkUploadLatency measures, as "guidepub dev" runs (watcher,
// exporter, static server, sidecar queue on SQLite, one loopback webhook
// receiver), the time from the moment an upload is complete (guide.json
// renamed into place) until the new guide's status document is served, and
// until its ready event reaches the receiver: 200 uploads of new guides
// into a source folder holding 1,000.
func BenchmarkUploadLatency(b *testing.B) {
	const existing, uploads = 1000, 200
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	root := b.TempDir()
	src, out, priv := filepath.Join(root, "src"), filepath.Join(root, "out"), filepath.Join(root, "private")
	for _, d := range []string{src, out, priv} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			b.Fatal(err)
		}
	}
	rcv := &arrivals{at: map[string]time.Time{}, kick: make(chan struct{}, 1)}
	hook := httptest.NewServer(rcv)
	defer hook.Close()
	for n := range existing {
		writeBundle(b, filepath.Join(src, fmt.Sprintf("guide-%05d", n)), benchBundle(b, n, hook.URL))
	}

	logger := slog.New(slog.DiscardHandler)
	scfg := newSidecarConfig(priv, filepath.Join(root, "guidepub.db"), logger)
	scfg.AllowPrivateTargets = true
	parts, err := openSidecar(ctx, scfg)
	if err != nil {
		b.Fatal(err)
	}
	if err := parts.Start(ctx); err != nil {
		b.Fatal(err)
	}
	defer parts.Close(context.Background())
	osfs := afero.NewOsFs()
	static, err := serve.New(osfs, out, noWatchServe())
	if err != nil {
		b.Fatal(err)
	}
	defer static.Close()

	started := make(chan *exporter.Report, 1)
	stopped := make(chan error, 1)
	go func() {
		stopped <- watchAndExport(ctx, watchSetup{
			Exporter: exporterConfig(src, out, priv),
			Debounce: watch.DefaultDebounce,
			Pipeline: pipeline.New(pipeline.Config{Events: eventQueue{parts.Events, logger}, Logger: logger}),
			Logger:   logger,
			Stdout:   io.Discard,
			Stderr:   io.Discard,
			Exported: func(ids []string) {
				if ids == nil {
					static.Reload()
				} else {
					static.ReloadDirs(ids...)
				}
			},
			Started: func(rep *exporter.Report) { started <- rep },
		})
	}()
	setup := time.Now()
	select {
	case rep := <-started:
		if rep.Rejected > 0 {
			b.Fatalf("%d generated bundles rejected", rep.Rejected)
		}
	case err := <-stopped:
		b.Fatalf("watch ended: %v", err)
	}
	rcv.wait(b, "the first export's events", 5*time.Minute, func() bool { return rcv.count() >= existing })
	b.Logf("setup: %d guides exported and their events delivered in %v", existing, time.Since(setup).Round(time.Millisecond))

	served := make([]time.Duration, 0, uploads)
	hooked := make([]time.Duration, 0, uploads)
	b.ResetTimer()
	for i := range uploads {
		n := existing + i
		writeBundle(b, filepath.Join(src, fmt.Sprintf("guide-%05d", n)), benchBundle(b, n, hook.URL))
		t0 := time.Now()
		status := "/" + benchViewID(n, 0) + "/data/status"
		rcv.wait(b, status, time.Minute, func() bool {
			rec := httptest.NewRecorder()
			static.ServeHTTP(rec, httptest.NewRequest("GET", status, nil))
			return rec.Code == http.StatusOK && strings.Contains(rec.Body.String(), "ready")
		})
		served = append(served, time.Since(t0))
		id := fmt.Sprintf("gBENCH%05d", n)
		rcv.wait(b, "the event of "+id, time.Minute, func() bool { _, ok := rcv.of(id); return ok })
		at, _ := rcv.of(id)
		hooked = append(hooked, at.Sub(t0))
	}
	b.StopTimer()
	slices.Sort(served)
	slices.Sort(hooked)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(percentile(served, 50)), "served-p50-ms")
	b.ReportMetric(ms(percentile(served, 99)), "served-p99-ms")
	b.ReportMetric(ms(percentile(hooked, 50)), "webhook-p50-ms")
	b.ReportMetric(ms(percentile(hooked, 99)), "webhook-p99-ms")
	cancel()
	if err := <-stopped; err != nil {
		b.Errorf("watch: %v", err)
	}
}

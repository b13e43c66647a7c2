package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/exporter"
	"github.com/guidepub/guidepub/exporter/pipeline"
	"github.com/guidepub/guidepub/exporter/records"
	"github.com/guidepub/guidepub/exporter/watch"
	"github.com/guidepub/guidepub/fixtures"
	"github.com/guidepub/guidepub/site/procstat"
	"github.com/guidepub/guidepub/site/serve"
)

// benchTemplate is the sample bundle the benchmark's guides are made from:
// a two-view guide with a measured summary, photos and floor plans.
const benchTemplate = "301-king-st-e"

// benchBundle returns the files of generated guide n, its webhook pointed at
// hookURL: the sample as it is (two views, documents in English and
// French).
func benchBundle(b *testing.B, n int, hookURL string) map[string][]byte {
	b.Helper()
	return shapedBundle(b, n, guideShape{hook: hookURL})
}

// guideShape says how a generated guide differs from the sample.
type guideShape struct {
	langs int    // 1: English only; 5: English copied to fr, es, it, zh; 0: the sample's
	views int    // views, the sample's first ones, others added; 0: the sample's two
	hook  string // the webhook's URL; "": no webhook
}

// shapedBundle returns the files of generated guide n, shaped by sh.
func shapedBundle(b *testing.B, n int, sh guideShape) map[string][]byte {
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
	shapeLanguages(g, sh.langs)
	shapeViews(g, sh.views)
	for i, v := range g["views"].([]any) {
		v.(map[string]any)["viewId"] = benchViewID(n, i)
	}
	delete(g, "webhooks")
	if sh.hook != "" {
		g["webhooks"] = []any{map[string]any{"url": sh.hook, "secret": devTestSecret}}
	}
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

// shapeLanguages keeps the sample's English documents alone (langs 1) or
// copies them to every other language (langs 5).
func shapeLanguages(g map[string]any, langs int) {
	docs := g["media"].(map[string]any)["documents"].(map[string]any)
	switch langs {
	case 1:
		for lang := range docs {
			if lang != "en" {
				delete(docs, lang)
			}
		}
	case 5:
		for _, lang := range []string{"fr", "es", "it", "zh"} {
			docs[lang] = docs["en"]
		}
	}
}

// shapeViews keeps the sample's first views or adds metric views hiding
// the video until there are views of them.
func shapeViews(g map[string]any, views int) {
	vs := g["views"].([]any)
	switch {
	case views == 0:
	case views <= len(vs):
		vs = vs[:views]
	default:
		for len(vs) < views {
			vs = append(vs, map[string]any{"units": "metric", "hidden": []any{"video"}})
		}
	}
	g["views"] = vs
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

// stageBundle uploads a new bundle as the README tells uploaders to: its
// files written to dir+".partial", then that folder renamed to dir. It
// returns the moment of the rename, when the upload is complete. (A new
// folder filled in place and completed by renaming its guide.json is
// found, when the rename comes before the watcher has added the folder's
// watch, by the walk that adds it, and waits for the debounce: on a fast
// file system that is a coin toss, docs/watching.md.)
func stageBundle(b *testing.B, dir string, files map[string][]byte) time.Time {
	b.Helper()
	writeBundle(b, dir+".partial", files)
	if err := os.Rename(dir+".partial", dir); err != nil {
		b.Fatal(err)
	}
	return time.Now()
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
// exporter at default settings, static server, sidecar queue on SQLite, one
// loopback webhook receiver, all in this process), the time from the moment
// an upload is complete (guide.json renamed into place, its media written
// before) until the new guide's default view serves a "ready" data/status
// (served-p50-ms, served-p99-ms), and until its ready event reaches the
// receiver (webhook-p50-ms, webhook-p99-ms), and until its quick
// compressed siblings are replaced by the final bytes (final-p50-ms: its
// record lists none); cpu-ms/upload is the process's CPU time over the
// uploads divided by their number. Each run uploads
// GUIDEPUB_BENCH_UPLOADS new guides (default 30) one after the other, each
// once the previous one's final bytes are in place, made from the 301-king-st-e
// sample with documents in 1 or 5 languages (English alone, or English
// copied to fr, es, it and zh) and 1 or 3 views, into a source folder that
// already holds a corpus of GUIDEPUB_BENCH_GUIDES guides (comma-separated;
// default 100 and 1,000).
//
// The corpus is the sample as it is (two views, English and French, an
// alias, no webhook), each guide measuring differently, exported once by
// the exporter at default settings (every encoding, pages, renditions,
// records) and kept under the user's cache folder
// (GUIDEPUB_BENCH_CACHE to choose another), keyed by the SHA-256 of the
// test binary, so any change of the code exports it again. Each run copies
// it (hard links, times kept: corpusRoot) and starts the watcher on the
// copy with a new SQLite store: the catch-up must find every guide up to
// date, and the run fails unless it re-exported none (start-reexported,
// always 0). Making a
// corpus of 400 guides took 13 minutes on a loaded 2-core machine; the
// runs after a first one skip it, and copy it (see corpusRoot).
//
// The corpus of 10,000 guides takes over an hour to make and about 33 GB:
// GUIDEPUB_BENCH_PREPARE=1 makes the corpora of the selected runs and
// measures nothing (so they can be made at a low priority, and measured
// later on a quiet machine), and GUIDEPUB_BENCH_CORPUS_ONCE=1 runs on the
// cached corpus itself instead of a copy, and discards it (the next run
// makes it again). GUIDEPUB_BENCH_COLD=1 starts each run with the page
// cache dropped (root only), as after a reboot.
//
// Before them, one more new guide, staged beforehand, is renamed into place
// as the process starts: start-served-ms is how long until its status is
// served (the watcher finds it by its stamps and exports it beside the
// catch-up), catchup-s how long the start took, catch-up included.
//
// rss-MB is the process's resident memory after the uploads, once
// collected twice (what pools drop then is dropped) and with the heap the
// runtime keeps given back: what the watcher, the static server and the
// sidecar hold at rest over the corpus.
//
// GUIDEPUB_BENCH_CPUPROFILE=file writes a CPU profile of each run's uploads
// alone, setup excluded, to file.<run name>; GUIDEPUB_BENCH_HEAPPROFILE=file
// the heap in use at rest after them.
func BenchmarkUploadLatency(b *testing.B) {
	uploads := benchUploads(b, 30)
	sizes := []int{100, 1000}
	if os.Getenv("GUIDEPUB_BENCH_GUIDES") != "" {
		sizes = benchSizes()
	}
	for _, existing := range sizes {
		for _, langs := range []int{1, 5} {
			for _, views := range []int{1, 3} {
				name := fmt.Sprintf("guides=%d/langs=%d/views=%d", existing, langs, views)
				b.Run(name, func(b *testing.B) {
					corpus := uploadCorpus(b, existing)
					if os.Getenv("GUIDEPUB_BENCH_PREPARE") != "" {
						b.Skipf("GUIDEPUB_BENCH_PREPARE: corpus of %d guides ready in %s", existing, corpus)
					}
					shape := guideShape{langs: langs, views: views}
					benchmarkUploadLatency(b, corpus, existing, uploads, shape)
				})
			}
		}
	}
}

// uploadCorpus returns a folder holding src, out and private: existing
// generated guides exported, made once per test binary and kept in the
// cache.
func uploadCorpus(b *testing.B, existing int) string {
	b.Helper()
	root := os.Getenv("GUIDEPUB_BENCH_CACHE")
	if root == "" {
		c, err := os.UserCacheDir()
		if err != nil {
			b.Fatal(err)
		}
		root = filepath.Join(c, "guidepub", "bench-upload-latency")
	}
	key, err := binaryKey()
	if err != nil {
		b.Fatal(err)
	}
	dir := filepath.Join(root, key, fmt.Sprintf("guides=%d", existing))
	done := filepath.Join(dir, "complete")
	if _, err := os.Stat(done); err == nil {
		return dir
	}
	// Corpora of other versions of the code are of no use any more.
	olds, _ := os.ReadDir(root)
	for _, o := range olds {
		if o.Name() != key {
			os.RemoveAll(filepath.Join(root, o.Name()))
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	src, out, priv := filepath.Join(dir, "src"), filepath.Join(dir, "out"), filepath.Join(dir, "private")
	for _, d := range []string{src, out, priv} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			b.Fatal(err)
		}
	}
	for n := range existing {
		writeBundle(b, filepath.Join(src, fmt.Sprintf("guide-%05d", n)), shapedBundle(b, n, guideShape{}))
	}
	ex, err := exporter.New(exporterConfig(src, out, priv))
	if err != nil {
		b.Fatal(err)
	}
	rep, err := ex.ExportAll(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	if rep.Rejected > 0 || len(rep.Guides) != existing {
		b.Fatalf("corpus: %d guides exported, %d rejected, want %d", len(rep.Guides), rep.Rejected, existing)
	}
	if err := os.WriteFile(done, nil, 0o644); err != nil {
		b.Fatal(err)
	}
	b.Logf("corpus of %d guides exported in %v into %s", existing, time.Since(t0).Round(time.Second), dir)
	return dir
}

// binaryKey returns the first 16 hex digits of the SHA-256 of the running
// test binary.
func binaryKey() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	f, err := os.Open(exe)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// reexported returns how many guides of rep, but the one in folder
// except, had a file written or deleted.
func reexported(rep *exporter.Report, except string) int {
	n := 0
	for _, g := range rep.Guides {
		if g.Folder != except && (g.Changed || g.Written > 0 || g.Deleted > 0) {
			n++
		}
	}
	return n
}

func benchmarkUploadLatency(b *testing.B, corpus string, existing, uploads int, shape guideShape) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	root := corpusRoot(b, corpus, existing)
	src, out, priv := filepath.Join(root, "src"), filepath.Join(root, "out"), filepath.Join(root, "private")
	rcv := &arrivals{at: map[string]time.Time{}, kick: make(chan struct{}, 1)}
	hook := httptest.NewServer(rcv)
	defer hook.Close()
	shape.hook = hook.URL

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
	static, err := serve.New(afero.NewOsFs(), out, noWatchServe())
	if err != nil {
		b.Fatal(err)
	}
	defer static.Close()

	served := func(n int) bool {
		rec := httptest.NewRecorder()
		static.ServeHTTP(rec, httptest.NewRequest("GET", "/"+benchViewID(n, 0)+"/data/status", nil))
		return rec.Code == http.StatusOK && strings.Contains(rec.Body.String(), "ready")
	}
	// The final bytes of guide n are in place once its record no longer
	// lists quick siblings.
	final := func(n int) bool {
		data, err := os.ReadFile(filepath.Join(priv, records.RecordsDir(0, 1), fmt.Sprintf("gBENCH%05d", n)+".json"))
		head, _, _ := strings.Cut(string(data), "\n")
		return err == nil && !strings.Contains(head, `"quick"`)
	}

	// An upload renamed into place as the process starts (staged
	// beforehand, last in name order): found by its stamps, it is
	// exported without waiting for the catch-up.
	early := existing + uploads
	earlyDir := filepath.Join(src, fmt.Sprintf("guide-%05d", early))
	writeBundle(b, earlyDir+".partial", shapedBundle(b, early, shape))
	t0 := time.Now()
	if err := os.Rename(earlyDir+".partial", earlyDir); err != nil {
		b.Fatal(err)
	}
	earlyServed := make(chan time.Duration, 1)
	go func() {
		for ctx.Err() == nil && !served(early) {
			time.Sleep(2 * time.Millisecond)
		}
		earlyServed <- time.Since(t0)
	}()
	rep, stopped := benchWatch(ctx, b, src, out, priv, eventQueue{parts.Events, logger}, logger, func(ids []string) {
		if ids == nil {
			static.Reload()
		} else {
			static.ReloadDirs(ids...)
		}
	})
	catchUp := time.Since(t0)
	if len(rep.Guides) != existing+1 || rep.Rejected > 0 {
		b.Fatalf("start: %d guides, %d rejected, want %d", len(rep.Guides), rep.Rejected, existing+1)
	}
	if n := reexported(rep, filepath.Base(earlyDir)); n > 0 {
		b.Fatalf("start: %d guides of the corpus exported again, want none", n)
	}
	var startServed time.Duration
	select {
	case startServed = <-earlyServed:
	case <-time.After(time.Minute):
		b.Fatal("the upload made at the start was not served within a minute")
	}
	rcv.wait(b, "the final bytes of the upload made at the start", time.Minute, func() bool { return final(early) })
	b.Logf("watcher started on %d guides, none exported again, in %v; the upload made then served in %v",
		existing, catchUp.Round(time.Millisecond), startServed.Round(time.Millisecond))

	stop := startUploadProfile(b)
	servedIn := make([]time.Duration, 0, uploads)
	hooked := make([]time.Duration, 0, uploads)
	finished := make([]time.Duration, 0, uploads)
	cpu0 := procstat.CPUTime()
	b.ResetTimer()
	for i := range uploads {
		n := existing + i
		writeBundle(b, filepath.Join(src, fmt.Sprintf("guide-%05d", n)), shapedBundle(b, n, shape))
		t0 := time.Now()
		rcv.wait(b, "the status of "+benchViewID(n, 0), time.Minute, func() bool { return served(n) })
		servedIn = append(servedIn, time.Since(t0))
		id := fmt.Sprintf("gBENCH%05d", n)
		rcv.wait(b, "the event of "+id, time.Minute, func() bool { _, ok := rcv.of(id); return ok })
		at, _ := rcv.of(id)
		hooked = append(hooked, at.Sub(t0))
		// The next upload waits for this one's final bytes (its quick
		// siblings replaced), so that each is measured alone and its CPU
		// includes that work.
		rcv.wait(b, "the final bytes of "+id, time.Minute, func() bool { return final(n) })
		finished = append(finished, time.Since(t0))
	}
	b.StopTimer()
	cpu := procstat.CPUTime() - cpu0
	stop()
	slices.Sort(servedIn)
	slices.Sort(hooked)
	slices.Sort(finished)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(percentile(servedIn, 50)), "served-p50-ms")
	b.ReportMetric(ms(percentile(servedIn, 99)), "served-p99-ms")
	b.ReportMetric(ms(percentile(hooked, 50)), "webhook-p50-ms")
	b.ReportMetric(ms(percentile(hooked, 99)), "webhook-p99-ms")
	b.ReportMetric(ms(percentile(finished, 50)), "final-p50-ms")
	b.ReportMetric(ms(cpu)/float64(uploads), "cpu-ms/upload")
	b.ReportMetric(0, "start-reexported") // the start failed the run otherwise
	b.ReportMetric(ms(startServed), "start-served-ms")
	b.ReportMetric(catchUp.Seconds(), "catchup-s")
	// At rest: what pools drop after two collections is dropped (a
	// process idle for four minutes has had them: Go forces one every two).
	runtime.GC()
	runtime.GC()
	debug.FreeOSMemory()
	if rss, err := procstat.RSS(0); err == nil {
		b.ReportMetric(rss, "rss-MB")
	}
	writeHeapProfile(b)
	cancel()
	stopped()
}

// writeHeapProfile writes the heap in use to
// $GUIDEPUB_BENCH_HEAPPROFILE.<run name> when that is set.
func writeHeapProfile(b *testing.B) {
	base := os.Getenv("GUIDEPUB_BENCH_HEAPPROFILE")
	if base == "" {
		return
	}
	f, err := os.Create(base + "." + runFileName(b))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		b.Fatal(err)
	}
}

// runFileName returns the name of b's run, made fit for a file name.
func runFileName(b *testing.B) string {
	return strings.NewReplacer("/", ".", "=", "").Replace(strings.TrimPrefix(b.Name(), "BenchmarkUploadLatency/"))
}

// corpusRoot returns the folder a run works in: a copy of corpus, or with
// GUIDEPUB_BENCH_CORPUS_ONCE corpus itself, no longer marked complete. The
// copy is made of hard links where the file system allows (the exporter
// replaces a file by a new one, never writes into one, so the cached
// corpus stays as it was made; 10,000 guides are copied in a minute
// instead of the better part of an hour), else of copies. With
// GUIDEPUB_BENCH_COLD the kernel's page cache is dropped then (root only),
// as after a reboot: the start reads everything from the disk.
func corpusRoot(b *testing.B, corpus string, existing int) string {
	b.Helper()
	t0 := time.Now()
	root := corpus
	if os.Getenv("GUIDEPUB_BENCH_CORPUS_ONCE") != "" {
		if err := os.Remove(filepath.Join(corpus, "complete")); err != nil {
			b.Fatal(err)
		}
	} else {
		root = b.TempDir()
		if out, err := exec.Command("cp", "-al", corpus+"/.", root).CombinedOutput(); err != nil {
			b.Logf("hard links refused (%v: %s): copying the corpus", err, out)
			if out, err := exec.Command("cp", "-a", corpus+"/.", root).CombinedOutput(); err != nil {
				b.Fatalf("copying the corpus: %v: %s", err, out)
			}
		}
	}
	// What the copy wrote is flushed before the uploads, so that their
	// flushes do not wait behind its write-back.
	syscall.Sync()
	cold := ""
	if os.Getenv("GUIDEPUB_BENCH_COLD") != "" {
		if err := procstat.DropCaches(); err != nil {
			b.Fatalf("GUIDEPUB_BENCH_COLD: dropping the page cache: %v", err)
		}
		cold = ", page cache dropped"
	}
	b.Logf("corpus of %d guides ready in %s in %v%s", existing, root, time.Since(t0).Round(time.Millisecond), cold)
	return root
}

// benchWatch runs the watcher as "watch" and "dev" run it by default
// (quick siblings), its ready events queued to events and exported
// called as dev's static server is, until ctx ends. It returns the report
// of its start, and a function that waits for it to end once ctx has.
func benchWatch(ctx context.Context, b *testing.B, src, out, priv string, events pipeline.EventQueue, logger *slog.Logger, exported func([]string)) (*exporter.Report, func()) {
	b.Helper()
	started := make(chan *exporter.Report, 1)
	stopped := make(chan error, 1)
	go func() {
		stopped <- watchAndExport(ctx, watchSetup{
			Exporter: exporterConfig(src, out, priv),
			Debounce: watch.DefaultDebounce,
			Quick:    true,
			Pipeline: pipeline.New(pipeline.Config{Events: events, Logger: logger}),
			Logger:   logger,
			Stdout:   io.Discard,
			Stderr:   io.Discard,
			Exported: exported,
			Started:  func(rep *exporter.Report) { started <- rep },
		})
	}()
	wait := func() {
		if err := <-stopped; err != nil {
			b.Errorf("watch: %v", err)
		}
	}
	select {
	case rep := <-started:
		return rep, wait
	case err := <-stopped:
		b.Fatalf("watch ended: %v", err)
	}
	return nil, wait
}

// startUploadProfile starts a CPU profile into
// $GUIDEPUB_BENCH_CPUPROFILE.<run name> when that is set, and returns what
// stops it.
func startUploadProfile(b *testing.B) (stop func()) {
	base := os.Getenv("GUIDEPUB_BENCH_CPUPROFILE")
	if base == "" {
		return func() {}
	}
	f, err := os.Create(base + "." + runFileName(b))
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		b.Fatal(err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}

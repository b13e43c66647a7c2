package main

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/exporter"
	"github.com/guidepub/guidepub/exporter/pipeline"
	"github.com/guidepub/guidepub/exporter/publish"
	"github.com/guidepub/guidepub/exporter/publish/publishtest"
	"github.com/guidepub/guidepub/exporter/watch"
	"github.com/guidepub/guidepub/site"
	"github.com/guidepub/guidepub/site/procstat"
)

// benchSizes returns the corpus sizes of the publishing benchmarks:
// GUIDEPUB_BENCH_GUIDES (comma-separated), else 1,000 and 10,000 (100 alone
// with -short).
func benchSizes() []int {
	if s := os.Getenv("GUIDEPUB_BENCH_GUIDES"); s != "" {
		var out []int
		for _, f := range strings.Split(s, ",") {
			if n, err := strconv.Atoi(strings.TrimSpace(f)); err == nil && n > 0 {
				out = append(out, n)
			}
		}
		return out
	}
	if testing.Short() {
		return []int{100}
	}
	return []int{1000, 10000}
}

// benchUploads returns how many uploads a benchmark run makes:
// GUIDEPUB_BENCH_UPLOADS, else def.
func benchUploads(b *testing.B, def int) int {
	s := os.Getenv("GUIDEPUB_BENCH_UPLOADS")
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		b.Fatalf("GUIDEPUB_BENCH_UPLOADS=%q: want a positive number", s)
	}
	return n
}

// s3Counts counts the requests a proxy in front of the store forwarded.
type s3Counts struct{ lists, puts atomic.Int64 }

// s3Proxy forwards to endpoint, counting LIST and object PUT requests.
func s3Proxy(b *testing.B, endpoint string) (string, *s3Counts) {
	target, _ := url.Parse(endpoint)
	c := &s3Counts{}
	rp := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodGet && r.URL.Query().Has("list-type"):
			c.lists.Add(1)
		case r.Method == http.MethodPut && !strings.Contains(r.URL.Path, publish.LeaseFile):
			c.puts.Add(1)
		}
		rp.ServeHTTP(w, r)
	}))
	b.Cleanup(srv.Close)
	return srv.URL, c
}

// generateCorpus writes n generated guides into src and exports them into
// out and priv (no compressed siblings), as a watcher would have before.
func generateCorpus(b *testing.B, n int, src, out, priv string) exporter.Config {
	for i := range n {
		writeBundle(b, filepath.Join(src, fmt.Sprintf("bench-%05d", i)), benchBundle(b, i, "http://127.0.0.1:9/hook"))
	}
	cfg := exporterConfig(src, out, priv)
	cfg.Encodings = []site.Encoding{}
	ex, err := exporter.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := ex.ExportAll(context.Background()); err != nil {
		b.Fatal(err)
	}
	return cfg
}

// guideFiles returns the SHA-256 of each public file (siblings aside) of
// generated guide n in out.
func guideFiles(out string, n int) map[string][32]byte {
	files := map[string][32]byte{}
	for _, id := range []string{benchViewID(n, 0), benchViewID(n, 1), fmt.Sprintf("bench-%05d", n)} {
		for _, dir := range []string{id, site.UnbrandedDir + "/" + id, site.EmbedDir + "/" + id} {
			site.WalkFiles(afero.NewOsFs(), filepath.Join(out, filepath.FromSlash(dir)), func(rel string, _ fs.FileInfo) error {
				if _, _, sib := site.SplitEncoded(rel); !sib {
					data, _ := os.ReadFile(filepath.Join(out, filepath.FromSlash(dir), filepath.FromSlash(rel)))
					files[dir+"/"+rel] = sha256.Sum256(data)
				}
				return nil
			})
		}
	}
	return files
}

// BenchmarkLivePublish measures watch --publish against versitygw over a
// corpus of generated guides already exported (and in the bucket as far
// as the benchmark is concerned: live publishing never lists it): 30 new
// guides renamed into --src one after the other, each timed from the
// rename of its guide.json until its status object is readable in the
// bucket; then one existing guide changed. Objects uploaded are compared
// with the files the exports wrote, and LIST requests counted.
func BenchmarkLivePublish(b *testing.B) {
	for _, n := range benchSizes() {
		b.Run(fmt.Sprintf("guides=%d", n), func(b *testing.B) { benchLivePublish(b, n) })
	}
}

func benchLivePublish(b *testing.B, n int) {
	st := publishtest.StartStore(b)
	publishtest.NewBucket(b, st.Endpoint, "live")
	proxy, counts := s3Proxy(b, st.Endpoint)
	root := b.TempDir()
	src, out, priv := filepath.Join(root, "src"), filepath.Join(root, "public"), filepath.Join(root, "private")
	setup := time.Now()
	cfg := generateCorpus(b, n, src, out, priv)
	b.Logf("setup: %d guides generated and exported in %v", n, time.Since(setup).Round(time.Millisecond))

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	bucket, err := publish.OpenBucket(ctx, "s3://live?endpoint="+proxy+"&use_path_style=true&disable_https=true&region=us-east-1")
	if err != nil {
		b.Fatal(err)
	}
	defer bucket.Close()
	lcfg := publish.DefaultLiveConfig()
	lcfg.From, lcfg.FromDir, lcfg.Bucket, lcfg.OutboxDir = afero.NewOsFs(), out, bucket, outboxDir(exporter.Config{PrivateDir: priv})
	live, err := publish.NewLive(ctx, lcfg)
	if err != nil {
		b.Fatal(err)
	}
	logger := slog.New(slog.DiscardHandler)
	started := make(chan *exporter.Report, 1)
	stopped := make(chan error, 1)
	go func() {
		stopped <- watchAndExport(ctx, watchSetup{
			Exporter: cfg,
			Pipeline: pipeline.New(pipeline.Config{Live: live, Logger: logger}),
			Debounce: watch.DefaultDebounce,
			Quick:    true, // the default of watch and dev
			Logger:   logger,
			Stdout:   io.Discard,
			Stderr:   io.Discard,
			Started:  func(rep *exporter.Report) { started <- rep },
		})
	}()
	var startRSS float64
	select {
	case rep := <-started:
		if rep.Written != 0 {
			b.Fatalf("the catch-up export wrote %d files", rep.Written)
		}
		startRSS, _ = procstat.PeakRSS()
	case err := <-stopped:
		b.Fatal(err)
	}
	counts.lists.Store(0)
	counts.puts.Store(0)

	const uploads = 30
	var lat []time.Duration
	wantPuts := 0
	b.ResetTimer()
	for range b.N {
		for range uploads {
			g := n + len(lat)
			files := benchBundle(b, g, "http://127.0.0.1:9/hook")
			key := benchViewID(g, 0) + "/" + site.StatusFile
			t0 := time.Now()
			writeBundle(b, filepath.Join(src, fmt.Sprintf("bench-%05d", g)), files)
			for {
				if ok, _ := bucket.Exists(ctx, key); ok {
					break
				}
				if time.Since(t0) > 30*time.Second {
					b.Fatalf("%s not in the bucket after 30s", key)
				}
				time.Sleep(2 * time.Millisecond)
			}
			lat = append(lat, time.Since(t0))
			if wctx, c := context.WithTimeout(ctx, 30*time.Second); live.Idle(wctx) != 0 {
				c()
				b.Fatal("uploads still pending")
			} else {
				c()
			}
			wantPuts += len(guideFiles(out, g))
		}
	}
	b.StopTimer()
	// One existing guide changed: only its changed files go up.
	before := counts.puts.Load()
	old := guideFiles(out, 0)
	files := benchBundle(b, 0, "http://127.0.0.1:9/hook")
	files["guide.json"] = []byte(strings.Replace(string(files["guide.json"]), "Living Room", "Sitting Room", 1))
	writeBundle(b, filepath.Join(src, "bench-00000"), files)
	deadline := time.Now().Add(30 * time.Second)
	for counts.puts.Load() == before && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	wctx, c := context.WithTimeout(ctx, 30*time.Second)
	live.Idle(wctx)
	c()
	changedPuts := counts.puts.Load() - before
	changedFiles := 0
	for rel, sum := range guideFiles(out, 0) {
		if old[rel] != sum {
			changedFiles++
		}
	}

	slices.Sort(lat)
	b.ReportMetric(float64(percentile(lat, 50).Milliseconds()), "p50-ms")
	b.ReportMetric(float64(percentile(lat, 99).Milliseconds()), "p99-ms")
	b.ReportMetric(float64(counts.lists.Load()), "LIST-calls")
	b.ReportMetric(float64(before)/float64(wantPuts), "uploads/files")
	b.ReportMetric(float64(changedPuts), "uploads-one-change")
	b.ReportMetric(float64(changedFiles), "files-one-change")
	peak, _ := procstat.PeakRSS()
	b.ReportMetric(peak, "peak-RSS-MB")
	b.Logf("guides %d: %d uploads of new guides: rename→status readable p50 %v p99 %v max %v; %d objects uploaded for %d files written; %d LIST calls; one changed guide: %d objects uploaded for %d files changed; RSS at start %.0f MB, peak %.0f MB",
		n, len(lat), percentile(lat, 50), percentile(lat, 99), lat[len(lat)-1], before, wantPuts, counts.lists.Load(), changedPuts, changedFiles, startRSS, peak)
	cancel()
	<-stopped
}

package publish

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/afero"
	"gocloud.dev/blob"

	"github.com/guidepub/guidepub/exporter/publish/publishtest"
	"github.com/guidepub/guidepub/site"
	"github.com/guidepub/guidepub/site/procstat"
)

// reconcileSizes returns the corpus sizes of BenchmarkReconcile:
// GUIDEPUB_BENCH_RECONCILE_GUIDES (comma-separated), else 1,000 and
// 10,000 (100 alone with -short).
func reconcileSizes() []int {
	if s := os.Getenv("GUIDEPUB_BENCH_RECONCILE_GUIDES"); s != "" {
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

// writeTree writes a public tree of n guides shaped like an export's (two
// views and an alias each: documents, pages, photos), 40 files a guide.
func writeTree(b *testing.B, dir string, n int) int {
	files := 0
	put := func(rel, body string) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			b.Fatal(err)
		}
		files++
	}
	for i := range n {
		for _, id := range []string{fmt.Sprintf("v%06dA", i), fmt.Sprintf("v%06dB", i), fmt.Sprintf("guide-%06d", i)} {
			put(id+"/"+site.StatusFile, `{"status":"ready"}`)
			put(id+"/"+site.SummaryFile, fmt.Sprintf(`{"status":"ready","summary":{"id":%q,"rooms":%d}}`, id, i))
			put(id+"/"+site.AutofillFile, fmt.Sprintf(`{"value":[{"ListingId":%q}]}`, id))
			for _, page := range site.PagePaths(id) {
				put(page, "<!DOCTYPE html><title>"+id+"</title>")
			}
			if id[0] == 'v' {
				for k := range 7 {
					put(fmt.Sprintf("%s/doc/photo-%d.jpg", id, k), strings.Repeat(id, 40+k))
				}
			}
		}
	}
	return files
}

// BenchmarkReconcile measures "guidepub publish" against versitygw with
// nothing changed, over a generated tree already in the bucket: wall time
// and peak RSS, beside the bare listing (the same ListObjectsV2 pages and
// nothing else). Unchanged files are read again (no recorded digests): the
// worst case.
func BenchmarkReconcile(b *testing.B) {
	for _, n := range reconcileSizes() {
		b.Run(fmt.Sprintf("guides=%d", n), func(b *testing.B) { benchReconcile(b, n) })
	}
}

func benchReconcile(b *testing.B, n int) {
	ctx := context.Background()
	st := publishtest.StartStore(b)
	bucket := publishtest.NewBucket(b, st.Endpoint, "reconcile")
	dir := b.TempDir()
	files := writeTree(b, dir, n)
	cfg := DefaultConfig()
	cfg.From, cfg.FromDir, cfg.Bucket, cfg.Jobs = afero.NewOsFs(), dir, bucket, 16
	t0 := time.Now()
	rep, err := Publish(ctx, cfg)
	if err != nil || rep.Uploaded != files {
		b.Fatalf("first publish: %+v, %v", rep, err)
	}
	b.Logf("setup: %d guides, %d objects uploaded in %v", n, files, time.Since(t0).Round(time.Millisecond))

	var listing, reconcile time.Duration
	var rss float64
	b.ResetTimer()
	for range b.N {
		t := time.Now()
		if got := listAll(b, bucket); got != files {
			b.Fatalf("listed %d objects, want %d", got, files)
		}
		listing += time.Since(t)
		procstat.ResetPeakRSS()
		t = time.Now()
		rep, err := Publish(ctx, cfg)
		reconcile += time.Since(t)
		if err != nil || rep.Uploaded != 0 || rep.Unchanged != files {
			b.Fatalf("reconcile: %+v, %v", rep, err)
		}
		peak, _ := procstat.PeakRSS()
		rss = max(rss, peak)
	}
	b.StopTimer()
	ms := func(d time.Duration) float64 { return float64(d.Milliseconds()) / float64(b.N) }
	b.ReportMetric(ms(reconcile), "reconcile-ms")
	b.ReportMetric(ms(listing), "listing-ms")
	b.ReportMetric(rss, "peak-RSS-MB")
	b.Logf("guides %d, %d objects: reconcile %.0f ms (peak RSS %.0f MB), bare listing %.0f ms: %.2f times the listing",
		n, files, ms(reconcile), rss, ms(listing), ms(reconcile)/ms(listing))
	if hugo, rss := hugoDeploy(b, dir, "s3://reconcile?endpoint="+st.Endpoint+"&use_path_style=true&disable_https=true&region=us-east-1"); hugo > 0 {
		b.ReportMetric(float64(hugo.Milliseconds()), "hugo-deploy-ms")
		b.ReportMetric(rss, "hugo-peak-RSS-MB")
		b.Logf("hugo deploy --dryRun on the same tree and bucket: %v (peak RSS %.0f MB)", hugo.Round(time.Millisecond), rss)
	}
}

// hugoDeploy times Hugo's own full reconcile, "hugo deploy --dryRun" (it
// also lists the bucket and compares each local file's MD5 with it), over
// dir against the bucket at url, and returns its peak RSS in MB. It returns
// 0 when no hugo built with deploy support (-tags withdeploy) is on PATH.
func hugoDeploy(b *testing.B, dir, url string) (time.Duration, float64) {
	hugo, err := exec.LookPath("hugo")
	if err != nil {
		b.Log("no hugo on PATH: the Hugo anchor is not measured")
		return 0, 0
	}
	src := b.TempDir()
	cfg := fmt.Sprintf("publishDir = %q\n[deployment]\n[[deployment.targets]]\nname = \"bench\"\nURL = %q\n", dir, url)
	if err := os.WriteFile(filepath.Join(src, "hugo.toml"), []byte(cfg), 0o644); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(hugo, "deploy", "--source", src, "--target", "bench", "--dryRun")
	t := time.Now()
	out, err := cmd.CombinedOutput()
	d := time.Since(t)
	if bytes.Contains(out, []byte("withdeploy")) {
		b.Logf("hugo on PATH has no deploy support (build it with -tags withdeploy): %s", bytes.TrimSpace(out))
		return 0, 0
	}
	if err != nil || !bytes.Contains(out, []byte("No changes required")) {
		b.Fatalf("hugo deploy --dryRun: %v\n%s", err, out)
	}
	rss := 0.0
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = float64(ru.Maxrss) / 1024
	}
	return d, rss
}

// listAll lists every object of b, as the bare floor of a reconcile.
func listAll(tb testing.TB, b *blob.Bucket) int {
	n := 0
	it := b.List(nil)
	for {
		_, err := it.Next(context.Background())
		if err == io.EOF {
			return n
		}
		if err != nil {
			tb.Fatal(err)
		}
		n++
	}
}

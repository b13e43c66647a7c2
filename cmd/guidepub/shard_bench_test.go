package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/guidepub/guidepub/exporter/publish/publishtest"
)

// shardBenchGuides is the corpus of BenchmarkShardedRebuild: generated
// guides shaped like the samples.
const shardBenchGuides = 24

// BenchmarkShardedRebuild measures a full rebuild into two buckets
// (versitygw on loopback, --publish and --private both buckets, empty
// local folders) as one export, and as 4 shards started at once as 4
// processes (on this machine they share its CPUs, where 4 machines would
// not), then the same 4 shards again on empty folders (nothing to upload:
// records from the bucket, every guide rendered again, each object
// compared). It reports each in seconds, and the PUT requests of the
// rerun (0 expected).
func BenchmarkShardedRebuild(b *testing.B) {
	bin := buildGuidepub(b)
	st := publishtest.StartStore(b)
	proxy, counts := s3Proxy(b, st.Endpoint)
	src := filepath.Join(b.TempDir(), "src")
	for i := range shardBenchGuides {
		writeBundle(b, filepath.Join(src, fmt.Sprintf("bench-%05d", i)), benchBundle(b, i, "http://127.0.0.1:9/hook"))
	}
	export := func(pub, priv, work string, extra ...string) error {
		args := append([]string{"export", "--src", src, "--publish", s3URL(pub, proxy), "--private", s3URL(priv, proxy),
			"--work-dir", work, "--jobs", "2"}, extra...)
		cmd := exec.Command(bin, args...)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%v: %v\n%s", extra, err, out)
		}
		return nil
	}
	shards := func(pub, priv, work string) error {
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = export(pub, priv, filepath.Join(work, fmt.Sprint(i)), "--shard", fmt.Sprintf("%d/4", i))
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return err
			}
		}
		return nil
	}
	var one, four, again time.Duration
	var puts int64
	n := 0
	for b.Loop() {
		n++
		names := func(s string) (string, string) {
			return fmt.Sprintf("pub-%s-%d", s, n), fmt.Sprintf("priv-%s-%d", s, n)
		}
		pubA, privA := names("one")
		pubB, privB := names("shards")
		for _, name := range []string{pubA, privA, pubB, privB} {
			publishtest.NewBucket(b, st.Endpoint, name)
		}
		t0 := time.Now()
		if err := export(pubA, privA, b.TempDir()); err != nil {
			b.Fatal(err)
		}
		one += time.Since(t0)
		t0 = time.Now()
		if err := shards(pubB, privB, b.TempDir()); err != nil {
			b.Fatal(err)
		}
		four += time.Since(t0)
		before := counts.puts.Load()
		t0 = time.Now()
		if err := shards(pubB, privB, b.TempDir()); err != nil {
			b.Fatal(err)
		}
		again += time.Since(t0)
		puts += counts.puts.Load() - before
	}
	b.ReportMetric(one.Seconds()/float64(n), "one-export-s")
	b.ReportMetric(four.Seconds()/float64(n), "4-shards-s")
	b.ReportMetric(again.Seconds()/float64(n), "rerun-empty-s")
	b.ReportMetric(float64(puts)/float64(n), "rerun-puts")
}

package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/guidepub/guidepub/fixtures"
	"github.com/guidepub/guidepub/site"
)

// TestWatchPublish: watch --publish file://… uploads the first export, then
// each new upload, under index.html page keys, and serves its metrics.
func TestWatchPublish(t *testing.T) {
	tr := newWatchTrees(t, "301-king-st-e", "https://hooks.example.com/ready")
	bucket := t.TempDir()
	w := startWatch(t, "--src", tr.src, "--out", tr.out, "--private", tr.priv,
		"--debounce", "20ms", "--jobs", "1", "--publish", "file://"+bucket, "--metrics-addr", "127.0.0.1:0",
		// Without the export that follows a quick one, whose changes could
		// reach the outbox after the test's last look at it (the bucket's
		// identity objects do not change then): TestWatchPublishQuick
		// follows the quick bytes to the final ones.
		"--quick=false")
	stderr := &w.stderr
	inBucket := func(key string) func() bool {
		return func() bool { _, err := os.Stat(filepath.Join(bucket, filepath.FromSlash(key))); return err == nil }
	}
	eventually(t, "the first export in the bucket", inBucket("vKT301A/data/status"))
	eventually(t, "the page in the bucket", inBucket("vKT301A/index.html"))

	upload(t, tr.src, "ansi-us-house", sampleBundle(t, "ansi-us-house", "https://hooks.example.com/ready"))
	eventually(t, "the new guide's status in the bucket", inBucket("vMAPLE-main/data/status"))
	eventually(t, "the new guide's summary in the bucket", inBucket("vMAPLE-main/data/summary"))

	m := regexp.MustCompile(`"url":"(http://[^"]+/metrics)"`).FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("no metrics address logged:\n%s", stderr.String())
	}
	var body string
	eventually(t, "no pending objects", func() bool {
		resp, err := http.Get(m[1])
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		body = string(b)
		return strings.Contains(body, "guidepub_publish_pending_objects 0")
	})
	for _, name := range []string{"guidepub_publish_uploads_total", "guidepub_publish_oldest_pending_seconds", `guidepub_publish_failures_total{kind="transient"} 0`} {
		if !strings.Contains(body, name) {
			t.Errorf("metrics lack %s:\n%s", name, body)
		}
	}
	w.stop(t)
	wantOutboxEmpty(t, tr.priv)
}

// TestExportPublish: export --publish uploads what it exported and waits
// for it; a second run uploads nothing new (nothing changed).
func TestExportPublish(t *testing.T) {
	tr := newWatchTrees(t, "301-king-st-e", "https://hooks.example.com/ready")
	bucket := t.TempDir()
	args := []string{"guidepub", "export", "--src", tr.src, "--out", tr.out, "--private", tr.priv, "--publish", "file://" + bucket}
	var stdout, stderr fixtures.SyncBuffer
	if err := run(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("export: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "published to file://") {
		t.Errorf("stdout:\n%s", stdout.String())
	}
	st, err := os.Stat(filepath.Join(bucket, "vKT301A", "data", "status"))
	if err != nil {
		t.Fatal(err)
	}
	if err := run(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if st2, _ := os.Stat(filepath.Join(bucket, "vKT301A", "data", "status")); !st2.ModTime().Equal(st.ModTime()) {
		t.Error("an unchanged export uploaded its status again")
	}
	// The object-and-prefix layout is refused for file://, with what to do.
	err = run(context.Background(), append(args, "--pages-as-objects"), &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "leave the flag out") {
		t.Fatalf("--pages-as-objects on file://: %v", err)
	}
}

// TestWatchPublishQuick: with quick siblings (the default) and a bucket
// holding brotli, an upload's documents reach the bucket first with quick
// bytes, then with the final ones: the bucket converges to what a full
// export's brotli sibling holds, and the outbox empties.
func TestWatchPublishQuick(t *testing.T) {
	tr := newWatchTrees(t, "301-king-st-e", "https://hooks.example.com/ready")
	bucket := t.TempDir()
	w := startWatch(t, "--src", tr.src, "--out", tr.out, "--private", tr.priv,
		"--debounce", "20ms", "--jobs", "1", "--publish", "file://"+bucket, "--publish-encoding", "br")
	eventually(t, "the first export in the bucket", func() bool {
		_, err := os.Stat(filepath.Join(bucket, "vKT301A", "data", "status"))
		return err == nil
	})
	upload(t, tr.src, "ansi-us-house", sampleBundle(t, "ansi-us-house", "https://hooks.example.com/ready"))
	br, _ := site.EncodingByName("br")
	final := func(key string) bool {
		doc, err := os.ReadFile(filepath.Join(tr.out, filepath.FromSlash(key)))
		if err != nil {
			return false
		}
		want, err := br.Encode(nil, doc)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(bucket, filepath.FromSlash(key)))
		return err == nil && bytes.Equal(got, want)
	}
	for _, key := range []string{"vMAPLE-main/data/summary", "vMAPLE-main/reso/autofill", "vMAPLE-main/index.html"} {
		eventually(t, key+" with its final bytes in the bucket", func() bool { return final(key) })
	}
	w.stop(t)
	wantOutboxEmpty(t, tr.priv)
}

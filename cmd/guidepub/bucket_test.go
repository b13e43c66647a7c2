package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/guidepub/guidepub/exporter/publish"
	"github.com/guidepub/guidepub/exporter/publish/publishtest"
	"github.com/guidepub/guidepub/fixtures"
)

// s3URL is the URL of bucket on the versitygw at endpoint.
func s3URL(bucket, endpoint string) string {
	return "s3://" + bucket + "?endpoint=" + endpoint + "&use_path_style=true&disable_https=true&region=us-east-1"
}

// TestExportPublishPermanent: export --publish to a missing bucket, or
// with credentials the store refuses, ends on its own with exit status 1
// and the reason, rather than retrying forever; the uploads wait in the
// outbox.
func TestExportPublishPermanent(t *testing.T) {
	st := publishtest.StartStore(t)
	publishtest.NewBucket(t, st.Endpoint, "exists")
	for _, c := range []struct {
		name, bucket, secret, want string
	}{
		{"missing bucket", "missing", "", "bucket exists"},
		{"refused credentials", "exists", "not-the-secret", "check the credentials"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.secret != "" {
				t.Setenv("AWS_SECRET_ACCESS_KEY", c.secret)
			}
			tr := newWatchTrees(t, "301-king-st-e", "https://hooks.example.com/ready")
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			var stdout, stderr fixtures.SyncBuffer
			start := time.Now()
			err := run(ctx, []string{"guidepub", "export", "--src", tr.src, "--out", tr.out, "--private", tr.priv,
				"--publish", s3URL(c.bucket, st.Endpoint), "--publish-retry-max", "300ms"}, &stdout, &stderr)
			if ctx.Err() != nil {
				t.Fatalf("still running after %v: it retries forever\n%s", time.Since(start), stderr.String())
			}
			var code bytes.Buffer
			if err == nil || exitCode(err, &code) != exitFailure {
				t.Fatalf("err %v, want exit status 1", err)
			}
			msg := err.Error()
			for _, want := range []string{"publish to s3://" + c.bucket, c.want, "wait in"} {
				if !strings.Contains(msg, want) {
					t.Errorf("the error does not say %q: %s", want, msg)
				}
			}
			if left := outboxEntries(t, tr.priv); len(left) == 0 {
				t.Error("the outbox holds nothing to upload later")
			}
		})
	}
}

// outboxEntries returns the guides' entries in priv's outbox.
func outboxEntries(t *testing.T, priv string) []string {
	t.Helper()
	des, _ := os.ReadDir(filepath.Join(priv, "outbox"))
	var out []string
	for _, de := range des {
		if n := de.Name(); strings.HasSuffix(n, ".json") && !strings.HasPrefix(n, "exporting-") {
			out = append(out, n)
		}
	}
	return out
}

// TestBucketURLRedacted: a bucket URL with a password in it (its own, or
// its endpoint's) is never printed with the password: not in errors, logs
// or success lines of export, watch and publish.
func TestBucketURLRedacted(t *testing.T) {
	const secret = "s3cr3t-pa55"
	st := publishtest.StartStore(t)
	publishtest.NewBucket(t, st.Endpoint, "redact")
	withAuth := strings.Replace(st.Endpoint, "http://", "http://user:"+secret+"@", 1)
	good := s3URL("redact", withAuth)
	missing := s3URL("missing", withAuth)
	tr := newWatchTrees(t, "301-king-st-e", "https://hooks.example.com/ready")
	exportArgs := func(url string) []string {
		return []string{"export", "--src", tr.src, "--out", tr.out, "--private", tr.priv, "--publish", url, "--publish-retry-max", "300ms"}
	}
	var printed []string
	check := func(what string, code, want int, out ...string) {
		t.Helper()
		if code != want {
			t.Errorf("%s: exit %d, want %d\n%s", what, code, want, strings.Join(out, "\n"))
		}
		for _, o := range out {
			if strings.Contains(o, secret) {
				t.Errorf("%s printed the password:\n%s", what, o)
			}
		}
		printed = append(printed, out...)
	}

	code, stdout, stderr := runCLI(t, exportArgs(good)...)
	check("export --publish", code, 0, stdout, stderr)
	if !strings.Contains(stdout, "published to s3://redact?endpoint=http://user:xxxxx@") {
		t.Errorf("the success line does not name the bucket, redacted:\n%s", stdout)
	}
	code, stdout, stderr = runCLI(t, exportArgs(missing)...)
	check("export --publish to a missing bucket", code, exitFailure, stdout, stderr)
	for _, bad := range []string{"bogus://user:" + secret + "@bucket", "s3://user:" + secret + "@bucket?disable_https=maybe", "://user:" + secret + "@b"} {
		code, stdout, stderr = runCLI(t, exportArgs(bad)...)
		check("export --publish "+bad, code, exitUsage, stdout, stderr)
		code, stdout, stderr = runCLI(t, "publish", "--from", tr.out, "--to", bad)
		check("publish --to "+bad, code, exitUsage, stdout, stderr)
	}
	code, stdout, stderr = runCLI(t, "publish", "--from", tr.out, "--to", good)
	check("publish", code, 0, stdout, stderr)
	code, stdout, stderr = runCLI(t, "publish", "--from", tr.out, "--to", missing)
	check("publish to a missing bucket", code, exitFailure, stdout, stderr)

	// watch logs its failures to a missing bucket, and keeps running.
	ctx, cancel := context.WithCancel(context.Background())
	var wout, werr fixtures.SyncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"guidepub", "watch", "--src", tr.src, "--out", tr.out, "--private", tr.priv,
			"--publish", missing, "--publish-retry-max", "300ms"}, &wout, &werr)
	}()
	eventually(t, "watch to log the failure", func() bool {
		return strings.Contains(werr.String(), "kind=permanent") || strings.Contains(werr.String(), `"kind":"permanent"`)
	})
	cancel()
	if err := <-done; err != nil {
		t.Errorf("watch: %v", err)
	}
	check("watch --publish to a missing bucket", 0, 0, wout.String(), werr.String())
	if all := strings.Join(printed, "\n"); !strings.Contains(all, "xxxxx") {
		t.Errorf("no redacted URL printed at all:\n%s", all)
	}
}

// requestCounter is a proxy in front of an S3 endpoint that counts the
// PUT requests of objects (the lease aside).
type requestCounter struct {
	URL  string
	puts atomic.Int64
}

func newRequestCounter(t *testing.T, endpoint string) *requestCounter {
	t.Helper()
	target, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	rc := &requestCounter{}
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut && !strings.Contains(r.URL.Path, publish.LeaseFile) {
			rc.puts.Add(1)
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	rc.URL = srv.URL
	return rc
}

// TestTwoWatchersOneTree: two "watch --publish" processes on one tree and
// one bucket on the same host: the second says that the first publishes
// and waits, uploading nothing, until the first stops; then it takes
// over and publishes what arrives.
func TestTwoWatchersOneTree(t *testing.T) {
	bin := buildGuidepub(t)
	st := publishtest.StartStore(t)
	publishtest.NewBucket(t, st.Endpoint, "two")
	tr := newWatchTrees(t, "301-king-st-e", "https://hooks.example.com/ready")
	start := func() (*exec.Cmd, *requestCounter, *fixtures.SyncBuffer) {
		rc := newRequestCounter(t, st.Endpoint)
		cmd := exec.Command(bin, "watch", "--src", tr.src, "--out", tr.out, "--private", tr.priv,
			"--debounce", "50ms", "--publish", s3URL("two", rc.URL), "--publish-retry-max", "500ms")
		stderr := &fixtures.SyncBuffer{}
		cmd.Stdout, cmd.Stderr = stderr, stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd, rc, stderr
	}
	first, rc1, log1 := start()
	eventually(t, "the first watcher to publish", func() bool { return strings.Contains(log1.String(), "watching for uploads") && rc1.puts.Load() > 0 })
	second, rc2, log2 := start()
	eventually(t, "the second watcher to say that it waits", func() bool {
		return strings.Contains(log2.String(), "another guidepub process publishes from this private tree")
	})
	if !strings.Contains(log2.String(), "pid "+strconv.Itoa(first.Process.Pid)) {
		t.Errorf("the second watcher does not name the first:\n%s", log2.String())
	}

	// A new bundle: the first uploads it, the second nothing.
	upload(t, tr.src, "ansi-us-house", sampleBundle(t, "ansi-us-house", "https://hooks.example.com/ready"))
	objects := func(rc *requestCounter) int64 { return rc.puts.Load() }
	before := objects(rc1)
	eventually(t, "the first watcher to upload the new guide", func() bool { return objects(rc1) > before+10 })
	time.Sleep(500 * time.Millisecond)
	if n := objects(rc2); n != 0 {
		t.Fatalf("the second watcher uploaded %d objects while the first published\n%s", n, log2.String())
	}

	// The first stops: the second takes over.
	first.Process.Signal(syscall.SIGTERM)
	if err := first.Wait(); err != nil {
		t.Fatalf("the first watcher: %v\n%s", err, log1.String())
	}
	eventually(t, "the second watcher to take over", func() bool { return strings.Contains(log2.String(), "watching for uploads") })
	upload(t, tr.src, "rue-saint-denis", sampleBundle(t, "rue-saint-denis", "https://hooks.example.com/ready"))
	eventually(t, "the second watcher to upload the next guide", func() bool { return objects(rc2) > 10 })
	second.Process.Signal(syscall.SIGTERM)
	if err := second.Wait(); err != nil {
		t.Fatalf("the second watcher: %v\n%s", err, log2.String())
	}
}

package pipeline

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/exporter"
	"github.com/guidepub/guidepub/exporter/publish"
	"github.com/guidepub/guidepub/exporter/publish/publishtest"
	"github.com/guidepub/guidepub/site"
)

// helperEnv names the mode of this test binary run as a helper process.
const helperEnv = "GUIDEPUB_PIPELINE_HELPER"

// TestMain runs the helper process when asked, else the tests.
func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		if err := hideHelper(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	os.Exit(m.Run())
}

// stepper numbers the steps of the helper process that change something
// (a file written, renamed or removed in a tree or the outbox, an object
// uploaded or deleted) and stops the process before step killAt: it
// prints "ready" and waits to be killed.
type stepper struct {
	killAt int64
	n      atomic.Int64
	mu     sync.Mutex
	kinds  []string
}

func (s *stepper) step(kind string) {
	n := s.n.Add(1)
	s.mu.Lock()
	s.kinds = append(s.kinds, kind)
	s.mu.Unlock()
	if n == s.killAt {
		fmt.Printf("ready %d %s\n", n, kind)
		select {} // SIGKILL comes
	}
}

// stepFs is a file system whose changes are steps of kind area.
type stepFs struct {
	afero.Fs
	s    *stepper
	area string
}

func (f stepFs) OpenFile(name string, flag int, perm os.FileMode) (afero.File, error) {
	if flag&(os.O_WRONLY|os.O_RDWR|os.O_CREATE|os.O_TRUNC) != 0 {
		f.s.step(f.area + "-write")
	}
	return f.Fs.OpenFile(name, flag, perm)
}

func (f stepFs) Create(name string) (afero.File, error) {
	return f.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o666)
}

func (f stepFs) Rename(o, n string) error {
	f.s.step(f.area + "-write")
	return f.Fs.Rename(o, n)
}

func (f stepFs) Remove(name string) error {
	f.s.step(f.area + "-remove")
	return f.Fs.Remove(name)
}

func (f stepFs) RemoveAll(name string) error {
	f.s.step(f.area + "-remove")
	return f.Fs.RemoveAll(name)
}

// hideHelper is the helper process: a watcher's export of the sample
// bundle (whose hide the test wrote) with live publishing to the bucket,
// every step counted (see stepper); it prints the steps' kinds as JSON
// when it was not stopped.
func hideHelper() error {
	ctx := context.Background()
	dir, endpoint, bucket := os.Getenv("HELPER_DIR"), os.Getenv("HELPER_ENDPOINT"), os.Getenv("HELPER_BUCKET")
	killAt, _ := strconv.ParseInt(os.Getenv("HELPER_KILL_AT"), 10, 64)
	s := &stepper{killAt: killAt}
	target, err := url.Parse(endpoint)
	if err != nil {
		return err
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, publish.LeaseFile) {
			switch r.Method {
			case http.MethodPut:
				s.step("bucket-put")
			case http.MethodDelete:
				s.step("bucket-delete")
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	defer srv.Close()
	b, err := publish.OpenBucket(ctx, "s3://"+bucket+"?endpoint="+srv.URL+"&use_path_style=true&disable_https=true&region=us-east-1")
	if err != nil {
		return err
	}
	tr := trees{filepath.Join(dir, "src"), filepath.Join(dir, "public"), filepath.Join(dir, "private")}
	osfs := afero.NewOsFs()
	cfg := exporter.DefaultConfig()
	cfg.Src, cfg.SrcDir, cfg.OutDir, cfg.PrivateDir = osfs, tr.src, tr.out, tr.priv
	cfg.Out, cfg.Private = stepFs{osfs, s, "public"}, stepFs{osfs, s, "private"}
	cfg.Encodings = []site.Encoding{site.Gzip}
	ex, err := exporter.New(cfg)
	if err != nil {
		return err
	}
	lcfg := tr.liveConfig(b, nil)
	lcfg.OutboxFs = stepFs{osfs, s, "outbox"}
	live, err := publish.NewLive(ctx, lcfg)
	if err != nil {
		return err
	}
	p := New(Config{Live: live})
	go p.Run(ctx)
	if _, _, err := p.ExportGuide(ctx, func() (*exporter.GuideResult, error) { return ex.ExportBundle(ctx, sampleFolder) }); err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if n := p.Idle(wctx); n != 0 {
		return fmt.Errorf("%d guides pending", n)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return json.NewEncoder(os.Stdout).Encode(s.kinds)
}

// runHelper runs the helper process over the trees in dir and bucket,
// stopped and killed (SIGKILL) before step killAt (0: never), and
// returns the kinds of the steps it made when it ran to the end.
func runHelper(t *testing.T, dir, endpoint, bucket string, killAt int) []string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=1", "HELPER_DIR="+dir, "HELPER_ENDPOINT="+endpoint,
		"HELPER_BUCKET="+bucket, "HELPER_KILL_AT="+strconv.Itoa(killAt))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	if killAt > 0 {
		cmd.Process.Kill() // SIGKILL: no clean-up runs
		cmd.Wait()
		if !strings.HasPrefix(line, "ready ") {
			t.Fatalf("helper stopped before step %d: %q %s", killAt, line, stderr.String())
		}
		return nil
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("helper: %v %s", err, stderr.String())
	}
	var kinds []string
	if err := json.Unmarshal([]byte(line), &kinds); err != nil {
		t.Fatalf("helper said %q: %v %s", line, err, stderr.String())
	}
	return kinds
}

// copyTree copies the folder from to to, keeping modification times (the
// records compare them).
func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		if err := out.Close(); err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		return os.Chtimes(dst, fi.ModTime(), fi.ModTime())
	})
	if err != nil {
		t.Fatal(err)
	}
}

// killPoints returns the steps to kill before: the first of every run of
// steps of one kind, and the last step of each longer run (1-based).
func killPoints(kinds []string) []int {
	var out []int
	for i := range kinds {
		first := i == 0 || kinds[i] != kinds[i-1]
		last := i > 0 && !first && (i == len(kinds)-1 || kinds[i+1] != kinds[i])
		if first || last {
			out = append(out, i+1)
		}
	}
	return out
}

// TestKilledDuringHide: a watcher publishing live is killed (SIGKILL) at
// every step of the export of a hide (photos of one view, the address of
// another): before its intent, while it writes and removes files, before
// and after its record, before its outbox entry, during the uploads and
// deletions. Restarted (as watch starts: the catch-up export with the
// outbox and reconcile beside it), the bucket equals the tree within
// seconds for every key guidepub owns, the hidden photos and street are
// gone from it, another writer's objects are still there and the outbox
// is empty.
func TestKilledDuringHide(t *testing.T) {
	if testing.Short() {
		t.Skip("dozens of processes")
	}
	ctx := context.Background()
	st := publishtest.StartStore(t)
	// The state before the hide: exported, published, plus another
	// writer's objects; each run starts from a copy of it.
	base := t.TempDir()
	tr0 := newTrees(t, base)
	if _, err := tr0.exporter(t, afero.NewOsFs(), afero.NewOsFs()).ExportAll(ctx); err != nil {
		t.Fatal(err)
	}
	hide(t, tr0.src)
	run := 0
	fresh := func() (trees, string) {
		run++
		dir := t.TempDir()
		copyTree(t, base, dir)
		name := fmt.Sprintf("killed-%d", run)
		b := publishtest.NewBucket(t, st.Endpoint, name)
		cfg := publish.DefaultConfig()
		cfg.From, cfg.FromDir, cfg.Bucket = afero.NewOsFs(), filepath.Join(dir, "public"), b
		if _, err := publish.Publish(ctx, cfg); err != nil {
			t.Fatal(err)
		}
		putForeign(t, b)
		return trees{filepath.Join(dir, "src"), filepath.Join(dir, "public"), filepath.Join(dir, "private")}, name
	}

	tr, name := fresh()
	kinds := runHelper(t, filepath.Dir(tr.src), st.Endpoint, name, 0)
	points := killPoints(kinds)
	t.Logf("%d steps, killed before each of %v", len(kinds), points)
	for _, at := range points {
		t.Run(fmt.Sprintf("before step %d %s", at, kinds[at-1]), func(t *testing.T) {
			tr, name := fresh()
			runHelper(t, filepath.Dir(tr.src), st.Endpoint, name, at)
			restart(t, tr, name, st.Endpoint)
		})
	}
}

// restart does what watch does at start over tr and bucket name: the
// outbox and any reconcile beside the catch-up export; it fails unless
// the bucket converges within seconds.
func restart(t *testing.T, tr trees, name, endpoint string) {
	t.Helper()
	ctx := context.Background()
	b, err := publish.OpenBucket(ctx, "s3://"+name+"?endpoint="+endpoint+"&use_path_style=true&disable_https=true&region=us-east-1")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	start := time.Now()
	live, err := publish.NewLive(ctx, tr.liveConfig(b, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	p := New(Config{Live: live})
	runPipeline(t, p)
	ex := tr.exporter(t, afero.NewOsFs(), afero.NewOsFs())
	if _, _, err := p.ExportAll(ctx, func(each func(exporter.GuideResult)) (*exporter.Report, error) { return ex.ExportAllEach(ctx, each) }); err != nil {
		t.Fatal(err)
	}
	idle(t, p, 30*time.Second)
	t.Logf("converged %v after the restart", time.Since(start).Round(time.Millisecond))
	converged(t, tr, b)
	if left := outboxLeft(tr); len(left) != 0 {
		t.Errorf("left in the outbox: %v", left)
	}
}

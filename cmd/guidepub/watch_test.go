package main

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/exporter"
	"github.com/guidepub/guidepub/exporter/pipeline"
	"github.com/guidepub/guidepub/exporter/records"
	"github.com/guidepub/guidepub/exporter/records/recordstest"
	"github.com/guidepub/guidepub/exporter/watch"
	"github.com/guidepub/guidepub/fixtures"
	"github.com/guidepub/guidepub/sidecar"
	"github.com/guidepub/guidepub/sidecar/store/storetest"
	"github.com/guidepub/guidepub/site"
	"github.com/guidepub/guidepub/site/clock/clocktest"
)

// watchTrees is a source folder holding one sample bundle, and empty
// public and private trees.
type watchTrees struct{ src, out, priv string }

func newWatchTrees(t *testing.T, folder, hookURL string) watchTrees {
	t.Helper()
	root := t.TempDir()
	tr := watchTrees{filepath.Join(root, "src"), filepath.Join(root, "out"), filepath.Join(root, "private")}
	upload(t, tr.src, folder, sampleBundle(t, folder, hookURL))
	for _, d := range []string{tr.out, tr.priv} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return tr
}

// exporterConfig is exporter.DefaultConfig over the trees, on the
// operating system's file system.
func exporterConfig(src, out, priv string) exporter.Config {
	osfs := afero.NewOsFs()
	cfg := exporter.DefaultConfig()
	cfg.Src, cfg.SrcDir, cfg.Out, cfg.OutDir, cfg.Private, cfg.PrivateDir = osfs, src, osfs, out, osfs, priv
	return cfg
}

func (tr watchTrees) exporter(t *testing.T) *exporter.Exporter {
	t.Helper()
	ex, err := exporter.New(exporterConfig(tr.src, tr.out, tr.priv))
	if err != nil {
		t.Fatal(err)
	}
	return ex
}

// newExportHandler is the watcher's handler over ex, queueing ready events
// through ev.
func newExportHandler(ex *exporter.Exporter, ev *sidecar.Events, logger *slog.Logger) *exportHandler {
	return &exportHandler{logger: logger, ex: ex, pipe: pipeline.New(pipeline.Config{Events: eventQueue{ev, logger}, Logger: logger})}
}

func TestExportHandlerQueuesOncePerRevision(t *testing.T) {
	for _, dialect := range []string{"sqlite", "postgres"} {
		t.Run(dialect, func(t *testing.T) {
			dsn := storetest.SQLite(t)
			if dialect == "postgres" {
				dsn = storetest.Postgres(t)
			}
			testQueuesOncePerRevision(t, dsn)
		})
	}
}

func testQueuesOncePerRevision(t *testing.T, dsn string) {
	const folder, guideID = "301-king-st-e", "gKT301KINGE1"
	ctx := context.Background()
	tr := newWatchTrees(t, folder, "https://hooks.example.com/ready")
	logger := slog.New(slog.DiscardHandler)
	parts, err := openSidecar(ctx, newSidecarConfig(tr.priv, dsn, logger))
	if err != nil {
		t.Fatal(err)
	}
	defer parts.Store.Close()
	h := newExportHandler(tr.exporter(t), parts.Events, logger)
	queued := func() int {
		t.Helper()
		ds, err := parts.Queue.Deliveries(ctx, guideID)
		if err != nil {
			t.Fatal(err)
		}
		return len(ds)
	}
	steps := []struct {
		name   string
		change func()
		want   int // deliveries queued in all after the step
	}{
		{"first export", func() {}, 1},
		{"identical content", func() {}, 1},
		{"touched but identical", func() {
			now := time.Now().Add(time.Minute)
			os.Chtimes(filepath.Join(tr.src, folder, "guide.json"), now, now)
		}, 1},
		{"changed content", func() {
			p := filepath.Join(tr.src, folder, "guide.json")
			data, _ := os.ReadFile(p)
			writeRenamed(t, p, bytes.Replace(data, []byte(`"WO1234"`), []byte(`"WO1235"`), 1))
		}, 2},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			st.change()
			if _, err := h.Changed(ctx, folder); err != nil {
				t.Fatal(err)
			}
			if got := queued(); got != st.want {
				t.Errorf("deliveries queued = %d, want %d", got, st.want)
			}
		})
	}

	// A second watcher (its own process, store connection and trees) exports
	// the same bundle: same revision, nothing queued twice.
	tr2 := watchTrees{tr.src, filepath.Join(t.TempDir(), "out"), filepath.Join(t.TempDir(), "private")}
	parts2, err := openSidecar(ctx, newSidecarConfig(tr2.priv, dsn, logger))
	if err != nil {
		t.Fatal(err)
	}
	defer parts2.Store.Close()
	h2 := newExportHandler(tr2.exporter(t), parts2.Events, logger)
	if _, err := h2.Changed(ctx, folder); err != nil {
		t.Fatalf("second watcher's export: %v", err)
	}
	if got := queued(); got != 2 || len(h2.pipe.Failed()) != 0 {
		t.Errorf("after a second watcher: deliveries queued = %d (unsent %v), want 2", got, h2.pipe.Failed())
	}

	// Removed unpublishes.
	if err := os.RemoveAll(filepath.Join(tr.src, folder)); err != nil {
		t.Fatal(err)
	}
	if err := h.Removed(ctx, folder); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(tr.out, "vKT301A", site.StatusFile)); !os.IsNotExist(err) {
		t.Errorf("status of a removed bundle: %v, want it gone", err)
	}
}

func TestExportHandlerRetriesUnqueuedEvent(t *testing.T) {
	const folder, guideID = "301-king-st-e", "gKT301KINGE1"
	ctx := context.Background()
	tr := newWatchTrees(t, folder, "https://hooks.example.com/ready")
	parts, err := openSidecar(ctx, newSidecarConfig(tr.priv, filepath.Join(t.TempDir(), "guidepub.db"), slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	h := newExportHandler(tr.exporter(t), parts.Events, slog.New(slog.NewTextHandler(&log, nil)))
	parts.Store.Close() // the store is unreachable
	before := time.Now()
	next, err := h.Changed(ctx, folder)
	if err != nil {
		t.Fatalf("the export itself must succeed: %v", err)
	}
	if next.Before(before) || next.After(time.Now().Add(pipeline.DefaultEnqueueRetry)) {
		t.Errorf("next = %v, want within %v", next, pipeline.DefaultEnqueueRetry)
	}
	if !slices.Equal(h.pipe.Failed(), []string{guideID}) || !strings.Contains(log.String(), "ready event not queued") {
		t.Errorf("unsent = %v, log:\n%s", h.pipe.Failed(), log.String())
	}
}

func TestWatchCommand(t *testing.T) {
	const folder = "301-king-st-e"
	tr := newWatchTrees(t, folder, "https://hooks.example.com/ready")
	dsn := filepath.Join(t.TempDir(), "guidepub.db")
	ctx := context.Background()
	w := startWatch(t, "--src", tr.src, "--out", tr.out, "--private", tr.priv,
		"--store", dsn, "--debounce", "20ms", "--jobs", "1")
	stdout, stderr := &w.stdout, &w.stderr
	status := filepath.Join(tr.out, "301-king-st-e", "data", "status")
	eventually(t, "the first export", func() bool { _, err := os.Stat(status); return err == nil })
	eventually(t, "the watcher", func() bool { return strings.Contains(stderr.String(), "watching for uploads") })

	// A second view appears in the bundle: exported by the watcher.
	p := filepath.Join(tr.src, folder, "guide.json")
	data, _ := os.ReadFile(p)
	writeRenamed(t, p, bytes.Replace(data, []byte(`"vKT301B"`), []byte(`"vKT301C"`), 1))
	eventually(t, "the second ready event", func() bool {
		return strings.Count(stderr.String(), `"msg":"ready event queued"`) == 2
	})
	if _, err := os.Stat(filepath.Join(tr.out, "vKT301C", "data", "status")); err != nil {
		t.Errorf("the new view: %v", err)
	}
	// The upload's quick compressed siblings are replaced soon after: the
	// tree becomes what an export of the bundle writes, byte for byte.
	ref := watchTrees{tr.src, filepath.Join(t.TempDir(), "out"), filepath.Join(t.TempDir(), "private")}
	if _, err := ref.exporter(t).ExportAll(ctx); err != nil {
		t.Fatal(err)
	}
	want := treeFiles(t, ref.out)
	eventually(t, "the final compressed bytes", func() bool { return maps.EqualFunc(treeFiles(t, tr.out), want, bytes.Equal) })
	w.stop(t)
	if _, err := os.Stat(filepath.Join(tr.out, "vKT301B", "data", "status")); !os.IsNotExist(err) {
		t.Errorf("the renamed view's old files: %v, want gone", err)
	}
	if n := strings.Count(stderr.String(), `"msg":"ready event queued"`); n != 2 {
		t.Errorf("ready events queued = %d, want 2 (first export, change):\n%s", n, stderr.String())
	}
	if !strings.Contains(stdout.String(), "exported 1 guides") {
		t.Errorf("no summary of the first export: %q", stdout.String())
	}
}

// treeFiles returns every file under dir by slash path.
func treeFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)] = data
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestWatchCommandUsage(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"no src", []string{"watch", "--out", "o", "--private", "p"}},
		{"bad poll", []string{"watch", "--src", ".", "--out", "o", "--private", "p", "--poll", "often"}},
		{"src not a folder", []string{"watch", "--src", "/nonexistent/guidepub", "--out", "o", "--private", "p"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, tt.args...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d; stderr: %s", code, exitUsage, stderr)
			}
		})
	}
}

// TestWatchZeroDebounce checks that --debounce 0 is refused, naming the
// flag, rather than read as the default.
func TestWatchZeroDebounce(t *testing.T) {
	tr := newWatchTrees(t, "rue-saint-denis", "https://hooks.example.com/ready")
	code, _, stderr := runCLI(t, "watch", "--src", tr.src, "--out", tr.out, "--private", tr.priv, "--debounce", "0")
	if code != exitUsage || !strings.Contains(stderr, "--debounce: must be positive") {
		t.Errorf("exit %d, stderr %q; want %d and the --debounce problem", code, stderr, exitUsage)
	}
}

func TestWatchExpiry(t *testing.T) {
	const folder = "rue-saint-denis"
	tr := newWatchTrees(t, folder, "https://hooks.example.com/ready")
	clock := clocktest.NewClock(time.Date(2099, 12, 31, 23, 0, 0, 0, time.UTC)) // the view expires at 23:59:59
	ecfg := exporterConfig(tr.src, tr.out, tr.priv)
	ecfg.Clock = clock
	started := goWatch(t, ecfg)
	<-started
	status := filepath.Join(tr.out, "vSTDENIS-2099", "data", "status")
	read := func() string { b, _ := os.ReadFile(status); return string(b) }
	if got := read(); !strings.Contains(got, `"ready"`) {
		t.Fatalf("before expiry: %s", got)
	}
	clock.Advance(59*time.Minute + 58*time.Second)
	if got := read(); !strings.Contains(got, `"ready"`) {
		t.Fatalf("a second before expiry: %s", got)
	}
	eventually(t, "the view to lock at its expiry", func() bool {
		clock.Advance(time.Second) // the scheduled export may still be registering its timer
		return strings.Contains(read(), `"locked"`)
	})
}

// TestWatchQueuesEventLostBeforeStart: a guide published without its
// event being queued (a process stopped in between) gets it queued when a
// watcher starts, once: a second start queues nothing.
func TestWatchQueuesEventLostBeforeStart(t *testing.T) {
	const folder = "301-king-st-e"
	tr := newWatchTrees(t, folder, "https://hooks.example.com/ready")
	if code, _, stderr := runCLI(t, "export", "--src", tr.src, "--out", tr.out, "--private", tr.priv); code != 0 {
		t.Fatalf("export: exit %d\n%s", code, stderr)
	}
	dsn := filepath.Join(t.TempDir(), "guidepub.db")
	for start, want := range []int{1, 0} {
		w := startWatch(t, "--src", tr.src, "--out", tr.out, "--private", tr.priv, "--store", dsn, "--jobs", "1")
		stdout, stderr := &w.stdout, &w.stderr
		eventually(t, "the watcher", func() bool { return strings.Contains(stderr.String(), "watching for uploads") })
		w.stop(t)
		if n := strings.Count(stderr.String(), `"msg":"ready event queued"`); n != want {
			t.Errorf("start %d: %d ready events queued, want %d\n%s", start+1, n, want, stderr.String())
		}
		if !strings.Contains(stdout.String(), "0 files written") {
			t.Errorf("start %d: the content did not change, yet: %s", start+1, stdout.String())
		}
	}
}

// TestBadWatchFlagsBeforeAnything: a bad flag value (--debounce, --poll,
// a limit, an encoding) is reported before anything starts: dev reports it
// even when its port is taken (it listens only after), and neither dev
// nor watch creates its work folder or store first.
func TestBadWatchFlagsBeforeAnything(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	tr := newWatchTrees(t, "rue-saint-denis", "https://hooks.example.com/ready")
	work := filepath.Join(t.TempDir(), "work")
	store := filepath.Join(t.TempDir(), "guidepub.db")
	for _, args := range [][]string{
		{"dev", "--addr", busy.Addr().String(), "--work-dir", work, "--debounce", "0"},
		{"dev", "--addr", busy.Addr().String(), "--work-dir", work, "--poll", "-1s"},
		{"dev", "--addr", busy.Addr().String(), "--work-dir", work, "--max-rooms", "0"},
		{"dev", "--addr", busy.Addr().String(), "--work-dir", work, "--max-attempts", "0"},
		{"watch", "--src", tr.src, "--out", tr.out, "--private", tr.priv, "--store", store, "--debounce", "0"},
	} {
		code, _, stderr := runCLI(t, args...)
		flag := args[len(args)-2]
		if code != exitUsage || !strings.Contains(stderr, flag) {
			t.Errorf("%v: exit %d, want %d naming %s\n%s", args, code, exitUsage, flag, stderr)
		}
		for _, p := range []string{work, store} {
			if _, err := os.Stat(p); err == nil {
				t.Errorf("%v created %s before checking its flags", args, p)
			}
		}
	}
}

// watchRun is a "guidepub watch" running in this process.
type watchRun struct {
	cancel         context.CancelFunc
	done           chan error
	stdout, stderr fixtures.SyncBuffer
}

// startWatch runs "guidepub watch" with args until stop.
func startWatch(t *testing.T, args ...string) *watchRun {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w := &watchRun{cancel: cancel, done: make(chan error, 1)}
	go func() { w.done <- run(ctx, append([]string{"guidepub", "watch"}, args...), &w.stdout, &w.stderr) }()
	return w
}

// stop stops the watch and fails the test when it returns an error or
// takes more than 30 seconds.
func (w *watchRun) stop(t *testing.T) {
	t.Helper()
	w.cancel()
	select {
	case err := <-w.done:
		if err != nil {
			t.Fatalf("watch: %v\n%s", err, w.stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("watch did not stop")
	}
}

// wantOutboxEmpty checks that the live publisher's outbox in the private
// tree priv holds nothing but its lock file.
func wantOutboxEmpty(t *testing.T, priv string) {
	t.Helper()
	if des, _ := os.ReadDir(filepath.Join(priv, "outbox")); len(des) != 1 || des[0].Name() != ".lock" {
		t.Errorf("outbox left: %v (only the lock file stays)", des)
	}
}

// TestUploadAtStartDoesNotWaitForRecords: an upload made as the watcher
// starts is published while the exporter is still reading its records
// (what grows with the corpus): its ids are checked through the records'
// ids index. The records' folder is held closed until the upload's status
// is ready: a watcher whose exports waited for every record would never
// publish it, and the test would time out.
func TestUploadAtStartDoesNotWaitForRecords(t *testing.T) {
	tr := newWatchTrees(t, "301-king-st-e", "https://hooks.example.com/ready")
	if _, err := tr.exporter(t).ExportAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	staged := filepath.Join(tr.src, "rue-saint-denis.partial")
	upload(t, tr.src, filepath.Base(staged), sampleBundle(t, "rue-saint-denis", "https://hooks.example.com/ready"))
	priv := recordstest.Hold(afero.NewOsFs(), filepath.Join(tr.priv, records.RecordsDir(0, 1)))
	t.Cleanup(priv.Release)
	ecfg := exporterConfig(tr.src, tr.out, tr.priv)
	ecfg.Private = priv
	started := goWatch(t, ecfg)
	select {
	case <-priv.Reached():
	case <-time.After(20 * time.Second):
		t.Fatal("the exporter never read its records")
	}
	if err := os.Rename(staged, filepath.Join(tr.src, "rue-saint-denis")); err != nil {
		t.Fatal(err)
	}
	status := filepath.Join(tr.out, "vSTDENIS", "data", "status")
	published := eventuallyOr(20*time.Second, func() bool {
		b, err := os.ReadFile(status)
		return err == nil && strings.Contains(string(b), `"ready"`)
	})
	priv.Release()
	if !published {
		t.Fatal("the upload was not published while the records were read")
	}
	<-started
}

// eventuallyOr reports whether cond became true within d.
func eventuallyOr(d time.Duration, cond func() bool) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// goWatch runs watchAndExport over ecfg at the default debounce until the
// test ends (then checks it returned nil), and returns what is closed once
// it has started.
func goWatch(t *testing.T, ecfg exporter.Config) <-chan struct{} {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- watchAndExport(ctx, watchSetup{
			Exporter: ecfg,
			Debounce: watch.DefaultDebounce,
			Logger:   slog.New(slog.DiscardHandler),
			Stdout:   io.Discard,
			Stderr:   io.Discard,
			Started:  func(*exporter.Report) { close(started) },
		})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return started
}

package pipeline

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/afero"
	"gocloud.dev/blob"

	"github.com/guidepub/guidepub/exporter"
	"github.com/guidepub/guidepub/exporter/publish"
	"github.com/guidepub/guidepub/exporter/publish/publishtest"
	"github.com/guidepub/guidepub/fixtures"
	"github.com/guidepub/guidepub/site"
)

// sampleFolder is the bundle the live publishing tests hide features of:
// two views, vKT301A (the default, nothing hidden) and vKT301B.
const sampleFolder = "301-king-st-e"

// foreignKeys are objects another tool put under the bucket's prefix.
var foreignKeys = []string{"robots.txt", "assets/app.js", "vKT301B/doc/photos/notes.txt"}

// trees are a source folder holding the sample bundle and the public and
// private trees exported from it.
type trees struct{ src, out, priv string }

func newTrees(t testing.TB, dir string) trees {
	t.Helper()
	tr := trees{filepath.Join(dir, "src"), filepath.Join(dir, "public"), filepath.Join(dir, "private")}
	files, err := fixtures.BundleFiles(sampleFolder)
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range files {
		p := filepath.Join(tr.src, sampleFolder, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return tr
}

// exporter returns an exporter of tr writing through pub and priv.
func (tr trees) exporter(t testing.TB, pub, priv afero.Fs) *exporter.Exporter {
	t.Helper()
	cfg := exporter.DefaultConfig()
	cfg.Src, cfg.SrcDir, cfg.Out, cfg.OutDir, cfg.Private, cfg.PrivateDir = afero.NewOsFs(), tr.src, pub, tr.out, priv, tr.priv
	cfg.Encodings = []site.Encoding{site.Gzip}
	ex, err := exporter.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return ex
}

// liveConfig returns the live publishing settings of tr to b, with short
// retries.
func (tr trees) liveConfig(b *blob.Bucket, logs io.Writer) publish.LiveConfig {
	cfg := publish.DefaultLiveConfig()
	cfg.From, cfg.FromDir, cfg.Bucket = afero.NewOsFs(), tr.out, b
	cfg.OutboxDir = filepath.Join(tr.priv, site.OutboxDir)
	cfg.RetryMin, cfg.RetryMax = 20*time.Millisecond, 200*time.Millisecond
	if logs != nil {
		cfg.Logger = slog.New(slog.NewTextHandler(logs, nil))
	}
	return cfg
}

// hide hides the photos of view vKT301B and the address of vKT301A in the
// sample bundle under src (the export is left to the caller).
func hide(t testing.TB, src string) {
	t.Helper()
	p := filepath.Join(src, sampleFolder, "guide.json")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range [][2]string{
		{`"hidden": [` + "\n" + `        "address",`, `"hidden": [` + "\n" + `        "photos",` + "\n" + `        "address",`},
		{`"viewId": "vKT301A",` + "\n" + `      "default": true`, `"viewId": "vKT301A",` + "\n" + `      "default": true,` + "\n" + `      "hidden": ["address"]`},
	} {
		if !bytes.Contains(data, []byte(r[0])) {
			t.Fatalf("%s has no %q", p, r[0])
		}
		data = bytes.Replace(data, []byte(r[0]), []byte(r[1]), 1)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// putForeign writes foreignKeys to b as another tool would: no guidepub
// metadata.
func putForeign(t testing.TB, b *blob.Bucket) {
	t.Helper()
	for _, k := range foreignKeys {
		if err := b.WriteAll(context.Background(), k, []byte("not guidepub's"), nil); err != nil {
			t.Fatal(err)
		}
	}
}

// converged fails unless, with the hide exported, bucket b holds exactly
// the tree for every key guidepub owns (a publish would change nothing),
// another writer's objects are still there, and neither the photos of
// vKT301B nor the street of vKT301A's documents and page are in b.
func converged(t testing.TB, tr trees, b *blob.Bucket) {
	t.Helper()
	ctx := context.Background()
	cfg := publish.DefaultConfig()
	cfg.From, cfg.FromDir, cfg.Bucket, cfg.DryRun = afero.NewOsFs(), tr.out, b, true
	rep, err := publish.Publish(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.ToUpload != 0 || rep.ToDelete != 0 {
		t.Errorf("the bucket differs from the tree: %d to upload, %d to delete: %v", rep.ToUpload, rep.ToDelete, rep.Planned)
	}
	all, err := listAll(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range foreignKeys {
		if !slices.Contains(all, k) {
			t.Errorf("%s, not guidepub's, was deleted", k)
		}
	}
	for _, k := range all {
		switch {
		case strings.HasPrefix(k, "vKT301B/doc/photos/ph-"):
			t.Errorf("%s: a photo of a view that hides photos is in the bucket", k)
		case strings.HasPrefix(k, "vKT301A/") && (site.IsDocument(strings.TrimPrefix(k, "vKT301A/")) || strings.HasSuffix(k, "index.html")):
			data, err := b.ReadAll(ctx, k)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(data, []byte("King St E")) {
				t.Errorf("%s: the street of a view that hides the address is in the bucket", k)
			}
		}
	}
}

// listAll returns every key of b.
func listAll(ctx context.Context, b *blob.Bucket) ([]string, error) {
	var out []string
	it := b.List(nil)
	for {
		obj, err := it.Next(ctx)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, obj.Key)
	}
}

// outboxLeft returns the entries and intents left in tr's outbox.
func outboxLeft(tr trees) []string {
	des, _ := os.ReadDir(filepath.Join(tr.priv, site.OutboxDir))
	var out []string
	for _, de := range des {
		if !strings.HasPrefix(de.Name(), ".") {
			out = append(out, de.Name())
		}
	}
	return out
}

// runPipeline runs p until the test ends.
func runPipeline(t testing.TB, p *Pipeline) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { p.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

// idle waits until p has nothing pending, failing after within.
func idle(t testing.TB, p *Pipeline, within time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	if n := p.Idle(ctx); n != 0 {
		t.Fatalf("%d guides still pending after %v", n, within)
	}
}

// TestHideWithOutboxFault: while a watcher publishes live, the write of the
// outbox entry of a hide fails once (a full disk). The hide still reaches
// the bucket, without a restart: the hidden photos and street are deleted
// and replaced there as in the tree, another writer's objects stay, and
// once uploaded the export's intent goes.
func TestHideWithOutboxFault(t *testing.T) {
	ctx := context.Background()
	st := publishtest.StartStore(t)
	b := publishtest.NewBucket(t, st.Endpoint, "fault")
	tr := newTrees(t, t.TempDir())
	ex := tr.exporter(t, afero.NewOsFs(), afero.NewOsFs())
	faults := publishtest.NewFaultFs(afero.NewOsFs())
	logs := &fixtures.SyncBuffer{}
	cfg := tr.liveConfig(b, logs)
	cfg.OutboxFs = faults
	live, err := publish.NewLive(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	p := New(Config{Live: live, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	runPipeline(t, p)
	if _, _, err := p.ExportAll(ctx, func(each func(exporter.GuideResult)) (*exporter.Report, error) { return ex.ExportAllEach(ctx, each) }); err != nil {
		t.Fatal(err)
	}
	idle(t, p, 30*time.Second)
	putForeign(t, b)

	faults.Fail(1, publishtest.Entries)
	hide(t, tr.src)
	start := time.Now()
	if _, _, err := p.ExportGuide(ctx, func() (*exporter.GuideResult, error) { return ex.ExportBundle(ctx, sampleFolder) }); err != nil {
		t.Fatal(err)
	}
	if faults.Failed() != 1 {
		t.Fatalf("%d outbox writes failed, want 1", faults.Failed())
	}
	idle(t, p, 20*time.Second)
	t.Logf("the bucket converged %v after the hide", time.Since(start).Round(time.Millisecond))
	converged(t, tr, b)
	if left := outboxLeft(tr); len(left) != 0 {
		t.Errorf("left in the outbox: %v", left)
	}
	if !strings.Contains(logs.String(), "changes not saved in the outbox") {
		t.Errorf("the failed write was not logged:\n%s", logs.String())
	}
}

// TestIntentWriteRetried: an export's intent whose write fails once (a
// full disk freed a moment later) is written again, and the export runs;
// one that keeps failing refuses the export, which changes nothing.
func TestIntentWriteRetried(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	out := filepath.Join(dir, "public")
	os.MkdirAll(filepath.Join(out, "v1/data"), 0o755)
	os.WriteFile(filepath.Join(out, "v1/data/status"), []byte(`{"status":"ready"}`), 0o644)
	b, err := publish.OpenBucket(ctx, "mem://")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	faults := publishtest.NewFaultFs(afero.NewOsFs())
	cfg := publish.DefaultLiveConfig()
	cfg.From, cfg.FromDir, cfg.Bucket, cfg.OutboxDir, cfg.OutboxFs = afero.NewOsFs(), out, b, filepath.Join(dir, "outbox"), faults
	cfg.RetryMin, cfg.RetryMax = 10*time.Millisecond, 20*time.Millisecond
	live, err := publish.NewLive(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	p := New(Config{Live: live})
	runPipeline(t, p)
	ran := 0
	export := func() (*exporter.GuideResult, error) {
		ran++
		return &exporter.GuideResult{GuideID: "g1", Changed: true, Changes: []exporter.FileChange{{Path: "v1/data/status"}}}, nil
	}
	faults.Fail(1, publishtest.Intents)
	if _, _, err := p.ExportGuide(ctx, export); err != nil || ran != 1 {
		t.Fatalf("after one failed intent write: err %v, export ran %d times", err, ran)
	}
	idle(t, p, 10*time.Second)
	if ok, _ := b.Exists(ctx, "v1/data/status"); !ok {
		t.Fatal("not uploaded")
	}
	faults.Fail(100, publishtest.Intents)
	if _, _, err := p.ExportGuide(ctx, export); err == nil || ran != 1 {
		t.Fatalf("the intent cannot be written: err %v, export ran %d times", err, ran)
	}
	if left := outboxLeft(trees{priv: dir}); len(left) != 0 {
		t.Errorf("left in the outbox: %v", left)
	}
}

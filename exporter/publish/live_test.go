package publish

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spf13/afero"
	"gocloud.dev/blob"

	"github.com/guidepub/guidepub/exporter"
	"github.com/guidepub/guidepub/fixtures"
	"github.com/guidepub/guidepub/site"
)

// requests counts what a proxy in front of the store forwarded.
type requests struct {
	lists, puts, deletes atomic.Int64
}

// countingProxy forwards to endpoint and counts LIST, PUT (of objects,
// not the lease) and DELETE requests; it returns its own endpoint.
func countingProxy(t testing.TB, endpoint string) (string, *requests) {
	t.Helper()
	target, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	c := &requests{}
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodGet && (r.URL.Query().Has("list-type") || strings.Count(strings.Trim(r.URL.Path, "/"), "/") == 0):
			c.lists.Add(1)
		case r.Method == http.MethodPut && !strings.HasSuffix(r.URL.Path, LeaseFile):
			c.puts.Add(1)
		case r.Method == http.MethodDelete:
			c.deletes.Add(1)
		}
		proxy.ServeHTTP(w, r) // the Host header stays the proxy's: it is what the client signed
	}))
	t.Cleanup(srv.Close)
	return srv.URL, c
}

// openS3 opens an existing bucket on endpoint.
func openS3(t testing.TB, endpoint, name string) *blob.Bucket {
	t.Helper()
	b, err := OpenBucket(context.Background(), "s3://"+name+"?endpoint="+endpoint+"&use_path_style=true&disable_https=true&region=us-east-1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// exportSite is a source folder with the sample bundles, an exporter over it
// and its public and private trees.
type exportSite struct {
	t              testing.TB
	src, out, priv string
	ex             *exporter.Exporter
}

func newExportSite(t testing.TB, folders ...string) *exportSite {
	t.Helper()
	s := newSources(t, folders...)
	s.open(nil)
	return s
}

// newSources returns an exportSite whose sources hold the sample bundles
// folders, and no exporter yet (see open).
func newSources(t testing.TB, folders ...string) *exportSite {
	t.Helper()
	dir := t.TempDir()
	s := &exportSite{t: t, src: filepath.Join(dir, "src"), out: filepath.Join(dir, "public"), priv: filepath.Join(dir, "private")}
	for _, folder := range folders {
		files, err := fixtures.BundleFiles(folder)
		if err != nil {
			t.Fatal(err)
		}
		for name, data := range files {
			p := filepath.Join(s.src, folder, filepath.FromSlash(name))
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return s
}

// open makes s's exporter, its configuration changed by edit when set.
func (s *exportSite) open(edit func(*exporter.Config)) {
	s.t.Helper()
	cfg := exporter.DefaultConfig()
	osfs := afero.NewOsFs()
	cfg.Src, cfg.SrcDir, cfg.Out, cfg.OutDir, cfg.Private, cfg.PrivateDir = osfs, s.src, osfs, s.out, osfs, s.priv
	cfg.Encodings = []site.Encoding{site.Gzip}
	if edit != nil {
		edit(&cfg)
	}
	ex, err := exporter.New(cfg)
	if err != nil {
		s.t.Fatal(err)
	}
	s.ex = ex
}

// exportAll exports every bundle and returns the results.
func (s *exportSite) exportAll() []exporter.GuideResult {
	s.t.Helper()
	rep, err := s.ex.ExportAll(context.Background())
	if err != nil {
		s.t.Fatal(err)
	}
	return rep.Guides
}

// rename changes a room name in folder's guide.json and re-exports it.
func (s *exportSite) rename(folder, from, to string) exporter.GuideResult {
	s.t.Helper()
	p := filepath.Join(s.src, folder, "guide.json")
	data, err := os.ReadFile(p)
	if err != nil {
		s.t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(from)) {
		s.t.Fatalf("%s has no %q", p, from)
	}
	if err := os.WriteFile(p, bytes.Replace(data, []byte(from), []byte(to), 1), 0o644); err != nil {
		s.t.Fatal(err)
	}
	res, err := s.ex.ExportBundle(context.Background(), folder)
	if err != nil || res.Err != nil {
		s.t.Fatalf("export %s: %v %v", folder, err, res.Err)
	}
	return *res
}

// liveConfig returns a LiveConfig for s's public tree and b, with short
// retries.
func (s *exportSite) liveConfig(b *blob.Bucket, logs *fixtures.SyncBuffer) LiveConfig {
	cfg := DefaultLiveConfig()
	cfg.From, cfg.FromDir, cfg.Bucket = afero.NewOsFs(), s.out, b
	cfg.OutboxDir = filepath.Join(s.priv, "outbox")
	cfg.RetryMin, cfg.RetryMax = 20*time.Millisecond, 200*time.Millisecond
	if logs != nil {
		cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	return cfg
}

// outboxFiles returns the names in the outbox dir but its lock file.
func outboxFiles(dir string) []string {
	des, _ := os.ReadDir(dir)
	var out []string
	for _, de := range des {
		if de.Name() != lockFile {
			out = append(out, de.Name())
		}
	}
	return out
}

// runLive starts l.Run until the test ends.
func runLive(t testing.TB, l *Live) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { l.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

// idle waits until l has nothing pending, failing after a while.
func idle(t testing.TB, l *Live, within time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	if n := l.Idle(ctx); n != 0 {
		t.Fatalf("%d guides still pending after %v", n, within)
	}
}

// sameAsReconcile fails unless bucket b holds what a full publish of the
// tree would: Publish to b finds nothing to upload.
func sameAsReconcile(t testing.TB, s *exportSite, b *blob.Bucket) {
	t.Helper()
	cfg := DefaultConfig()
	cfg.From, cfg.FromDir, cfg.Bucket, cfg.DryRun = afero.NewOsFs(), s.out, b, true
	rep, err := Publish(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.ToUpload != 0 || rep.ToDelete != 0 {
		t.Fatalf("the bucket differs from the tree: %d to upload, %d to delete: %v", rep.ToUpload, rep.ToDelete, rep.Planned)
	}
}

// statusesComplete fails when a ready status object is in b while a
// document its view has in the tree out is not.
func statusesComplete(t testing.TB, b *blob.Bucket, out string) {
	t.Helper()
	all := keys(t, b)
	for _, k := range all {
		view, ok := strings.CutSuffix(k, "/"+site.StatusFile)
		if !ok {
			continue
		}
		data, err := b.ReadAll(context.Background(), k)
		if err != nil {
			t.Fatal(err)
		}
		var st struct{ Status string }
		json.Unmarshal(data, &st)
		if st.Status != "ready" {
			continue
		}
		for _, doc := range []string{site.SummaryFile, site.AutofillFile} {
			if _, err := os.Stat(filepath.Join(out, view, filepath.FromSlash(doc))); err != nil {
				continue // hidden in this view
			}
			if !slices.Contains(all, view+"/"+doc) {
				t.Errorf("%s is ready but %s/%s is missing", k, view, doc)
			}
		}
	}
}

func TestLive(t *testing.T) {
	st := startStore(t)
	newBucket(t, st.Endpoint, "live")
	proxy, counts := countingProxy(t, st.Endpoint)
	b := openS3(t, proxy, "live")
	s := newExportSite(t, "301-king-st-e", "ansi-us-house")
	l, err := NewLive(context.Background(), s.liveConfig(b, nil))
	if err != nil {
		t.Fatal(err)
	}
	runLive(t, l)

	// The first export: every file goes up, the bucket equals the tree.
	for _, g := range s.exportAll() {
		if err := l.Record(g); err != nil {
			t.Fatal(err)
		}
	}
	idle(t, l, 30*time.Second)
	sameAsReconcile(t, s, b)
	statusesComplete(t, b, s.out)

	// One guide changes: exactly its changed files go up, nothing listed.
	counts.lists.Store(0)
	counts.puts.Store(0)
	res := s.rename("301-king-st-e", "Living Room", "Sitting Room")
	want := map[string]bool{}
	for _, f := range res.Changes {
		rel, _ := uploaded(f.Path)
		want[rel] = true
	}
	if len(want) == 0 {
		t.Fatal("the change wrote nothing")
	}
	if err := l.Record(res); err != nil {
		t.Fatal(err)
	}
	idle(t, l, 30*time.Second)
	if got := counts.puts.Load(); got != int64(len(want)) {
		t.Errorf("%d objects uploaded for %d changed files", got, len(want))
	}
	if got := counts.lists.Load(); got != 0 {
		t.Errorf("%d LIST requests", got)
	}
	sameAsReconcile(t, s, b)

	// The guide goes away: its objects are deleted, the other guide's stay.
	if err := os.RemoveAll(filepath.Join(s.src, "301-king-st-e")); err != nil {
		t.Fatal(err)
	}
	rm, err := s.ex.RemoveBundle(context.Background(), "301-king-st-e")
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Record(*rm); err != nil {
		t.Fatal(err)
	}
	idle(t, l, 30*time.Second)
	sameAsReconcile(t, s, b)
	if left := outboxFiles(l.cfg.OutboxDir); len(left) != 0 {
		t.Errorf("outbox not empty: %v", left)
	}
}

// TestLiveStoreOutage: the store stops in the middle of a guide's upload
// and comes back; every change reaches the bucket, no status is ever there
// before its summary, and the log says what happened once.
func TestLiveStoreOutage(t *testing.T) {
	st := startStore(t)
	b := newBucket(t, st.Endpoint, "outage")
	s := newExportSite(t, "301-king-st-e", "ansi-us-house")
	logs := &fixtures.SyncBuffer{}
	cfg := s.liveConfig(b, logs)
	var n atomic.Int32
	stopped := make(chan struct{})
	cfg.OnUpload = func(key string) {
		if n.Add(1) == 3 {
			st.Stop()
			close(stopped)
		}
	}
	l, err := NewLive(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	runLive(t, l)
	for _, g := range s.exportAll() {
		if err := l.Record(g); err != nil {
			t.Fatal(err)
		}
	}
	<-stopped
	// Fail for a while (several retries), then come back.
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(logs.String(), "upload failed") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	st.Start(st.Secret)
	idle(t, l, 30*time.Second)
	sameAsReconcile(t, s, b)
	statusesComplete(t, b, s.out)
	out := logs.String()
	if c := strings.Count(out, "upload failed"); c == 0 || c > 2 {
		t.Errorf("the failure was logged %d times (want once per guide):\n%s", c, out)
	}
	if !strings.Contains(out, "what to do") || !strings.Contains(out, "uploads resumed") {
		t.Errorf("the log does not say what to do and that uploads resumed:\n%s", out)
	}
}

// TestLiveCredentialsRefused: the store refuses the credentials (as when
// they expire); the failure is permanent-kind, logged once with advice,
// and uploads complete once valid credentials are back.
func TestLiveCredentialsRefused(t *testing.T) {
	st := startStore(t)
	b := newBucket(t, st.Endpoint, "creds")
	st.Stop()
	st.Start("another-secret") // our key no longer works
	s := newExportSite(t, "301-king-st-e")
	logs := &fixtures.SyncBuffer{}
	l, err := NewLive(context.Background(), s.liveConfig(b, logs))
	if err != nil {
		t.Fatal(err)
	}
	runLive(t, l)
	for _, g := range s.exportAll() {
		if err := l.Record(g); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(logs.String(), "upload failed") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(logs.String(), "kind=permanent") || !strings.Contains(logs.String(), "credentials") {
		t.Fatalf("refused credentials not reported as such:\n%s", logs.String())
	}
	st.Stop()
	st.Start(st.Secret)
	idle(t, l, 30*time.Second)
	sameAsReconcile(t, s, b)
	if c := strings.Count(logs.String(), "upload failed"); c != 1 {
		t.Errorf("logged %d times:\n%s", c, logs.String())
	}
}

// TestLiveReexportWhilePending: a guide exported again before its upload
// uploads its latest files only once each.
func TestLiveReexportWhilePending(t *testing.T) {
	st := startStore(t)
	newBucket(t, st.Endpoint, "again")
	proxy, counts := countingProxy(t, st.Endpoint)
	b := openS3(t, proxy, "again")
	s := newExportSite(t, "301-king-st-e")
	first := s.exportAll()
	r1 := s.rename("301-king-st-e", "Living Room", "Sitting Room")
	r2 := s.rename("301-king-st-e", "Sitting Room", "Lounge")
	l, err := NewLive(context.Background(), s.liveConfig(b, nil))
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range append(first, r1, r2) {
		if err := l.Record(g); err != nil {
			t.Fatal(err)
		}
	}
	runLive(t, l)
	idle(t, l, 30*time.Second)
	sameAsReconcile(t, s, b)
	var files int
	site.WalkFiles(afero.NewOsFs(), s.out, func(rel string, _ fs.FileInfo) error {
		if _, ok := uploaded(rel); ok {
			if _, _, sib := site.SplitEncoded(rel); !sib {
				files++
			}
		}
		return nil
	})
	if got := counts.puts.Load(); got != int64(files) {
		t.Errorf("%d uploads for %d files", got, files)
	}
}

// TestLiveTwoWatchers: a second watcher pointed at the same bucket and
// prefix by mistake does not overwrite the first one's guides: it says
// what to do, keeps its uploads in its outbox, and sends them once the
// first stops. Nothing is lost.
func TestLiveTwoWatchers(t *testing.T) {
	st := startStore(t)
	b := newBucket(t, st.Endpoint, "two")
	a, c := newExportSite(t, "301-king-st-e"), newExportSite(t, "ansi-us-house")
	la, err := NewLive(context.Background(), a.liveConfig(b, nil))
	if err != nil {
		t.Fatal(err)
	}
	ctxA, stopA := context.WithCancel(context.Background())
	doneA := make(chan struct{})
	go func() { la.Run(ctxA); close(doneA) }()
	defer func() { stopA(); <-doneA }()
	for _, g := range a.exportAll() {
		if err := la.Record(g); err != nil {
			t.Fatal(err)
		}
	}
	idle(t, la, 30*time.Second)

	logs := &fixtures.SyncBuffer{}
	lc, err := NewLive(context.Background(), c.liveConfig(b, logs))
	if err != nil {
		t.Fatal(err)
	}
	runLive(t, lc)
	for _, g := range c.exportAll() {
		if err := lc.Record(g); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(logs.String(), "upload failed") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if out := logs.String(); !strings.Contains(out, "kind=conflict") || !strings.Contains(out, "stop one") {
		t.Fatalf("the second watcher does not say what is wrong:\n%s", out)
	}
	if slices.Contains(keys(t, b), "vMAPLE-main/data/status") {
		t.Fatal("the second watcher uploaded while the first one held the bucket")
	}
	// The first one changes its guide, then stops: the second one's
	// uploads go, and the first one's change stays.
	if err := la.Record(a.rename("301-king-st-e", "Living Room", "Sitting Room")); err != nil {
		t.Fatal(err)
	}
	idle(t, la, 30*time.Second)
	stopA()
	<-doneA
	idle(t, lc, 30*time.Second)
	statusesComplete(t, b, a.out)
	statusesComplete(t, b, c.out)
	all := keys(t, b)
	for _, want := range []string{"vMAPLE-main/data/status", "vKT301A/data/status", "123-maple-ave/index.html", "301-king-st-e/index.html"} {
		if !slices.Contains(all, want) {
			t.Errorf("%s lost", want)
		}
	}
	data, err := b.ReadAll(context.Background(), "vKT301A/data/summary")
	if err != nil || !bytes.Contains(data, []byte("Sitting Room")) {
		t.Errorf("the first watcher's change is not in the bucket: %v", err)
	}
}

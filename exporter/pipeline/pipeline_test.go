package pipeline

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/exporter"
	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/exporter/publish"
	"github.com/guidepub/guidepub/site/clock/clocktest"
)

// queue records Enqueue calls and fails while down is set.
type queue struct {
	mu    sync.Mutex
	down  bool
	calls []string
	sent  map[string]bool // one delivery per guide, as one revision and webhook
}

func (q *queue) Enqueue(_ context.Context, guideID string) (Enqueued, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.calls = append(q.calls, guideID)
	if q.down {
		return Enqueued{}, errors.New("store unreachable")
	}
	if q.sent[guideID] {
		return Enqueued{SentBefore: 1}, nil
	}
	if q.sent == nil {
		q.sent = map[string]bool{}
	}
	q.sent[guideID] = true
	return Enqueued{Queued: 1}, nil
}

func (q *queue) take() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	c := q.calls
	q.calls = nil
	return c
}

var t0 = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

func result(id string, changed, ready bool) func() (*exporter.GuideResult, error) {
	return func() (*exporter.GuideResult, error) {
		return &exporter.GuideResult{Folder: id, GuideID: id, Changed: changed, Ready: ready}, nil
	}
}

func TestReadyEvents(t *testing.T) {
	ctx := context.Background()
	clk := clocktest.NewClock(t0)
	q := &queue{}
	p := New(Config{Events: q, Clock: clk})

	// A changed ready guide queues its event; an unchanged one does not;
	// a guide not ready never does.
	if _, next, err := p.ExportGuide(ctx, result("g1", true, true)); err != nil || !next.IsZero() {
		t.Fatalf("next %v, err %v", next, err)
	}
	p.ExportGuide(ctx, result("g1", false, true))
	p.ExportGuide(ctx, result("g2", true, false))
	if got := q.take(); !slices.Equal(got, []string{"g1"}) {
		t.Fatalf("queued %v", got)
	}

	// The store is away: the guide is to be exported again after
	// EnqueueRetry, and then its event is queued though nothing changed.
	q.down = true
	_, next, _ := p.ExportGuide(ctx, result("g3", true, true))
	if want := t0.Add(DefaultEnqueueRetry); !next.Equal(want) {
		t.Fatalf("retry at %v, want %v", next, want)
	}
	if !slices.Equal(p.Failed(), []string{"g3"}) {
		t.Fatalf("failed %v", p.Failed())
	}
	q.down = false
	q.take()
	if _, next, _ = p.ExportGuide(ctx, result("g3", false, true)); !next.IsZero() {
		t.Fatalf("next %v after success", next)
	}
	if got := q.take(); !slices.Equal(got, []string{"g3"}) || len(p.Failed()) != 0 {
		t.Fatalf("queued %v, failed %v", got, p.Failed())
	}
	// A view that expires sooner than the retry keeps its own time.
	q.down = true
	soon := t0.Add(time.Second)
	_, next, _ = p.ExportGuide(ctx, func() (*exporter.GuideResult, error) {
		return &exporter.GuideResult{GuideID: "g4", Changed: true, Ready: true, NextChange: soon}, nil
	})
	if !next.Equal(soon) {
		t.Fatalf("next %v, want the expiry %v", next, soon)
	}
}

func TestCatchUpQueuesEveryReadyGuide(t *testing.T) {
	q := &queue{}
	p := New(Config{Events: q})
	rep := &exporter.Report{Guides: []exporter.GuideResult{
		{GuideID: "a", Ready: true}, {GuideID: "b", Ready: false}, {GuideID: "c", Ready: true, Changed: true},
		{GuideID: "d", Ready: true, Err: errors.New("rejected")},
	}}
	_, next, err := p.ExportAll(context.Background(), func(func(exporter.GuideResult)) (*exporter.Report, error) { return rep, nil })
	if err != nil || len(next) != 4 {
		t.Fatal(err, next)
	}
	if got := q.take(); !slices.Equal(got, []string{"a", "c"}) || p.Queued() != 2 {
		t.Fatalf("queued %v", got)
	}
}

// TestUnchangedRevisionLogged: a guide published again as it was (its
// folder deleted and uploaded again) queues nothing, since its webhooks had
// this revision, and the log says why; the catch-up at start, which asks
// for every ready guide, does not.
func TestUnchangedRevisionLogged(t *testing.T) {
	var logs strings.Builder
	q := &queue{}
	p := New(Config{Events: q, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	ctx := context.Background()
	export := func() (*exporter.GuideResult, error) {
		return &exporter.GuideResult{Folder: "g1", GuideID: "g1", Changed: true, Ready: true, Revision: "0123456789abcdef"}, nil
	}
	p.ExportGuide(ctx, export)
	if strings.Contains(logs.String(), "not sent") {
		t.Fatalf("a first delivery logged as not sent:\n%s", logs.String())
	}
	p.ExportGuide(ctx, export) // uploaded again, unchanged
	if !strings.Contains(logs.String(), `msg="ready event not sent: unchanged revision, not sent again" guide=g1 revision=0123456789ab webhooks=1`) {
		t.Fatalf("no reason logged for the event not sent:\n%s", logs.String())
	}
	logs.Reset()
	rep := &exporter.Report{Guides: []exporter.GuideResult{{GuideID: "g1", Ready: true, Revision: "0123456789abcdef"}}}
	if _, _, err := p.ExportAll(ctx, func(func(exporter.GuideResult)) (*exporter.Report, error) { return rep, nil }); err != nil {
		t.Fatal(err)
	}
	if logs.Len() != 0 {
		t.Fatalf("the catch-up logged:\n%s", logs.String())
	}
}

// TestIntents: an export's intent is removed once what it changed is
// recorded, and stays after a failed export, so that the next start
// reconciles the bucket.
func TestIntents(t *testing.T) {
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
	cfg := publish.DefaultLiveConfig()
	cfg.From, cfg.FromDir, cfg.Bucket, cfg.OutboxDir = afero.NewOsFs(), out, b, filepath.Join(dir, "outbox")
	live, err := publish.NewLive(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	p := New(Config{Live: live})
	res := &exporter.GuideResult{GuideID: "g1", Changed: true, Changes: []exporter.FileChange{{Path: "v1/data/status"}}}
	if _, _, err := p.ExportGuide(ctx, func() (*exporter.GuideResult, error) { return res, nil }); err != nil {
		t.Fatal(err)
	}
	names := func() []string {
		des, _ := os.ReadDir(cfg.OutboxDir)
		var n []string
		for _, de := range des {
			if !strings.HasPrefix(de.Name(), ".") { // the lock
				n = append(n, de.Name())
			}
		}
		return n
	}
	if got := names(); !slices.Equal(got, []string{"g1.json"}) {
		t.Fatalf("outbox %v", got)
	}
	// A failed export's result is recorded (nothing to reconcile); an
	// export that returns no result at all leaves its intent.
	ioErr := errors.New("disk full")
	if _, _, err := p.ExportGuide(ctx, func() (*exporter.GuideResult, error) { return &exporter.GuideResult{GuideID: "g2"}, ioErr }); !errors.Is(err, ioErr) {
		t.Fatal(err)
	}
	for _, n := range names() {
		if strings.HasPrefix(n, "exporting-") {
			t.Fatalf("a failed export with a result left its intent: %v", names())
		}
	}
	if _, _, err := p.ExportAll(ctx, func(func(exporter.GuideResult)) (*exporter.Report, error) { return nil, ioErr }); !errors.Is(err, ioErr) {
		t.Fatal(err)
	}
	intent := false
	for _, n := range names() {
		intent = intent || strings.HasPrefix(n, "exporting-")
	}
	if !intent {
		t.Fatalf("no intent left by an export without a result: %v", names())
	}

	// The next process reconciles, then uploads the outbox.
	live.Close()
	live2, err := publish.NewLive(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	p2 := New(Config{Live: live2})
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { p2.Run(rctx); close(done) }()
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	if n := p2.Idle(wctx); n != 0 {
		t.Fatalf("%d pending", n)
	}
	cancel()
	<-done
	if got := names(); len(got) != 0 {
		t.Fatalf("outbox after the run: %v", got)
	}
	if ok, _ := b.Exists(ctx, "v1/data/status"); !ok {
		t.Fatal("status not uploaded")
	}
}

// TestFailedExportRetried: an export that failed on an I/O error is due
// again FailedRetry later (an export that changed what the views show
// has then withdrawn what it did not reach); a rejected bundle waits for
// its next change, and an export stopped by the end of ctx is not
// retried.
func TestFailedExportRetried(t *testing.T) {
	p := New(Config{Clock: clocktest.NowFunc(func() time.Time { return t0 }), FailedRetry: 7 * time.Second})
	failing := func(err error) func() (*exporter.GuideResult, error) {
		return func() (*exporter.GuideResult, error) { return &exporter.GuideResult{Folder: "a", GuideID: "gA"}, err }
	}
	ioErr := &os.PathError{Op: "write", Path: "out/vA/reso/autofill", Err: errors.New("no space left on device")}
	if _, next, err := p.ExportGuide(context.Background(), failing(ioErr)); err == nil || !next.Equal(t0.Add(7*time.Second)) {
		t.Errorf("I/O error: due again at %v (%v), want %v", next, err, t0.Add(7*time.Second))
	}
	rejected := &bundle.Error{Folder: "a", Problems: []bundle.Problem{{File: "guide.json", Message: "bad"}}}
	if _, next, err := p.ExportGuide(context.Background(), failing(rejected)); err == nil || !next.IsZero() {
		t.Errorf("rejected bundle: due again at %v (%v), want never", next, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, next, err := p.ExportGuide(ctx, failing(context.Canceled)); err == nil || !next.IsZero() {
		t.Errorf("stopped export: due again at %v (%v), want never", next, err)
	}
}

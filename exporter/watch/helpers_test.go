package watch

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/guidepub/guidepub/site/clock/clocktest"
)

var epoch = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// fakeClock is the test clock of this package.
type fakeClock = clocktest.Clock

func newFakeClock() *fakeClock { return clocktest.NewClock(epoch) }

// testConfig is DefaultConfig watching dir for h and logging to log.
func testConfig(dir string, h Handler, log *slog.Logger) Config {
	cfg := DefaultConfig()
	cfg.Dir, cfg.Handler, cfg.Logger = dir, h, log
	return cfg
}

// call is one handler call seen by a recorder.
type call struct {
	method string // "changed" or "removed"
	folder string
}

// recorder is a Handler that records its calls. Changed returns what
// next and fail hold for the folder.
type recorder struct {
	calls chan call
	mu    sync.Mutex
	next  map[string]time.Time
	fail  map[string]error
	block chan struct{} // when non-nil, Changed waits for it to be closed
}

func newRecorder() *recorder {
	return &recorder{calls: make(chan call, 100), next: map[string]time.Time{}, fail: map[string]error{}}
}

func (r *recorder) Changed(ctx context.Context, folder string) (time.Time, error) {
	r.calls <- call{"changed", folder}
	r.mu.Lock()
	next, err, block := r.next[folder], r.fail[folder], r.block
	r.mu.Unlock()
	if block != nil {
		<-block
	}
	return next, err
}

func (r *recorder) Removed(ctx context.Context, folder string) error {
	r.calls <- call{"removed", folder}
	return nil
}

func (r *recorder) set(folder string, next time.Time, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.next[folder], r.fail[folder] = next, err
}

// wait returns the next call, failing the test when none comes in time.
func (r *recorder) wait(t *testing.T) call {
	t.Helper()
	select {
	case c := <-r.calls:
		return c
	case <-time.After(10 * time.Second):
		t.Fatal("no handler call within 10s")
		return call{}
	}
}

// expect checks that the next call is want.
func (r *recorder) expect(t *testing.T, want call) {
	t.Helper()
	if got := r.wait(t); got != want {
		t.Fatalf("handler call = %+v, want %+v", got, want)
	}
}

// syncedLog is a concurrency-safe buffer for a text slog handler.
type syncedLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *syncedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *syncedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func (l *syncedLog) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// started runs w until the test ends.
func started(t *testing.T, w *Watcher) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
}

// inspect runs fn in w's loop and waits for it.
func inspect(t *testing.T, w *Watcher, fn func(*state)) {
	t.Helper()
	ack := make(chan struct{})
	select {
	case w.in <- input{kind: inInspect, fn: fn, ack: ack}:
	case <-time.After(10 * time.Second):
		t.Fatal("watcher loop does not answer")
	}
	<-ack
}

// waitState polls the loop until cond holds, failing after a deadline.
func waitState(t *testing.T, w *Watcher, what string, cond func(*state) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ok := false
		inspect(t, w, func(st *state) { ok = cond(st) })
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// idle reports whether nothing is queued, running or pending.
func idle(st *state) bool {
	return len(st.queue) == 0 && len(st.running) == 0 && st.deb.Len() == 0
}

// expectNoMoreCalls checks that w is idle and no call was recorded beyond
// those already taken.
func expectNoMoreCalls(t *testing.T, w *Watcher, r *recorder) {
	t.Helper()
	waitState(t, w, "an idle watcher", func(st *state) bool { return len(st.queue) == 0 && len(st.running) == 0 })
	select {
	case c := <-r.calls:
		t.Fatalf("unexpected handler call %+v", c)
	default:
	}
}

// mkdirs creates folders under root.
func mkdirs(t *testing.T, root string, names ...string) {
	t.Helper()
	for _, n := range names {
		if err := os.MkdirAll(filepath.Join(root, n), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// writeFile writes data to root/rel, creating folders.
func writeFile(t *testing.T, root, rel, data string) {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

var errBroken = errors.New("guide.json: unexpected end of JSON input")

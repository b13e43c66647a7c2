package publish

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/fixtures"
)

// TestLeasePerProcess: two publishers on one bucket never both hold the
// lease, even from one host and outbox folder name; a publisher that took
// over an outbox (whose lock proves its last user gone) takes that one's
// lease at once, also from a lease written before ids were per process.
func TestLeasePerProcess(t *testing.T) {
	ctx := context.Background()
	b, err := OpenBucket(ctx, "mem://")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	now := func() time.Time { return time.Now() }
	dir := t.TempDir()
	a := newLease(b, "", "", filepath.Join(dir, "one", "outbox"), now)
	other := newLease(b, "", "", filepath.Join(dir, "two", "outbox"), now)
	if err := a.claim(ctx); err != nil {
		t.Fatal(err)
	}
	err = other.claim(ctx)
	if !errors.Is(err, errOtherPublisher) || !strings.Contains(err.Error(), "pid ") {
		t.Fatalf("a second publisher: %v, want a conflict naming the holder", err)
	}
	if a.id == other.id {
		t.Fatal("two publishers drew one id")
	}

	// The next process on the first outbox (the first died: its lock was
	// free) takes the lease at once.
	next := newLease(b, "", "", filepath.Join(dir, "one", "outbox"), now)
	if err := next.claim(ctx); err != nil {
		t.Fatalf("the successor on the same outbox: %v", err)
	}
	if err := other.claim(ctx); !errors.Is(err, errOtherPublisher) {
		t.Fatalf("after the takeover, the other: %v", err)
	}

	// A lease written by an earlier version (its id was host and outbox).
	old, _ := json.Marshal(map[string]any{"id": next.holder, "beat": 7})
	if err := b.WriteAll(ctx, LeaseFile, old, nil); err != nil {
		t.Fatal(err)
	}
	later := newLease(b, "", "", filepath.Join(dir, "one", "outbox"), now)
	if err := later.claim(ctx); err != nil {
		t.Fatalf("an earlier version's lease on the same outbox: %v", err)
	}
}

// TestOutboxLocked: a second publisher on the same outbox waits, saying
// so, until the first is closed.
func TestOutboxLocked(t *testing.T) {
	ctx := context.Background()
	b, err := OpenBucket(ctx, "mem://")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "public"), 0o755)
	cfg := DefaultLiveConfig()
	cfg.From, cfg.FromDir, cfg.Bucket, cfg.OutboxDir = afero.NewOsFs(), filepath.Join(dir, "public"), b, filepath.Join(dir, "outbox")
	cfg.RetryMin, cfg.RetryMax = 10*time.Millisecond, 20*time.Millisecond
	first, err := NewLive(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	logs := &fixtures.SyncBuffer{}
	cfg2 := cfg
	cfg2.Logger = slog.New(slog.NewTextHandler(logs, nil))
	got := make(chan error, 1)
	go func() {
		l, err := NewLive(ctx, cfg2)
		if err == nil {
			l.Close()
		}
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("the second publisher did not wait: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	if !strings.Contains(logs.String(), "another guidepub process publishes from this private tree") ||
		!strings.Contains(logs.String(), "pid "+strconv.Itoa(os.Getpid())) {
		t.Fatalf("the second publisher does not say why it waits:\n%s", logs.String())
	}
	first.Close()
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the second publisher still waits after the first closed")
	}
	// Waiting ends with ctx too.
	third, err := NewLive(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer third.Close()
	cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := NewLive(cctx, cfg); err == nil {
		t.Fatal("NewLive returned while another held the outbox")
	}
}

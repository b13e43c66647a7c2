package delivery

import (
	"context"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"
)

// neverPolls is a Config whose queue looks for due attempts once an hour:
// a delivery that arrives within a test was woken up, not polled.
func neverPolls() Config {
	cfg := testConfig()
	cfg.PollInterval = time.Hour
	return cfg
}

// TestWakeAfterEnqueue: a started queue sends what its own process queues
// at once, not at its next poll. Before the wake-up, the second delivery
// (queued once the queue had fetched everything at start) waited for the
// poll on SQLite.
func TestWakeAfterEnqueue(t *testing.T) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			rc := newReceiver(t, func(int, http.ResponseWriter, *http.Request) {})
			q := startQueue(t, openStore(t, be.dsn(t)), neverPolls())
			for i := range 3 {
				d := enqueueOne(t, q, message("g-wake", rc.srv.URL, i))
				if got := waitFinal(t, q, "g-wake", d.ID); got.State != StateDelivered {
					t.Fatalf("delivery %d: %s, want delivered", i, got.State)
				}
			}
		})
	}
}

// TestWakeFromAnotherProcess: a queue that only queues (as "guidepub
// watch" does), on its own connection to the database, wakes the sidecar's
// started queue: on SQLite through the wake file, on PostgreSQL through
// River's NOTIFY. A re-send (Retry) wakes it in the same way.
func TestWakeFromAnotherProcess(t *testing.T) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			dsn := be.dsn(t)
			rc := newReceiver(t, func(n int, w http.ResponseWriter, _ *http.Request) {
				if n == 2 {
					w.WriteHeader(http.StatusBadRequest) // dropped, then re-sent
				}
			})
			sidecar := startQueue(t, openStore(t, dsn), neverPolls())
			watcher, err := New(openStore(t, dsn), neverPolls())
			if err != nil {
				t.Fatal(err)
			}
			first := enqueueOne(t, watcher, message("g-wake", rc.srv.URL, 1))
			if got := waitFinal(t, sidecar, "g-wake", first.ID); got.State != StateDelivered {
				t.Fatalf("first delivery: %s, want delivered", got.State)
			}
			second := enqueueOne(t, watcher, message("g-wake", rc.srv.URL, 2))
			if got := waitFinal(t, sidecar, "g-wake", second.ID); got.State != StateDropped {
				t.Fatalf("second delivery: %s, want dropped", got.State)
			}
			if _, err := watcher.Retry(context.Background(), "g-wake", second.ID); err != nil {
				t.Fatal(err)
			}
			if got := waitFinal(t, sidecar, "g-wake", second.ID); got.State != StateDelivered {
				t.Fatalf("second delivery re-sent: %s, want delivered", got.State)
			}
		})
	}
}

// TestWakeEveryInsert: every delivery another process queues wakes the
// started queue, not only the first of a burst. River announces at most
// one insert per fetch cooldown (per process and queue) and leaves the
// rest to the poll; a webhook then waited up to a poll interval (1s by
// default on PostgreSQL). The queueing side here has a cooldown of an hour,
// so River announces its first insert only: the second is found only if
// guidepub announces it itself.
func TestWakeEveryInsert(t *testing.T) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			dsn := be.dsn(t)
			rc := newReceiver(t, func(int, http.ResponseWriter, *http.Request) {})
			sidecar := startQueue(t, openStore(t, dsn), neverPolls())
			cfg := neverPolls()
			cfg.fetchCooldown = time.Hour
			watcher, err := New(openStore(t, dsn), cfg)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 3 {
				d := enqueueOne(t, watcher, message("g-every", rc.srv.URL, i))
				if got := waitFinal(t, sidecar, "g-every", d.ID); got.State != StateDelivered {
					t.Fatalf("delivery %d: %s, want delivered", i, got.State)
				}
			}
		})
	}
}

// TestWakeWhileStarting queues from two processes' queues while the
// sidecar's queue starts and runs: every delivery is sent, including those
// committed while River was starting, when a wake-up cannot reach it yet.
// Run with -race: wake-ups come from the queueing goroutines and the wake
// file's watcher while Start and Stop run.
func TestWakeWhileStarting(t *testing.T) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			dsn := be.dsn(t)
			rc := newReceiver(t, func(int, http.ResponseWriter, *http.Request) {})
			sidecar, err := New(openStore(t, dsn), neverPolls())
			if err != nil {
				t.Fatal(err)
			}
			watcher, err := New(openStore(t, dsn), neverPolls())
			if err != nil {
				t.Fatal(err)
			}
			const perQueue = 20
			var (
				wg  sync.WaitGroup
				mu  sync.Mutex
				ids []string
			)
			for qi, q := range []*Queue{sidecar, watcher} {
				wg.Go(func() {
					for i := range perQueue {
						ds, err := q.Enqueue(context.Background(), []Message{message("g-start", rc.srv.URL, qi*perQueue+i)})
						if err != nil {
							t.Error(err)
							return
						}
						mu.Lock()
						ids = append(ids, ds[0].ID)
						mu.Unlock()
						time.Sleep(time.Millisecond)
					}
				})
			}
			if err := sidecar.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			wg.Wait()
			for _, id := range ids {
				if got := waitFinal(t, sidecar, "g-start", id); got.State != StateDelivered {
					t.Errorf("delivery %s: %s, want delivered", id, got.State)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			// Queueing goes on while the queue stops: wake-ups then reach
			// nothing, and the deliveries wait for the next start.
			wg.Go(func() {
				for i := range 5 {
					if _, err := watcher.Enqueue(context.Background(), []Message{message("g-stop", rc.srv.URL, i)}); err != nil {
						t.Error(err)
					}
				}
			})
			if err := sidecar.Stop(ctx); err != nil {
				t.Fatal(err)
			}
			wg.Wait()
		})
	}
}

// TestWakeFileMissing: a wake file removed (or never made) is made again by
// the next Enqueue, and the watch, on the folder, still sees it.
func TestWakeFileMissing(t *testing.T) {
	dsn := backends[0].dsn(t)
	rc := newReceiver(t, func(int, http.ResponseWriter, *http.Request) {})
	sidecar := startQueue(t, openStore(t, dsn), neverPolls())
	watcher, err := New(openStore(t, dsn), neverPolls())
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := os.Remove(dsn + wakeSuffix); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		d := enqueueOne(t, watcher, message("g-file", rc.srv.URL, i))
		if got := waitFinal(t, sidecar, "g-file", d.ID); got.State != StateDelivered {
			t.Fatalf("delivery %d: %s, want delivered", i, got.State)
		}
		if fi, err := os.Stat(dsn + wakeSuffix); err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("wake file after delivery %d: %v, %v; want a file of mode 0600", i, fi, err)
		}
	}
}

// TestWakeFileSymlink: a wake file that is a symbolic link is neither
// followed nor replaced: the file it points to is not created (a dangling
// link) nor touched (a link to another file), and the signal fails, which
// costs the other processes a wake-up, not a delivery. os.Chtimes and
// O_CREATE followed the link: the store's folder let whoever could write
// in it have the sidecar create or touch any file it may write.
func TestWakeFileSymlink(t *testing.T) {
	dir := t.TempDir()
	elsewhere := t.TempDir()
	w := wakeFile{path: dir + "/store.db" + wakeSuffix}

	target := elsewhere + "/created"
	if err := os.Symlink(target, w.path); err != nil {
		t.Fatal(err)
	}
	if err := w.signal(); err == nil {
		t.Error("a wake file that is a dangling link was signalled")
	}
	if _, err := os.Lstat(target); !os.IsNotExist(err) {
		t.Fatalf("the target of the dangling link: %v, want it not created", err)
	}

	target = elsewhere + "/touched"
	if err := os.WriteFile(target, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := os.Chtimes(target, old, old); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(w.path); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, w.path); err != nil {
		t.Fatal(err)
	}
	if err := w.signal(); err == nil {
		t.Error("a wake file that is a link to a file was signalled")
	}
	if fi, err := os.Stat(target); err != nil || !fi.ModTime().Equal(old) {
		t.Fatalf("the target of the link: %v, %v; want its time stamps unchanged", fi, err)
	}

	// A regular wake file is touched, and made when missing.
	if err := os.Remove(w.path); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		before := time.Now().Add(-time.Second)
		if err := w.signal(); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Lstat(w.path); err != nil || !fi.Mode().IsRegular() || fi.ModTime().Before(before) {
			t.Fatalf("the wake file: %v, %v; want a regular file touched now", fi, err)
		}
		if err := os.Chtimes(w.path, old, old); err != nil {
			t.Fatal(err)
		}
	}
}

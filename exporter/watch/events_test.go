package watch

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/guidepub/guidepub/site/fswatch"
)

// newEventsWatcher returns a started watcher over root using real file
// system events and a fake clock for the debounce.
func newEventsWatcher(t *testing.T, root string, h Handler) (*Watcher, *fakeClock) {
	t.Helper()
	clock := newFakeClock()
	cfg := testConfig(root, h, (&syncedLog{}).logger())
	cfg.Jobs, cfg.Clock = 1, clock
	w, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if w.Mode() != ModeEvents {
		t.Fatalf("mode = %s, want %s", w.Mode(), ModeEvents)
	}
	started(t, w)
	watchedAll(t, w)
	return w, clock
}

// watchedAll waits until w has watched the bundle folders present when it
// started, then forgets the folders it marked as changed because their
// stamps were recent (the test just created them): each test starts from
// a quiet watcher.
func watchedAll(t *testing.T, w *Watcher) {
	t.Helper()
	select {
	case <-w.watched:
	case <-time.After(10 * time.Second):
		t.Fatal("the bundle folders were not watched within 10 s")
	}
	inspect(t, w, func(st *state) {
		st.deb = fswatch.NewDebouncer(w.cfg.Debounce, w.cfg.MaxWait)
	})
}

// settle moves a sentinel into the bundle "zz" and waits until the loop has
// seen it. The kernel queues one watcher's events in order, so every event
// caused before the sentinel has been handled by then. The sentinel is
// written outside the watched root and renamed in: one event, where
// writing it in place would queue several (create, write), the later ones
// arriving after the test has moved on.
func settle(t *testing.T, w *Watcher, root string, n int) {
	t.Helper()
	tmp := filepath.Join(t.TempDir(), "sentinel")
	if err := os.WriteFile(tmp, []byte(strings.Repeat("x", n)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(root, "zz", fmt.Sprintf("sentinel-%d", n))); err != nil {
		t.Fatal(err)
	}
	waitState(t, w, "the sentinel event", func(st *state) bool { return st.deb.Pending("zz") })
}

func TestEventsUploads(t *testing.T) {
	root := t.TempDir()
	mkdirs(t, root, "zz", "quiet")
	rec := newRecorder()
	w, clock := newEventsWatcher(t, root, rec)
	// An uploader: several files, nested folders created before their
	// watch can exist, then guide.json written to a temp name and renamed.
	writeFile(t, root, "new/photos/front.jpg", "jpeg")
	writeFile(t, root, "new/doc/en/plan.pdf", "pdf")
	writeFile(t, root, "new/guide.json.tmp", `{"guideId":"g"}`)
	if err := os.Rename(filepath.Join(root, "new/guide.json.tmp"), filepath.Join(root, "new/guide.json")); err != nil {
		t.Fatal(err)
	}
	// Editor litter and permission changes in another bundle.
	writeFile(t, root, "quiet/.guide.json.swp", "swap")
	writeFile(t, root, "quiet/4913", "")
	writeFile(t, root, "quiet/guide.json~", "backup")
	writeFile(t, root, "quiet/video.mp4.part", "part")
	if err := os.Chmod(filepath.Join(root, "quiet"), 0o700); err != nil {
		t.Fatal(err)
	}
	settle(t, w, root, 1)
	inspect(t, w, func(st *state) {
		if st.deb.Pending("quiet") {
			t.Error("ignored files marked their bundle")
		}
	})
	flushCalls(t, w, clock, rec, "new", "zz")

	// A file in a folder that appeared with the upload is seen: the nested
	// folders are watched.
	writeFile(t, root, "new/doc/en/plan.pdf", "pdf v2")
	settle(t, w, root, 2)
	flushCalls(t, w, clock, rec, "new", "zz")

	// A folder nested deeper after the upload.
	writeFile(t, root, "new/doc/fr/a/b/plan.pdf", "pdf")
	settle(t, w, root, 3)
	flushCalls(t, w, clock, rec, "new", "zz")
	writeFile(t, root, "new/doc/fr/a/b/plan.pdf", "pdf v2")
	settle(t, w, root, 4)
	flushCalls(t, w, clock, rec, "new", "zz")

	// A whole bundle moved in from a hidden staging folder.
	writeFile(t, root, ".staging/moved/guide.json", "{}")
	if err := os.Rename(filepath.Join(root, ".staging/moved"), filepath.Join(root, "moved")); err != nil {
		t.Fatal(err)
	}
	settle(t, w, root, 5)
	flushCalls(t, w, clock, rec, "moved", "zz")
	writeFile(t, root, "moved/guide.json", "{ }")
	settle(t, w, root, 6)
	flushCalls(t, w, clock, rec, "moved", "zz")

	// Deleting a bundle unpublishes it.
	if err := os.RemoveAll(filepath.Join(root, "new")); err != nil {
		t.Fatal(err)
	}
	settle(t, w, root, 7)
	clock.Advance(DefaultDebounce)
	calls := map[call]bool{rec.wait(t): true, rec.wait(t): true}
	if !calls[call{"removed", "new"}] || !calls[call{"changed", "zz"}] {
		t.Errorf("calls = %v, want removed new and changed zz", calls)
	}
	expectNoMoreCalls(t, w, rec)
}

func TestPollingFindsChanges(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "a/guide.json", `{"a":1}`)
	writeFile(t, root, "b/guide.json", `{"b":1}`)
	rec := newRecorder()
	cfg := testConfig(root, rec, (&syncedLog{}).logger())
	cfg.Poll, cfg.Debounce, cfg.Jobs = 10*time.Millisecond, time.Millisecond, 1
	w, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if w.Mode() != ModePoll {
		t.Fatalf("mode = %s, want %s", w.Mode(), ModePoll)
	}
	started(t, w)

	later := time.Now().Add(time.Hour)
	writeFile(t, root, "a/guide.json", `{"a":2}`) // same size
	os.Chtimes(filepath.Join(root, "a/guide.json"), later, later)
	rec.expect(t, call{"changed", "a"})
	writeFile(t, root, "c/photos/x.jpg", "jpeg")
	rec.expect(t, call{"changed", "c"})
	if err := os.RemoveAll(filepath.Join(root, "b")); err != nil {
		t.Fatal(err)
	}
	rec.expect(t, call{"removed", "b"})
}

func TestFallbackToPolling(t *testing.T) {
	t.Run("events cannot start", func(t *testing.T) {
		root := t.TempDir()
		writeFile(t, root, "a/guide.json", `{}`)
		rec := newRecorder()
		log := &syncedLog{}
		cfg := testConfig(root, rec, log.logger())
		cfg.FallbackPoll, cfg.Debounce = 10*time.Millisecond, time.Millisecond
		cfg.newEvents = func() (*fsnotify.Watcher, error) { return nil, errors.New("too many open files") }
		w, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if w.Mode() != ModePoll {
			t.Fatalf("mode = %s, want %s", w.Mode(), ModePoll)
		}
		if n := strings.Count(log.String(), "level=WARN"); n != 1 || !strings.Contains(log.String(), "too many open files") {
			t.Errorf("want one warning naming the cause, got:\n%s", log)
		}
		started(t, w)
		writeFile(t, root, "a/guide.json", `{"changed":true}`)
		rec.expect(t, call{"changed", "a"})
	})
	t.Run("a watch cannot be added later", func(t *testing.T) {
		root := t.TempDir()
		writeFile(t, root, "a/guide.json", `{}`)
		rec := newRecorder()
		log := &syncedLog{}
		cfg := testConfig(root, rec, log.logger())
		cfg.FallbackPoll, cfg.Debounce = 10*time.Millisecond, time.Millisecond
		w, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		started(t, w)
		// Written just before the watch began, "a" may be an upload: it is
		// checked at once. Waiting for that call keeps it apart from the
		// switch's (under load, the two came one after the other, and the
		// test took the second for a call about "b").
		rec.expect(t, call{"changed", "a"})
		// What readEvents sends when adding a new folder fails (ENOSPC).
		w.send(input{kind: inFallback, err: errors.New("no space left on device")})
		w.send(input{kind: inFallback, err: errors.New("no space left on device")})
		waitState(t, w, "polling", func(*state) bool { return w.Mode() == ModePoll })
		// Every bundle is checked once after the switch.
		rec.expect(t, call{"changed", "a"})
		writeFile(t, root, "b/guide.json", `{}`)
		rec.expect(t, call{"changed", "b"})
		if n := strings.Count(log.String(), "polling for changes instead"); n != 1 {
			t.Errorf("fallback logged %d times, want once:\n%s", n, log)
		}
	})
}

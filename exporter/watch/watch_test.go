package watch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestIgnored(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{"guide.json", false},
		{"photos", false},
		{"front.jpg", false},
		{"4913", true},
		{"49130", false},
		{".guide.json.swp", true},
		{"guide.json.swp", true},
		{"guide.json.swx", true},
		{"guide.json~", true},
		{".#guide.json", true},
		{"guide.json.tmp", true},
		{"GUIDE.JSON.TMP", true},
		{".DS_Store", true},
		{".tmp-123", true},
		{"video.mp4.part", true},
		{"plan.pdf.crdownload", true},
		{"tmp", false},
		{"rue-saint-denis.partial", true},
		{"rue-saint-denis.part", true},
		{"rue-saint-denis.tmp", true},
		{"rue-saint-denis.uploading", true},
		{"rue-saint-denis.INCOMPLETE", true},
		{"rue-saint-denis", false},
		{"partial", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Ignored(tt.name); got != tt.want {
				t.Errorf("Ignored(%q) = %v, want %v", tt.name, got, tt.want)
			}
		})
	}
}

// newClocked returns a started watcher over root driven by a fake clock.
// It polls once an hour, so nothing but the test marks folders.
func newClocked(t *testing.T, root string, h Handler, log *syncedLog) (*Watcher, *fakeClock) {
	t.Helper()
	clock := newFakeClock()
	if log == nil {
		log = &syncedLog{}
	}
	cfg := testConfig(root, h, log.logger())
	cfg.Poll, cfg.Jobs, cfg.Clock = time.Hour, 1, clock
	w, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	started(t, w)
	return w, clock
}

// touch marks folders in w's loop, now.
func touch(t *testing.T, w *Watcher, folders ...string) {
	t.Helper()
	w.send(input{kind: inTouch, folders: folders})
	inspect(t, w, func(*state) {})
}

func TestWatcherDebounce(t *testing.T) {
	root := t.TempDir()
	mkdirs(t, root, "a", "b")
	rec := newRecorder()
	w, clock := newClocked(t, root, rec, nil)

	t.Run("burst gives one call", func(t *testing.T) {
		for range 4 {
			touch(t, w, "a")
			clock.Advance(50 * time.Millisecond)
		}
		clock.Advance(99 * time.Millisecond) // 149ms after the last mark
		expectNoMoreCalls(t, w, rec)
		clock.Advance(time.Millisecond)
		rec.expect(t, call{"changed", "a"})
		expectNoMoreCalls(t, w, rec)
	})
	t.Run("steady trickle still exports", func(t *testing.T) {
		start := clock.Now()
		for range 19 { // a mark every 100ms
			touch(t, w, "b")
			clock.Advance(100 * time.Millisecond)
		}
		touch(t, w, "b")
		clock.Advance(99 * time.Millisecond)
		expectNoMoreCalls(t, w, rec)
		clock.Advance(time.Millisecond) // 2s after the first mark
		rec.expect(t, call{"changed", "b"})
		if got := clock.Now().Sub(start); got != DefaultMaxWait {
			t.Errorf("exported after %v, want %v", got, DefaultMaxWait)
		}
		touch(t, w, "b") // the trickle goes on: it gives another export
		clock.Advance(DefaultDebounce)
		rec.expect(t, call{"changed", "b"})
		expectNoMoreCalls(t, w, rec)
	})
}

func TestWatcherChangeDuringExport(t *testing.T) {
	root := t.TempDir()
	mkdirs(t, root, "a")
	rec := newRecorder()
	release := make(chan struct{})
	rec.block = release
	w, clock := newClocked(t, root, rec, nil)

	touch(t, w, "a")
	clock.Advance(150 * time.Millisecond)
	rec.expect(t, call{"changed", "a"}) // blocked inside Changed
	touch(t, w, "a")
	clock.Advance(150 * time.Millisecond)
	waitState(t, w, "a rerun mark", func(st *state) bool { return st.rerun["a"] })
	if len(rec.calls) != 0 {
		t.Fatal("a second call started while the first was running")
	}
	close(release)
	rec.expect(t, call{"changed", "a"})
	expectNoMoreCalls(t, w, rec)
}

func TestWatcherExpiry(t *testing.T) {
	root := t.TempDir()
	mkdirs(t, root, "a", "b")
	rec := newRecorder()
	rec.set("a", epoch.Add(time.Hour), nil)
	clock := newFakeClock()
	cfg := testConfig(root, rec, (&syncedLog{}).logger())
	cfg.Poll, cfg.Jobs, cfg.Clock = 24*time.Hour, 1, clock
	w, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	w.Schedule("b", epoch.Add(10*time.Minute)) // before Run: an expiry from the initial export
	started(t, w)

	touch(t, w, "a")
	clock.Advance(150 * time.Millisecond)
	rec.expect(t, call{"changed", "a"})
	waitState(t, w, "a's expiry", func(st *state) bool { return !st.expiry["a"].IsZero() })
	rec.set("a", time.Time{}, nil)

	clock.Advance(10 * time.Minute)
	rec.expect(t, call{"changed", "b"})
	expectNoMoreCalls(t, w, rec)

	clock.Advance(50*time.Minute - 150*time.Millisecond - time.Nanosecond)
	expectNoMoreCalls(t, w, rec)
	clock.Advance(time.Nanosecond) // a's view expires now
	rec.expect(t, call{"changed", "a"})
	waitState(t, w, "no expiry left", func(st *state) bool { return len(st.expiry) == 0 && idle(st) })
	expectNoMoreCalls(t, w, rec)
}

func TestWatcherRemoved(t *testing.T) {
	root := t.TempDir()
	mkdirs(t, root, "a", "b")
	rec := newRecorder()
	w, clock := newClocked(t, root, rec, nil)

	if err := os.RemoveAll(filepath.Join(root, "a")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, root, "notes.txt", "not a bundle")
	touch(t, w, "a", "notes.txt", "never-there")
	clock.Advance(150 * time.Millisecond)
	rec.expect(t, call{"removed", "a"})
	expectNoMoreCalls(t, w, rec)

	// A folder created and exported after start is known too.
	mkdirs(t, root, "c")
	touch(t, w, "c")
	clock.Advance(150 * time.Millisecond)
	rec.expect(t, call{"changed", "c"})
	waitState(t, w, "idle", idle)
	if err := os.Remove(filepath.Join(root, "c")); err != nil {
		t.Fatal(err)
	}
	touch(t, w, "c")
	clock.Advance(150 * time.Millisecond)
	rec.expect(t, call{"removed", "c"})
	expectNoMoreCalls(t, w, rec)
}

func TestWatcherReportsEachErrorOnce(t *testing.T) {
	root := t.TempDir()
	mkdirs(t, root, "a")
	rec := newRecorder()
	log := &syncedLog{}
	w, clock := newClocked(t, root, rec, log)
	export := func() {
		t.Helper()
		touch(t, w, "a")
		clock.Advance(150 * time.Millisecond)
		rec.expect(t, call{"changed", "a"})
		waitState(t, w, "idle", idle)
	}
	count := func(s string) int { return strings.Count(log.String(), s) }

	rec.set("a", time.Time{}, errBroken)
	export()
	export()
	if n := count("bundle not exported"); n != 1 {
		t.Errorf("same error reported %d times, want once:\n%s", n, log)
	}
	rec.set("a", time.Time{}, errors.New("photos/front.jpg: file does not exist"))
	export()
	if n := count("bundle not exported"); n != 2 {
		t.Errorf("a new error reported %d times in all, want 2:\n%s", n, log)
	}
	rec.set("a", time.Time{}, nil)
	export()
	if n := count("bundle accepted again"); n != 1 {
		t.Errorf("recovery logged %d times, want once:\n%s", n, log)
	}
	rec.set("a", time.Time{}, errBroken)
	export()
	if n := count("bundle not exported"); n != 3 {
		t.Errorf("an error after a success reported %d times in all, want 3:\n%s", n, log)
	}
}

func TestWatcherSurvivesHandlerPanic(t *testing.T) {
	root := t.TempDir()
	mkdirs(t, root, "a")
	log := &syncedLog{}
	w, clock := newClocked(t, root, panicky{}, log)
	touch(t, w, "a")
	clock.Advance(150 * time.Millisecond)
	waitState(t, w, "a finished call", func(st *state) bool { return st.calls == 1 && idle(st) })
	if !strings.Contains(log.String(), "internal error") {
		t.Errorf("panic not reported:\n%s", log)
	}
}

type panicky struct{}

func (panicky) Changed(context.Context, string) (time.Time, error) { panic("boom") }
func (panicky) Removed(context.Context, string) error              { panic("boom") }

func TestCloseWithoutRun(t *testing.T) {
	root := t.TempDir()
	w, err := New(testConfig(root, newRecorder(), (&syncedLog{}).logger()))
	if err != nil {
		t.Fatal(err)
	}
	if w.Mode() != ModeEvents {
		t.Fatalf("mode %s", w.Mode())
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// TestWatcherRetriesAfterError: a handler that fails and names a time to
// try again (an I/O error) is called again then, without a change of the
// folder, and its warning says when; one that fails without a time waits
// for the next change.
func TestWatcherRetriesAfterError(t *testing.T) {
	root := t.TempDir()
	mkdirs(t, root, "a")
	rec := newRecorder()
	log := &syncedLog{}
	w, clock := newClocked(t, root, rec, log)

	rec.set("a", epoch.Add(time.Hour), errors.New("write out/vA/reso/autofill: no space left on device"))
	touch(t, w, "a")
	clock.Advance(150 * time.Millisecond)
	rec.expect(t, call{"changed", "a"})
	waitState(t, w, "a due again", func(st *state) bool { return !st.expiry["a"].IsZero() && idle(st) })
	if !strings.Contains(log.String(), "retry_in=") {
		t.Errorf("the warning does not say when the export is tried again:\n%s", log)
	}
	rec.set("a", time.Time{}, errBroken)
	clock.Advance(time.Hour)
	rec.expect(t, call{"changed", "a"}) // tried again, not changed
	waitState(t, w, "idle", idle)
	clock.Advance(24 * time.Hour)
	expectNoMoreCalls(t, w, rec)
}

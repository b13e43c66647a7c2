package watch

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// flushCalls advances clock by the debounce and checks that the calls
// that follow are one Changed for each folder of want, in any order.
func flushCalls(t *testing.T, w *Watcher, clock *fakeClock, rec *recorder, want ...string) {
	t.Helper()
	clock.Advance(DefaultDebounce)
	got := map[string]int{}
	for range want {
		got[rec.wait(t).folder]++
	}
	expectNoMoreCalls(t, w, rec)
	for _, f := range want {
		if got[f] != 1 {
			t.Errorf("calls for %s = %d, want 1 (calls %v)", f, got[f], got)
		}
	}
}

// An upload that ends with a rename (the bundle folder renamed from its
// staging name, or guide.json renamed into place) is complete then: it is
// exported at once, with no quiet period (the fake clock never moves
// here until flushCalls). Anything else waits for the quiet period:
// copies, writes after the rename, files renamed into place other than
// the bundle's guide.json, and editors' temporary files, which never mark
// a bundle.
func TestRenamedUploadNeedsNoQuietPeriod(t *testing.T) {
	root := t.TempDir()
	mkdirs(t, root, "zz", "a/photos", "a/doc")
	writeFile(t, root, "a/guide.json", `{"v":1}`)
	rec := newRecorder()
	w, clock := newEventsWatcher(t, root, rec)
	rename := func(from, to string) {
		t.Helper()
		if err := os.Rename(filepath.Join(root, from), filepath.Join(root, to)); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("staging folder renamed into place", func(t *testing.T) {
		writeFile(t, root, "up.partial/photos/front.jpg", "jpeg")
		writeFile(t, root, "up.partial/guide.json", `{"v":1}`)
		rename("up.partial", "up")
		rec.expect(t, call{"changed", "up"})
		expectNoMoreCalls(t, w, rec)
	})
	t.Run("writes after the rename", func(t *testing.T) {
		writeFile(t, root, "up/photos/back.jpg", "jpeg")
		writeFile(t, root, "up/guide.json", `{"v":2}`)
		settle(t, w, root, 1)
		expectNoMoreCalls(t, w, rec)
		flushCalls(t, w, clock, rec, "up", "zz")
	})
	t.Run("guide.json renamed into place", func(t *testing.T) {
		writeFile(t, root, "a/photos/front.jpg", "jpeg")
		writeFile(t, root, "a/guide.json.tmp", `{"v":2}`)
		rename("a/guide.json.tmp", "a/guide.json")
		rec.expect(t, call{"changed", "a"})
		expectNoMoreCalls(t, w, rec)
		// The photo was written before: the export read it; nothing is
		// left pending for a.
		inspect(t, w, func(st *state) {
			if st.deb.Pending("a") {
				t.Error("a still pending after its upload was complete")
			}
		})
		writeFile(t, root, "a/photos/front.jpg", "jpeg v2")
		settle(t, w, root, 2)
		expectNoMoreCalls(t, w, rec)
		flushCalls(t, w, clock, rec, "a", "zz")
	})
	t.Run("in a new bundle folder", func(t *testing.T) {
		// Media first, guide.json last through a temporary name, once
		// the new folder is watched (a rename made before its watch is
		// in place is found by the walk that adds the watch, as a copy:
		// it waits for the quiet period).
		writeFile(t, root, "b/photos/front.jpg", "jpeg")
		waitState(t, w, "the new folder's event", func(st *state) bool { return st.deb.Pending("b") })
		writeFile(t, root, "b/guide.json.tmp", `{"v":1}`)
		rename("b/guide.json.tmp", "b/guide.json")
		rec.expect(t, call{"changed", "b"})
		expectNoMoreCalls(t, w, rec)
		// Its folders are watched: a later edit in the new sub-folder is
		// seen.
		writeFile(t, root, "b/photos/front.jpg", "jpeg v2")
		settle(t, w, root, 3)
		flushCalls(t, w, clock, rec, "b", "zz")
	})
	t.Run("copies wait for the quiet period", func(t *testing.T) {
		writeFile(t, root, "c/photos/front.jpg", "jpeg")
		writeFile(t, root, "c/guide.json", `{"v":1}`)
		writeFile(t, root, "a/guide.json", `{"v":3}`)
		settle(t, w, root, 4)
		expectNoMoreCalls(t, w, rec)
		flushCalls(t, w, clock, rec, "a", "c", "zz")
	})
	t.Run("other renames wait for the quiet period", func(t *testing.T) {
		writeFile(t, root, "a/photos/.back.jpg.tmp", "jpeg")
		rename("a/photos/.back.jpg.tmp", "a/photos/back.jpg")
		writeFile(t, root, "a/doc/guide.json.tmp", "{}")
		rename("a/doc/guide.json.tmp", "a/doc/guide.json")
		settle(t, w, root, 5)
		expectNoMoreCalls(t, w, rec)
		flushCalls(t, w, clock, rec, "a", "zz")
	})
	t.Run("editors' temporary files", func(t *testing.T) {
		// vim: its write test, a swap file, guide.json renamed to its
		// backup, written anew, the backup deleted.
		writeFile(t, root, "a/4913", "")
		writeFile(t, root, "a/.guide.json.swp", "swap")
		rename("a/guide.json", "a/guide.json~")
		writeFile(t, root, "a/guide.json", `{"v":4}`)
		if err := os.Remove(filepath.Join(root, "a/guide.json~")); err != nil {
			t.Fatal(err)
		}
		// Temporary names renamed among themselves.
		writeFile(t, root, "a/.guide.json.swx", "swap")
		rename("a/.guide.json.swx", "a/guide.json.tmp")
		rename("a/guide.json.tmp", "a/guide.json~")
		settle(t, w, root, 6)
		expectNoMoreCalls(t, w, rec)
		flushCalls(t, w, clock, rec, "a", "zz")
	})
}

// A bundle renamed into place as the watcher starts (before the source
// folder is watched: no event can come for it) is found by its stamps
// and exported at once, not after the watches of every other bundle
// folder are set up.
func TestUploadFoundAtStart(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{"old", "still", "new.partial"} {
		writeFile(t, root, f+"/guide.json", `{"guideId":"`+f+`"}`)
		writeFile(t, root, f+"/photos/front.jpg", "jpeg")
		backdate(t, root, f)
	}
	// Setting stamps back sets the status change times (ctime) to now:
	// let them fall before the start.
	time.Sleep(2 * stampSlack)
	start := time.Now()
	time.Sleep(stampSlack)
	if err := os.Rename(filepath.Join(root, "new.partial"), filepath.Join(root, "new")); err != nil {
		t.Fatal(err)
	}
	rec := newRecorder()
	clock := newFakeClock()
	cfg := testConfig(root, rec, (&syncedLog{}).logger())
	cfg.Jobs, cfg.Clock, cfg.Since = 1, clock, start
	holding, release := make(chan struct{}), make(chan struct{})
	cfg.beforeWatches = func(ctx context.Context) {
		close(holding)
		select {
		case <-release:
		case <-ctx.Done():
		}
	}
	w, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	started(t, w)
	<-holding
	waitState(t, w, "the upload found", func(st *state) bool { return st.deb.Pending("new") })
	clock.Advance(DefaultDebounce)
	rec.expect(t, call{"changed", "new"})
	expectNoMoreCalls(t, w, rec)
	w.mu.Lock()
	watched := w.events.Watched()
	w.mu.Unlock()
	if !slices.Contains(watched, "new") {
		t.Errorf("the upload's folder is not watched yet: %v", watched)
	}
	close(release)
	<-w.watched
	expectNoMoreCalls(t, w, rec)
}

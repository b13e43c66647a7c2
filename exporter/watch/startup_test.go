package watch

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// backdate sets the stamps of root/folder and of everything below it an
// hour back, as for a bundle uploaded long before the watcher started.
func backdate(t *testing.T, root, folder string) {
	t.Helper()
	old := time.Now().Add(-time.Hour)
	err := filepath.WalkDir(filepath.Join(root, folder), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Chtimes(p, old, old)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// An upload is exported while the watches of the bundle folders already
// there are still being set up, and a bundle changed before its watch was
// in place is exported once it is (the race of the background set-up).
func TestReactsBeforeExistingFoldersAreWatched(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{"old", "still"} {
		writeFile(t, root, f+"/guide.json", `{"guideId":"`+f+`"}`)
		writeFile(t, root, f+"/photos/front.jpg", "jpeg")
		backdate(t, root, f)
	}
	// Setting stamps back sets the status change times (ctime) to now,
	// and those count: let them fall before the watcher's start.
	time.Sleep(2 * stampSlack)
	rec := newRecorder()
	clock := newFakeClock()
	cfg := testConfig(root, rec, (&syncedLog{}).logger())
	cfg.Jobs, cfg.Clock = 1, clock
	// The watches wait for Hold (as watch's wait for the exporter's
	// records).
	holding, release := make(chan struct{}), make(chan struct{})
	cfg.beforeWatches = func(context.Context) { close(holding) }
	cfg.Hold = release
	w, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if w.Mode() != ModeEvents {
		t.Fatalf("mode = %s, want %s", w.Mode(), ModeEvents)
	}
	started(t, w)
	<-holding

	// The existing bundles are not watched yet: an upload renamed into the
	// root is seen all the same, and exported (at once: the rename
	// completed it).
	writeFile(t, root, ".upload/guide.json", `{"guideId":"new"}`)
	if err := os.Rename(filepath.Join(root, ".upload"), filepath.Join(root, "new")); err != nil {
		t.Fatal(err)
	}
	rec.expect(t, call{"changed", "new"})
	expectNoMoreCalls(t, w, rec)

	// A photo of an existing bundle is replaced before its folder's watch
	// exists: no event can come for it.
	writeFile(t, root, "old/photos/.front.jpg.tmp", "jpeg v2")
	if err := os.Rename(filepath.Join(root, "old/photos/.front.jpg.tmp"), filepath.Join(root, "old/photos/front.jpg")); err != nil {
		t.Fatal(err)
	}
	inspect(t, w, func(st *state) {
		if st.deb.Pending("old") {
			t.Error("a change in an unwatched folder was reported")
		}
	})

	// Once the watches are set up, the changed bundle is found by its
	// stamps; the unchanged one is left alone.
	close(release)
	<-w.watched
	waitState(t, w, "the changed bundle found", func(st *state) bool { return st.deb.Pending("old") })
	clock.Advance(DefaultDebounce)
	rec.expect(t, call{"changed", "old"})
	expectNoMoreCalls(t, w, rec)

	// And its later changes arrive as events.
	writeFile(t, root, "still/guide.json", `{"guideId":"still","v":2}`)
	waitState(t, w, "the event of a watched bundle", func(st *state) bool { return st.deb.Pending("still") })
	clock.Advance(DefaultDebounce)
	rec.expect(t, call{"changed", "still"})
	expectNoMoreCalls(t, w, rec)
}

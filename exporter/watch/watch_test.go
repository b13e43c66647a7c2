package watch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
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
	for rel, want := range map[string]bool{
		"a/guide.json": false, "a/.git/HEAD": true, ".a/guide.json": true,
		"a/photos/x.jpg~": true, "a/photos/x.jpg": false,
	} {
		if got := IgnoredPath(rel); got != want {
			t.Errorf("IgnoredPath(%q) = %v, want %v", rel, got, want)
		}
	}
}

func TestDebouncer(t *testing.T) {
	ms := func(n int) time.Time { return epoch.Add(time.Duration(n) * time.Millisecond) }
	tests := []struct {
		name    string
		touches []int // ms after epoch, all for folder "a"
		notDue  int   // ms: nothing due yet
		due     int   // ms: "a" due
	}{
		{"single", []int{0}, 149, 150},
		{"burst extends the quiet period", []int{0, 50, 100, 140}, 289, 290},
		{"trickle is capped by the maximum wait", []int{0, 100, 200, 300, 400, 500, 600}, 499, 500},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDebouncer(150*time.Millisecond, 500*time.Millisecond)
			for _, at := range tt.touches {
				d.touch("a", ms(at))
			}
			if next, ok := d.next(); !ok || !next.Equal(ms(tt.due)) {
				t.Errorf("next = %v %v, want %v", next, ok, ms(tt.due))
			}
			if got := d.due(ms(tt.notDue)); len(got) != 0 {
				t.Errorf("due at %dms = %v, want nothing", tt.notDue, got)
			}
			if got := d.due(ms(tt.due)); !slices.Equal(got, []string{"a"}) {
				t.Errorf("due at %dms = %v, want [a]", tt.due, got)
			}
			if _, ok := d.next(); ok {
				t.Error("still pending after due")
			}
		})
	}
	t.Run("folders are independent", func(t *testing.T) {
		d := newDebouncer(150*time.Millisecond, time.Second)
		d.touch("b", ms(0))
		d.touch("a", ms(100))
		d.touch("c", ms(0))
		if got := d.due(ms(150)); !slices.Equal(got, []string{"b", "c"}) {
			t.Errorf("due = %v, want [b c]", got)
		}
		if got := d.due(ms(250)); !slices.Equal(got, []string{"a"}) {
			t.Errorf("due = %v, want [a]", got)
		}
	})
}

// newClocked returns a started watcher over root driven by a fake clock.
// It polls once an hour, so nothing but the test marks folders.
func newClocked(t *testing.T, root string, h Handler, log *syncedLog) (*Watcher, *fakeClock) {
	t.Helper()
	clock := newFakeClock()
	if log == nil {
		log = &syncedLog{}
	}
	w, err := New(Config{Dir: root, Handler: h, Poll: time.Hour, Jobs: 1, Clock: clock, Logger: log.logger()})
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
	w, err := New(Config{Dir: root, Handler: rec, Poll: 24 * time.Hour, Jobs: 1, Clock: clock, Logger: (&syncedLog{}).logger()})
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

func TestEventFiltering(t *testing.T) {
	root := t.TempDir()
	mkdirs(t, root, "a/photos", "b/c/d")
	w, err := New(Config{Dir: root, Handler: newRecorder(), Poll: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := fsnotify.NewWatcher()
	if err != nil {
		t.Fatalf("fsnotify: %v", err)
	}
	defer ev.Close()
	j := func(rel string) string { return filepath.Join(root, filepath.FromSlash(rel)) }
	tests := []struct {
		name string
		ev   fsnotify.Event
		want string // touched folder, "" for none
	}{
		{"write", fsnotify.Event{Name: j("a/guide.json"), Op: fsnotify.Write}, "a"},
		{"create in nested folder", fsnotify.Event{Name: j("a/photos/x.jpg"), Op: fsnotify.Create}, "a"},
		{"rename away", fsnotify.Event{Name: j("a/guide.json"), Op: fsnotify.Rename}, "a"},
		{"remove bundle folder", fsnotify.Event{Name: j("a"), Op: fsnotify.Remove}, "a"},
		{"chmod only", fsnotify.Event{Name: j("a/guide.json"), Op: fsnotify.Chmod}, ""},
		{"write and chmod", fsnotify.Event{Name: j("a/guide.json"), Op: fsnotify.Write | fsnotify.Chmod}, "a"},
		{"vim swap", fsnotify.Event{Name: j("a/.guide.json.swp"), Op: fsnotify.Write}, ""},
		{"vim write test", fsnotify.Event{Name: j("a/4913"), Op: fsnotify.Create}, ""},
		{"backup", fsnotify.Event{Name: j("a/guide.json~"), Op: fsnotify.Create}, ""},
		{"emacs lock", fsnotify.Event{Name: j("a/.#guide.json"), Op: fsnotify.Create}, ""},
		{"temp upload", fsnotify.Event{Name: j("a/guide.json.tmp"), Op: fsnotify.Write}, ""},
		{"partial download", fsnotify.Event{Name: j("a/photos/x.jpg.part"), Op: fsnotify.Write}, ""},
		{"browser download", fsnotify.Event{Name: j("a/plan.pdf.crdownload"), Op: fsnotify.Write}, ""},
		{"dot folder in bundle", fsnotify.Event{Name: j("a/.git/index"), Op: fsnotify.Write}, ""},
		{"dot bundle", fsnotify.Event{Name: j(".upload/guide.json"), Op: fsnotify.Write}, ""},
		{"the root itself", fsnotify.Event{Name: root, Op: fsnotify.Write}, ""},
		{"outside the root", fsnotify.Event{Name: filepath.Join(filepath.Dir(root), "x", "guide.json"), Op: fsnotify.Write}, ""},
		{"new folder tree", fsnotify.Event{Name: j("b"), Op: fsnotify.Create}, "b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w.event(ev, tt.ev)
			got := ""
			select {
			case in := <-w.in:
				got = strings.Join(in.folders, ",")
			default:
			}
			if got != tt.want {
				t.Errorf("event %v touched %q, want %q", tt.ev, got, tt.want)
			}
		})
	}
	// The new folder and everything already inside it are watched.
	list := ev.WatchList()
	for _, dir := range []string{"b", "b/c", "b/c/d"} {
		if !slices.Contains(list, j(dir)) {
			t.Errorf("%s not watched; watching %v", dir, list)
		}
	}
}

func TestDigestFolder(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "guide.json", `{"a":1}`)
	writeFile(t, dir, "photos/front.jpg", "jpeg")
	base, err := digestFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	mtime := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name    string
		change  func()
		changed bool
	}{
		{"ignored files", func() {
			writeFile(t, dir, ".guide.json.swp", "x")
			writeFile(t, dir, "guide.json.tmp", "x")
			writeFile(t, dir, "photos/4913", "")
		}, false},
		{"same size, new mtime", func() {
			writeFile(t, dir, "guide.json", `{"a":2}`)
			os.Chtimes(filepath.Join(dir, "guide.json"), mtime, mtime)
		}, true},
		{"size", func() { writeFile(t, dir, "guide.json", `{"a":22}`) }, true},
		{"new file", func() { writeFile(t, dir, "photos/back.jpg", "jpeg") }, true},
		{"new nested folder", func() { mkdirs(t, dir, "doc/fr") }, true},
		{"rename", func() {
			os.Rename(filepath.Join(dir, "photos/back.jpg"), filepath.Join(dir, "photos/rear.jpg"))
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.change()
			d, err := digestFolder(dir)
			if err != nil {
				t.Fatal(err)
			}
			if (d != base) != tt.changed {
				t.Errorf("digest changed = %v, want %v", d != base, tt.changed)
			}
			base = d
		})
	}
	if _, err := digestFolder(filepath.Join(dir, "missing")); err == nil {
		t.Error("digest of a missing folder: no error")
	}
}

func TestCloseWithoutRun(t *testing.T) {
	root := t.TempDir()
	w, err := New(Config{Dir: root, Handler: newRecorder(), Logger: (&syncedLog{}).logger()})
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

package fswatch

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
)

func TestEventFiltering(t *testing.T) {
	root := t.TempDir()
	mkdirs(t, root, "a/photos", "b/c/d")
	tree, err := Watch(Config{Dir: root, Skip: skipTemp})
	if err != nil {
		t.Fatalf("fsnotify: %v", err)
	}
	defer tree.Close()
	// Only folder a is watched so far: b appears in the table below.
	if err := tree.ev.Remove(filepath.Join(root, "b")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"b/c", "b/c/d"} {
		if err := tree.ev.Remove(filepath.Join(root, p)); err != nil {
			t.Fatal(err)
		}
	}
	j := func(rel string) string { return filepath.Join(root, filepath.FromSlash(rel)) }
	if err := os.WriteFile(j("a/photos/real.jpg"), []byte("jpeg"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		ev   fsnotify.Event
		want string // reported path, "" for none
	}{
		{"write", fsnotify.Event{Name: j("a/guide.json"), Op: fsnotify.Write}, "a/guide.json"},
		{"create, gone before it is looked at", fsnotify.Event{Name: j("a/photos/x.jpg"), Op: fsnotify.Create}, "a/photos/x.jpg moved"},
		{"file renamed into place: no watch moved", fsnotify.Event{Name: j("a/photos/real.jpg"), Op: fsnotify.Create}, "a/photos/real.jpg"},
		{"rename away", fsnotify.Event{Name: j("a/guide.json"), Op: fsnotify.Rename}, "a/guide.json moved"},
		{"remove bundle folder", fsnotify.Event{Name: j("a"), Op: fsnotify.Remove}, "a moved"},
		{"chmod only", fsnotify.Event{Name: j("a/guide.json"), Op: fsnotify.Chmod}, ""},
		{"write and chmod", fsnotify.Event{Name: j("a/guide.json"), Op: fsnotify.Write | fsnotify.Chmod}, "a/guide.json"},
		{"vim swap", fsnotify.Event{Name: j("a/.guide.json.swp"), Op: fsnotify.Write}, ""},
		{"vim write test", fsnotify.Event{Name: j("a/4913"), Op: fsnotify.Create}, ""},
		{"backup", fsnotify.Event{Name: j("a/guide.json~"), Op: fsnotify.Create}, ""},
		{"emacs lock", fsnotify.Event{Name: j("a/.#guide.json"), Op: fsnotify.Create}, ""},
		{"temp upload", fsnotify.Event{Name: j("a/guide.json.tmp"), Op: fsnotify.Write}, ""},
		{"dot folder in bundle", fsnotify.Event{Name: j("a/.git/index"), Op: fsnotify.Write}, ""},
		{"dot bundle", fsnotify.Event{Name: j(".upload/guide.json"), Op: fsnotify.Write}, ""},
		{"the root itself", fsnotify.Event{Name: root, Op: fsnotify.Write}, ""},
		{"outside the root", fsnotify.Event{Name: filepath.Join(filepath.Dir(root), "x", "guide.json"), Op: fsnotify.Write}, ""},
		{"new folder tree", fsnotify.Event{Name: j("b"), Op: fsnotify.Create}, "b moved"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ""
			tree.event(tt.ev, func(c Change) {
				got = c.Path
				if c.Moved {
					got += " moved"
				}
			}, func(err error) { t.Errorf("error %v", err) })
			if got != tt.want {
				t.Errorf("event %v touched %q, want %q", tt.ev, got, tt.want)
			}
		})
	}
	// The new folder and everything already inside it are watched.
	list := tree.ev.WatchList()
	for _, dir := range []string{"b", "b/c", "b/c/d"} {
		if !slices.Contains(list, j(dir)) {
			t.Errorf("%s not watched; watching %v", dir, list)
		}
	}
}

// TestRenewAfterRename renames a watched folder with a watched sub-folder
// and checks that, once renewed, both are watched under their new names
// and report changes.
func TestRenewAfterRename(t *testing.T) {
	root := t.TempDir()
	mkdirs(t, root, "a/photos")
	tree, err := Watch(Config{Dir: root})
	if err != nil {
		t.Fatalf("fsnotify: %v", err)
	}
	defer tree.Close()
	changes := make(chan Change, 100)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go tree.Run(ctx, func(c Change) { changes <- c }, func(err error) { t.Errorf("error %v", err) })
	waitFor := func(path string) {
		t.Helper()
		timeout := time.After(10 * time.Second)
		for {
			select {
			case c := <-changes:
				if c.Path == path {
					return
				}
			case <-timeout:
				t.Fatalf("no change of %s within 10s", path)
			}
		}
	}

	if err := os.Rename(filepath.Join(root, "a"), filepath.Join(root, "b")); err != nil {
		t.Fatal(err)
	}
	waitFor("b")
	// A sentinel: once it is reported, the move events before it were read.
	writeFile(t, root, "sentinel", "x")
	waitFor("sentinel")
	if err := tree.Renew([]string{"a", "b"}); err != nil {
		t.Fatal(err)
	}
	got := tree.Watched()
	slices.Sort(got)
	if want := []string{".", "b", "b/photos"}; !slices.Equal(got, want) {
		t.Errorf("watched %v, want %v", got, want)
	}
	writeFile(t, root, "b/guide.json", "1")
	waitFor("b/guide.json")
	writeFile(t, root, "b/photos/x.jpg", "1")
	waitFor("b/photos/x.jpg")
}

// waitCoarseClock lets the kernel's coarse clock, which stamps files,
// pass the time.Now read before: status change times (ctime) cannot be
// set back, so a test separates "before" from "after" in time.
func waitCoarseClock() { time.Sleep(30 * time.Millisecond) }

func TestAddExisting(t *testing.T) {
	root := t.TempDir()
	mkdirs(t, root, "a/photos", "b/doc/en", "c", "d.partial/photos", "e", ".hidden/x")
	writeFile(t, root, "a/photos/front.jpg", "jpeg")
	writeFile(t, root, "b/doc/en/plan.pdf", "pdf")
	writeFile(t, root, "c/guide.json", "{}")
	writeFile(t, root, "c/.guide.json.swp", "swap")
	writeFile(t, root, "d.partial/guide.json", "{}")
	writeFile(t, root, "e/guide.json", "{}")
	old := time.Now().Add(-time.Hour)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		return os.Chtimes(p, old, old)
	})
	if err != nil {
		t.Fatal(err)
	}
	waitCoarseClock()
	since := time.Now()
	waitCoarseClock()
	tree, err := Watch(Config{Dir: root, Skip: skipTemp, RootOnly: true})
	if err != nil {
		t.Fatalf("fsnotify: %v", err)
	}
	defer tree.Close()
	if got := tree.Watched(); !slices.Equal(got, []string{"."}) {
		t.Fatalf("watched %v after Watch with RootOnly, want only the root", got)
	}
	// Changed before their watches exist: a file deep in b rewritten in
	// place, a temporary file only (skipped) in c, the staging folder
	// d.partial renamed into place (its files keep their old stamps), a
	// file of e with its stamps set back.
	writeFile(t, root, "b/doc/en/plan.pdf", "pdf v2")
	writeFile(t, root, "c/.guide.json.swp", "swap v2")
	if err := os.Rename(filepath.Join(root, "d.partial"), filepath.Join(root, "d")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, root, "e/guide.json", `{"v":2}`)
	if err := os.Chtimes(filepath.Join(root, "e/guide.json"), old, old); err != nil {
		t.Fatal(err)
	}
	var changed []string
	if err := tree.AddExisting(context.Background(), []string{"a", "b", "c", "d", "e", "gone"}, since, func(f string) { changed = append(changed, f) }); err != nil {
		t.Fatal(err)
	}
	if want := []string{"b", "d", "e"}; !slices.Equal(changed, want) {
		t.Errorf("changed %v, want %v", changed, want)
	}
	got := tree.Watched()
	slices.Sort(got)
	if want := []string{".", "a", "a/photos", "b", "b/doc", "b/doc/en", "c", "d", "d/photos", "e"}; !slices.Equal(got, want) {
		t.Errorf("watched %v, want %v", got, want)
	}
	// Recent finds, by their own stamps alone, the folders renamed into
	// place or whose entries changed: d, not b (a file rewritten in place).
	if got, want := Recent(root, []string{"a", "b", "c", "d", "e"}, since), []string{"d"}; !slices.Equal(got, want) {
		t.Errorf("Recent = %v, want %v", got, want)
	}
}

// TestRenamedIntoPlace checks, with real events, which changes are
// Renamed (complete on arrival) and Moved (watches to renew).
func TestRenamedIntoPlace(t *testing.T) {
	root := t.TempDir()
	mkdirs(t, root, "a", ".staging/s")
	writeFile(t, root, "up.partial/photos/front.jpg", "jpeg")
	writeFile(t, root, "up.partial/guide.json", "{}")
	tree, err := Watch(Config{Dir: root, Skip: Temporary})
	if err != nil {
		t.Fatalf("fsnotify: %v", err)
	}
	defer tree.Close()
	changes := make(chan Change, 100)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go tree.Run(ctx, func(c Change) { changes <- c }, func(err error) { t.Errorf("error %v", err) })
	// next checks the next change, skipping repeats of the last one (a
	// write gives several events).
	var last Change
	next := func(want Change) {
		t.Helper()
		for {
			select {
			case got := <-changes:
				if got == last {
					continue
				}
				last = got
				if got != want {
					t.Errorf("change %+v, want %+v", got, want)
				}
				return
			case <-time.After(10 * time.Second):
				t.Fatalf("no change within 10s, want %+v", want)
			}
		}
	}
	j := func(rel string) string { return filepath.Join(root, filepath.FromSlash(rel)) }
	mv := func(from, to string) {
		t.Helper()
		if err := os.Rename(j(from), j(to)); err != nil {
			t.Fatal(err)
		}
	}

	// A staging folder renamed into place: complete, and no watch came
	// with it (up.partial was never watched).
	mv("up.partial", "up")
	next(Change{Path: "up", Renamed: true})
	// guide.json saved through a temporary name: complete.
	writeFile(t, root, "up/guide.json.tmp", `{"v":2}`)
	mv("up/guide.json.tmp", "up/guide.json")
	next(Change{Path: "up/guide.json", Renamed: true})
	// Written in place, created in place: not complete.
	writeFile(t, root, "up/guide.json", `{"v":3}`)
	next(Change{Path: "up/guide.json"})
	writeFile(t, root, "a/guide.json", "{}")
	next(Change{Path: "a/guide.json"})
	mkdirs(t, root, "b")
	next(Change{Path: "b", Moved: true})
	// A watched folder renamed: complete, and its watches moved.
	mv("up", "up2")
	next(Change{Path: "up", Moved: true})
	next(Change{Path: "up2", Moved: true, Renamed: true})
	next(Change{Path: "up", Moved: true}) // the folder's own move event
	// Moved in from a folder that is not watched: the two halves of the
	// rename are not paired.
	mv(".staging/s", "s")
	next(Change{Path: "s", Moved: true})
}

// TestRenewOneFolder checks that renewing one bundle folder leaves the
// watches of the others in place.
func TestRenewOneFolder(t *testing.T) {
	root := t.TempDir()
	mkdirs(t, root, "a/photos", "b/photos/x")
	tree, err := Watch(Config{Dir: root})
	if err != nil {
		t.Fatalf("fsnotify: %v", err)
	}
	defer tree.Close()
	if err := os.RemoveAll(filepath.Join(root, "a/photos")); err != nil {
		t.Fatal(err)
	}
	if err := tree.Renew([]string{"a", "a"}); err != nil {
		t.Fatal(err)
	}
	got := tree.Watched()
	slices.Sort(got)
	if want := []string{".", "a", "b", "b/photos", "b/photos/x"}; !slices.Equal(got, want) {
		t.Errorf("watched %v, want %v", got, want)
	}
	if got, want := tree.watched["a"], []string{filepath.Join(root, "a")}; !slices.Equal(got, want) {
		t.Errorf("watches filed under a: %v, want %v", got, want)
	}
}

// TestRenewAll renames a watched folder while no event is read (as when
// the kernel loses them) and checks that RenewAll, given the folders
// present, leaves no watch filed under the old names.
func TestRenewAll(t *testing.T) {
	root := t.TempDir()
	mkdirs(t, root, "a/photos", "b")
	tree, err := Watch(Config{Dir: root})
	if err != nil {
		t.Fatalf("fsnotify: %v", err)
	}
	defer tree.Close()
	if err := os.Rename(filepath.Join(root, "a"), filepath.Join(root, "c")); err != nil {
		t.Fatal(err)
	}
	if err := tree.RenewAll([]string{"b", "c"}); err != nil {
		t.Fatal(err)
	}
	got := tree.Watched()
	slices.Sort(got)
	if want := []string{".", "b", "c", "c/photos"}; !slices.Equal(got, want) {
		t.Errorf("watched %v, want %v", got, want)
	}
}

package fswatch

import (
	"context"
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

func TestAddExisting(t *testing.T) {
	root := t.TempDir()
	mkdirs(t, root, "a/photos", "b/doc/en", "c", ".hidden/x")
	writeFile(t, root, "a/photos/front.jpg", "jpeg")
	writeFile(t, root, "b/doc/en/plan.pdf", "pdf")
	writeFile(t, root, "c/guide.json", "{}")
	old := time.Now().Add(-time.Hour)
	for _, p := range []string{"a", "a/photos", "a/photos/front.jpg", "b", "b/doc", "b/doc/en", "b/doc/en/plan.pdf", "c", "c/guide.json"} {
		if err := os.Chtimes(filepath.Join(root, p), old, old); err != nil {
			t.Fatal(err)
		}
	}
	since := time.Now().Add(-time.Second)
	tree, err := Watch(Config{Dir: root, Skip: skipTemp, RootOnly: true})
	if err != nil {
		t.Fatalf("fsnotify: %v", err)
	}
	defer tree.Close()
	if got := tree.Watched(); !slices.Equal(got, []string{"."}) {
		t.Fatalf("watched %v after Watch with RootOnly, want only the root", got)
	}
	// Changed before their watches exist: a file deep in b, and a
	// temporary file only (skipped) in c.
	writeFile(t, root, "b/doc/en/plan.pdf", "pdf v2")
	if err := os.Chtimes(filepath.Join(root, "b/doc/en"), old, old); err != nil {
		t.Fatal(err)
	}
	writeFile(t, root, "c/.guide.json.swp", "swap")
	if err := os.Chtimes(filepath.Join(root, "c"), old, old); err != nil {
		t.Fatal(err)
	}
	var changed []string
	if err := tree.AddExisting(context.Background(), []string{"a", "b", "c", "gone"}, since, func(f string) { changed = append(changed, f) }); err != nil {
		t.Fatal(err)
	}
	if want := []string{"b"}; !slices.Equal(changed, want) {
		t.Errorf("changed %v, want %v", changed, want)
	}
	got := tree.Watched()
	slices.Sort(got)
	if want := []string{".", "a", "a/photos", "b", "b/doc", "b/doc/en", "c"}; !slices.Equal(got, want) {
		t.Errorf("watched %v, want %v", got, want)
	}
}

package watch

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/guidepub/guidepub/site/fswatch"
)

// published is what a guide publication holds in the model: the folder that
// published it and the revision it was published at.
type published struct {
	folder string
	rev    int
}

// model is a Handler that publishes like the exporter does, by guide id:
// guide.json holds "<guide id> <revision>". A folder may take over a guide
// id whose previous folder no longer holds it (a move); Removed unpublishes
// only what the removed folder still holds. Every unpublish is recorded.
type model struct {
	root string

	mu          sync.Mutex
	pub         map[string]published // guide id → publication
	unpublished []string             // guide ids unpublished, in order
}

func newModel(root string) *model {
	return &model{root: root, pub: map[string]published{}}
}

// readGuide returns the guide id and revision in dir/guide.json.
func readGuide(dir string) (id string, rev int, err error) {
	raw, err := os.ReadFile(filepath.Join(dir, "guide.json"))
	if err != nil {
		return "", 0, err
	}
	id, revText, ok := strings.Cut(strings.TrimSpace(string(raw)), " ")
	if !ok {
		return "", 0, errBroken
	}
	rev, err = strconv.Atoi(revText)
	return id, rev, err
}

func (m *model) Changed(ctx context.Context, folder string) (time.Time, error) {
	id, rev, err := readGuide(filepath.Join(m.root, folder))
	if err != nil {
		return time.Time{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if p, ok := m.pub[id]; ok && p.folder != folder {
		if other, _, err := readGuide(filepath.Join(m.root, p.folder)); err == nil && other == id {
			return time.Time{}, fmt.Errorf("guide id %q is already published by bundle %q", id, p.folder)
		}
	}
	for gid, p := range m.pub {
		if p.folder == folder && gid != id {
			delete(m.pub, gid)
			m.unpublished = append(m.unpublished, gid)
		}
	}
	m.pub[id] = published{folder, rev}
	return time.Time{}, nil
}

func (m *model) Removed(ctx context.Context, folder string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for gid, p := range m.pub {
		if p.folder == folder {
			delete(m.pub, gid)
			m.unpublished = append(m.unpublished, gid)
		}
	}
	return nil
}

// snapshot returns a copy of the publications and of the unpublished ids.
func (m *model) state() (map[string]published, []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	pub := make(map[string]published, len(m.pub))
	for k, v := range m.pub {
		pub[k] = v
	}
	return pub, append([]string(nil), m.unpublished...)
}

// fullExport returns what exporting the whole source folder afresh
// publishes: every bundle folder (not ignored) with a readable guide.json.
func fullExport(t *testing.T, root string) map[string]published {
	t.Helper()
	folders, err := fswatch.Folders(root, Ignored)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]published{}
	for _, f := range folders {
		if id, rev, err := readGuide(filepath.Join(root, f)); err == nil {
			out[id] = published{f, rev}
		}
	}
	return out
}

// newRealtime returns a started watcher over root with the system clock
// and a short debounce; poll > 0 polls instead of using events.
func newRealtime(t *testing.T, root string, h Handler, poll time.Duration) *Watcher {
	t.Helper()
	cfg := testConfig(root, h, (&syncedLog{}).logger())
	cfg.Debounce, cfg.MaxWait, cfg.Poll, cfg.Jobs = 20*time.Millisecond, 200*time.Millisecond, poll, 2
	w, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if poll == 0 && w.Mode() != ModeEvents {
		t.Fatalf("mode = %s, want %s", w.Mode(), ModeEvents)
	}
	started(t, w)
	return w
}

// converge waits until the model publishes exactly want, failing after 10s.
func converge(t *testing.T, m *model, want map[string]published, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, _ := m.state()
		if reflect.DeepEqual(got, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: published %v, want %v", what, got, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// quiet waits for the watcher to be idle for a while (no event pending).
func quiet(t *testing.T, w *Watcher) {
	t.Helper()
	time.Sleep(100 * time.Millisecond)
	waitState(t, w, "an idle watcher", func(st *state) bool { return idle(st) })
}

func rename(t *testing.T, root, from, to string) {
	t.Helper()
	if err := os.Rename(filepath.Join(root, from), filepath.Join(root, to)); err != nil {
		t.Fatal(err)
	}
}

func TestRenameIntoPlace(t *testing.T) {
	for _, staging := range []string{"rue-saint-denis.partial", "incoming"} {
		t.Run(staging, func(t *testing.T) {
			root := t.TempDir()
			m := newModel(root)
			w := newRealtime(t, root, m, 0)

			// The careful uploader: copy into a staging folder, then rename.
			writeFile(t, root, staging+"/photos/front.jpg", "jpeg")
			writeFile(t, root, staging+"/guide.json", "g1 1")
			quiet(t, w)
			if strings.HasSuffix(staging, ".partial") {
				if got, _ := m.state(); len(got) != 0 {
					t.Fatalf("a staging folder was published: %v", got)
				}
			}
			rename(t, root, staging, "rue-saint-denis")
			converge(t, m, map[string]published{"g1": {"rue-saint-denis", 1}}, "after the rename")

			// Later edits are seen, the first and the second.
			for rev := 2; rev <= 3; rev++ {
				writeFile(t, root, "rue-saint-denis/guide.json", fmt.Sprintf("g1 %d", rev))
				converge(t, m, map[string]published{"g1": {"rue-saint-denis", rev}}, fmt.Sprintf("edit %d", rev-1))
			}
			// And in a folder that came with the rename.
			writeFile(t, root, "rue-saint-denis/photos/back.jpg", "jpeg")
			writeFile(t, root, "rue-saint-denis/guide.json", "g1 4")
			converge(t, m, map[string]published{"g1": {"rue-saint-denis", 4}}, "edit 3")
		})
	}
}

func TestStagingNotPublished(t *testing.T) {
	for _, suffix := range []string{".partial", ".part", ".tmp", ".uploading", ".incomplete"} {
		t.Run(suffix, func(t *testing.T) {
			root := t.TempDir()
			rec := newRecorder()
			w := newRealtime(t, root, rec, 0)
			writeFile(t, root, "rue-saint-denis"+suffix+"/guide.json", "g1 1")
			writeFile(t, root, "rue-saint-denis"+suffix+"/photos/front.jpg", "jpeg")
			quiet(t, w)
			expectNoMoreCalls(t, w, rec)
		})
	}
}

func TestRenamePublishedFolder(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "rue-saint-denis/guide.json", "g1 1")
	writeFile(t, root, "rue-saint-denis/photos/front.jpg", "jpeg")
	m := newModel(root)
	if _, err := m.Changed(context.Background(), "rue-saint-denis"); err != nil {
		t.Fatal(err)
	}
	w := newRealtime(t, root, m, 0)

	rename(t, root, "rue-saint-denis", "rue-saint-denis-2")
	converge(t, m, map[string]published{"g1": {"rue-saint-denis-2", 1}}, "after the rename")
	for rev := 2; rev <= 3; rev++ {
		writeFile(t, root, "rue-saint-denis-2/guide.json", fmt.Sprintf("g1 %d", rev))
		converge(t, m, map[string]published{"g1": {"rue-saint-denis-2", rev}}, fmt.Sprintf("edit %d", rev-1))
	}
	// Renamed back, and a sub-folder renamed.
	rename(t, root, "rue-saint-denis-2", "rue-saint-denis")
	rename(t, root, "rue-saint-denis/photos", "rue-saint-denis/pictures")
	converge(t, m, map[string]published{"g1": {"rue-saint-denis", 3}}, "after the second rename")
	writeFile(t, root, "rue-saint-denis/pictures/back.jpg", "jpeg")
	writeFile(t, root, "rue-saint-denis/guide.json", "g1 4")
	converge(t, m, map[string]published{"g1": {"rue-saint-denis", 4}}, "edit after the second rename")
	quiet(t, w)
	// A move never unpublishes the guide, not even for a moment.
	if _, gone := m.state(); len(gone) != 0 {
		t.Errorf("the guide was unpublished during a move: %v", gone)
	}
}

// TestRandomRenames applies seeded random creates, edits, renames (of
// bundle folders, through staging names, of sub-folders and files) and
// deletes, and checks after each round that what the watcher published is
// what a full export gives, both with events and with polling.
func TestRandomRenames(t *testing.T) {
	for _, mode := range []string{ModeEvents, ModePoll} {
		t.Run(mode, func(t *testing.T) {
			for seed := int64(1); seed <= 3; seed++ {
				t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) { randomRenames(t, seed, mode) })
			}
		})
	}
}

func randomRenames(t *testing.T, seed int64, mode string) {
	root := t.TempDir()
	m := newModel(root)
	poll := time.Duration(0)
	if mode == ModePoll {
		poll = 15 * time.Millisecond
	}
	w := newRealtime(t, root, m, poll)
	// With events, a polling watcher over the same tree is a second
	// oracle: both must publish what a full export gives.
	var polled *model
	if mode == ModeEvents {
		polled = newModel(root)
		newRealtime(t, root, polled, 15*time.Millisecond)
	}
	rng := rand.New(rand.NewSource(seed))
	ids, names := 0, 0
	newName := func() string { names++; return fmt.Sprintf("b%02d", names) }
	rev := map[string]int{} // guide id → last revision written
	folders := func() []string {
		fs, err := fswatch.Folders(root, Ignored)
		if err != nil {
			t.Fatal(err)
		}
		return fs
	}
	pick := func() (string, bool) {
		fs := folders()
		if len(fs) == 0 {
			return "", false
		}
		return fs[rng.Intn(len(fs))], true
	}
	for round := 0; round < 4; round++ {
		for step := 0; step < 15; step++ {
			f, ok := pick()
			op := rng.Intn(8)
			if !ok {
				op = 0
			}
			switch op {
			case 0: // a new bundle, sometimes through a staging folder
				ids++
				id, name := fmt.Sprintf("g%d", ids), newName()
				rev[id] = 1
				if rng.Intn(2) == 0 {
					writeFile(t, root, name+".partial/photos/a.jpg", "jpeg")
					writeFile(t, root, name+".partial/guide.json", id+" 1")
					rename(t, root, name+".partial", name)
				} else {
					writeFile(t, root, name+"/guide.json", id+" 1")
				}
			case 1, 2: // an edit, written in place or saved through a temp file
				id, _, err := readGuide(filepath.Join(root, f))
				if err != nil {
					continue
				}
				rev[id]++
				if rng.Intn(2) == 0 {
					writeFile(t, root, f+"/guide.json", fmt.Sprintf("%s %d", id, rev[id]))
				} else {
					writeFile(t, root, f+"/guide.json.tmp", fmt.Sprintf("%s %d", id, rev[id]))
					rename(t, root, f+"/guide.json.tmp", f+"/guide.json")
				}
			case 3, 4: // the bundle folder renamed, sometimes through a staging name
				to := newName()
				if rng.Intn(3) == 0 {
					rename(t, root, f, to+".partial")
					rename(t, root, to+".partial", to)
				} else {
					rename(t, root, f, to)
				}
			case 5: // a sub-folder created or renamed, a file renamed
				dir := filepath.Join(root, f)
				_, errPhotos := os.Stat(filepath.Join(dir, "photos"))
				_, errPictures := os.Stat(filepath.Join(dir, "pictures"))
				switch {
				case errPhotos == nil && errPictures != nil:
					rename(t, root, f+"/photos", f+"/pictures")
				case errPictures == nil && errPhotos != nil:
					rename(t, root, f+"/pictures", f+"/photos")
				default:
					writeFile(t, root, f+"/photos/a.jpg", "jpeg")
					rename(t, root, f+"/photos/a.jpg", f+"/photos/"+newName()+".jpg")
				}
			case 6: // a file in a sub-folder
				writeFile(t, root, f+"/photos/"+newName()+".jpg", "jpeg")
			case 7: // deleted
				if rng.Intn(2) == 0 {
					if err := os.RemoveAll(filepath.Join(root, f)); err != nil {
						t.Fatal(err)
					}
				}
			}
			if rng.Intn(3) == 0 {
				time.Sleep(time.Duration(rng.Intn(30)) * time.Millisecond)
			}
		}
		converge(t, m, fullExport(t, root), fmt.Sprintf("round %d", round))
		if polled != nil {
			converge(t, polled, fullExport(t, root), fmt.Sprintf("round %d, polling", round))
		}
	}
	quiet(t, w)
	converge(t, m, fullExport(t, root), "at the end")
}

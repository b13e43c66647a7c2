package watch_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/exporter"
	"github.com/guidepub/guidepub/exporter/watch"
	"github.com/guidepub/guidepub/fixtures"
)

// exportHandler re-exports and unpublishes with a real Exporter.
type exportHandler struct{ ex *exporter.Exporter }

func (h exportHandler) Changed(ctx context.Context, folder string) (time.Time, error) {
	res, err := h.ex.ExportBundle(ctx, folder)
	if err != nil {
		return time.Time{}, err
	}
	return res.NextChange, nil
}

func (h exportHandler) Removed(ctx context.Context, folder string) error {
	_, err := h.ex.RemoveBundle(ctx, folder)
	return err
}

// copyBundle writes the sample bundle sample into dir.
func copyBundle(t *testing.T, sample, dir string) {
	t.Helper()
	files, err := fixtures.BundleFiles(sample)
	if err != nil {
		t.Fatal(err)
	}
	for rel, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

var workOrder = regexp.MustCompile(`"workOrderId": "[^"]*"`)

// TestRenameWithExporter uploads a sample bundle the careful way (copy to
// a staging folder, rename into place), edits it twice, renames the
// published folder and edits it again, all with a real Exporter. While it
// runs, the guide is checked without pause: once published it stays
// published, and every file its manifest entry lists exists.
func TestRenameWithExporter(t *testing.T) {
	const sample, guideID = "rue-saint-denis", "gMTL4321DENIS"
	root := t.TempDir()
	src, out, priv := filepath.Join(root, "src"), filepath.Join(root, "out"), filepath.Join(root, "private")
	for _, d := range []string{src, out, priv} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	osfs := afero.NewOsFs()
	logger := slog.New(slog.DiscardHandler)
	ecfg := exporter.DefaultConfig()
	ecfg.Src, ecfg.SrcDir, ecfg.Out, ecfg.OutDir, ecfg.Private, ecfg.PrivateDir = osfs, src, osfs, out, osfs, priv
	ecfg.Logger = logger
	ex, err := exporter.New(ecfg)
	if err != nil {
		t.Fatal(err)
	}
	wcfg := watch.DefaultConfig()
	wcfg.Dir, wcfg.Handler, wcfg.Debounce, wcfg.Logger = src, exportHandler{ex}, 20*time.Millisecond, logger
	w, err := watch.New(wcfg)
	if err != nil {
		t.Fatal(err)
	}
	if w.Mode() != watch.ModeEvents {
		t.Fatalf("mode = %s, want %s", w.Mode(), watch.ModeEvents)
	}
	ctx, cancel := context.WithCancel(context.Background())
	runDone := make(chan error, 1)
	go func() { runDone <- w.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-runDone; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()

	// check reports what is wrong with the guide's publication now, ""
	// when it is published whole.
	check := func() (folder, revision, problem string) {
		mg, ok := ex.Manifest().Guides[guideID]
		if !ok {
			return "", "", "not published"
		}
		if len(mg.Files) == 0 {
			return "", "", "published without files"
		}
		missing := 0
		for _, p := range mg.Files {
			if _, err := os.Stat(filepath.Join(out, filepath.FromSlash(p))); errors.Is(err, fs.ErrNotExist) {
				missing++
			}
		}
		if missing > 0 {
			return "", "", fmt.Sprintf("%d of %d files listed in the manifest are missing", missing, len(mg.Files))
		}
		return mg.Folder, mg.Revision, ""
	}
	// waitFor waits until the guide is published whole from folder at a
	// revision other than not.
	waitFor := func(what, folder, not string) string {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for {
			f, rev, problem := check()
			if problem == "" && f == folder && rev != not {
				return rev
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: folder %q revision %q problem %q", what, f, rev, problem)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}

	copyBundle(t, sample, filepath.Join(src, sample+".partial"))
	time.Sleep(200 * time.Millisecond)
	if _, _, problem := check(); problem != "not published" {
		t.Fatalf("a staging folder was published (%s)", problem)
	}
	if err := os.Rename(filepath.Join(src, sample+".partial"), filepath.Join(src, sample)); err != nil {
		t.Fatal(err)
	}
	rev := waitFor("after the rename into place", sample, "")

	// From here on the guide must stay published whole.
	var mu sync.Mutex
	var problems []string
	stop := make(chan struct{})
	monitored := make(chan struct{})
	go func() {
		defer close(monitored)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, _, problem := check(); problem != "" {
				mu.Lock()
				problems = append(problems, problem)
				mu.Unlock()
			}
			time.Sleep(time.Millisecond)
		}
	}()
	edit := func(folder string, n int) {
		t.Helper()
		p := filepath.Join(src, folder, "guide.json")
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		edited := workOrder.ReplaceAllString(string(raw), fmt.Sprintf(`"workOrderId": "BT-%d"`, n))
		if edited == string(raw) {
			t.Fatal("the sample's workOrderId changed: fix the test")
		}
		if err := os.WriteFile(p, []byte(edited), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	edit(sample, 1)
	rev = waitFor("first edit", sample, rev)
	edit(sample, 2)
	rev = waitFor("second edit", sample, rev)
	if err := os.Rename(filepath.Join(src, sample), filepath.Join(src, "saint-denis-4321")); err != nil {
		t.Fatal(err)
	}
	waitFor("after renaming the published folder", "saint-denis-4321", "")
	edit("saint-denis-4321", 3)
	waitFor("edit after renaming the published folder", "saint-denis-4321", rev)
	close(stop)
	<-monitored
	if len(problems) > 0 {
		t.Errorf("the guide was not published whole %d times, first: %s", len(problems), problems[0])
	}
}

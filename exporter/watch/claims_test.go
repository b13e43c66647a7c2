package watch_test

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/exporter"
	"github.com/guidepub/guidepub/exporter/watch"
)

// TestMovedGuideKeepsItsIDs publishes a sample guide, then renames its
// folder again and again while another bundle, which claims the same view
// ids under another guide id, is edited at random moments around each
// rename. The other bundle must be rejected every time: the guide's ids
// stay its own while its folder moves (docs/watching.md), and only an
// explicit removal frees them. Throughout, the view's documents must hold
// the guide's data, never the other bundle's; at the end the guide is
// published whole from its last folder.
func TestMovedGuideKeepsItsIDs(t *testing.T) {
	const sample, guideID, hostileID = "rue-saint-denis", "gMTL4321DENIS", "gHOSTILE4321"
	rounds := 12
	if testing.Short() {
		rounds = 4
	}
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
	copyBundle(t, sample, filepath.Join(src, "a"))
	if _, err := ex.ExportAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := ex.Manifest().Guides[guideID]
	if len(want.Ids) < 2 {
		t.Fatalf("the sample publishes ids %v: fix the test", want.Ids)
	}

	// The hostile bundle: the sample under another guide id and alias,
	// with a marker in its data; it claims the sample's view ids.
	raw, err := os.ReadFile(filepath.Join(src, "a", "guide.json"))
	if err != nil {
		t.Fatal(err)
	}
	hostile := strings.NewReplacer(`"guideId": "`+guideID+`"`, `"guideId": "`+hostileID+`"`,
		`"alias": "rue-saint-denis"`, `"alias": "hostile-copy"`,
		"Édifice principal", "HOSTILE MARKER").Replace(string(raw))
	if !strings.Contains(hostile, hostileID) || !strings.Contains(hostile, "HOSTILE MARKER") {
		t.Fatal("the sample changed: fix the test")
	}
	copyBundle(t, sample, filepath.Join(src, "h"))
	writeHostile := func(n int) {
		t.Helper()
		data := workOrder.ReplaceAllString(hostile, fmt.Sprintf(`"workOrderId": "H-%d"`, n))
		if err := os.WriteFile(filepath.Join(src, "h", "guide.json"), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeHostile(0)

	wcfg := watch.DefaultConfig()
	wcfg.Dir, wcfg.Handler, wcfg.Debounce, wcfg.Logger = src, exportHandler{ex}, 10*time.Millisecond, logger
	wcfg.MaxWait, wcfg.Jobs = time.Second, 2
	w, err := watch.New(wcfg)
	if err != nil {
		t.Fatal(err)
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

	// check returns what is wrong now, "" when nothing is.
	check := func() string {
		m := ex.Manifest()
		if _, ok := m.Guides[hostileID]; ok {
			return "the other bundle was published"
		}
		mg, ok := m.Guides[guideID]
		if !ok {
			return "the guide was unpublished"
		}
		for _, id := range want.Ids {
			if !slices.Contains(mg.Ids, id) {
				return fmt.Sprintf("the guide lost id %s", id)
			}
		}
		for _, id := range want.Ids {
			data, err := os.ReadFile(filepath.Join(out, id, "data", "summary"))
			if err == nil && strings.Contains(string(data), "HOSTILE MARKER") {
				return fmt.Sprintf("%s serves the other bundle's data", id)
			}
		}
		return ""
	}
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
			if p := check(); p != "" {
				mu.Lock()
				if len(problems) == 0 || problems[len(problems)-1] != p {
					problems = append(problems, p)
				}
				mu.Unlock()
			}
			time.Sleep(time.Millisecond)
		}
	}()

	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 19))
	folder := "a"
	for i := 1; i <= rounds; i++ {
		next := fmt.Sprintf("a-moved%d", i)
		before := time.Duration(rng.IntN(30)) * time.Millisecond
		after := time.Duration(rng.IntN(30)) * time.Millisecond
		hostileFirst := rng.IntN(2) == 0
		if hostileFirst {
			writeHostile(i)
			time.Sleep(before)
		}
		if err := os.Rename(filepath.Join(src, folder), filepath.Join(src, next)); err != nil {
			t.Fatal(err)
		}
		folder = next
		if !hostileFirst {
			time.Sleep(after)
			writeHostile(i)
		}
		// Wait until the guide is published from its new folder.
		deadline := time.Now().Add(10 * time.Second)
		for ex.Manifest().Guides[guideID].Folder != folder {
			if time.Now().After(deadline) {
				mu.Lock()
				t.Fatalf("round %d: the guide was not published from %s (manifest: %q), problems seen: %q",
					i, folder, ex.Manifest().Guides[guideID].Folder, problems)
				mu.Unlock()
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	// Let the watcher settle (the move window, the last edits).
	time.Sleep(wcfg.MaxWait + 200*time.Millisecond)
	close(stop)
	<-monitored
	if p := check(); p != "" {
		problems = append(problems, "at the end: "+p)
	}
	if len(problems) > 0 {
		t.Errorf("problems seen, in order: %q", problems)
	}
	// The guide is whole: exported again from its last folder, it changes
	// nothing (and is not rejected).
	res, err := ex.ExportBundle(context.Background(), folder)
	if err != nil {
		t.Fatalf("export of %s after the moves: %v", folder, err)
	}
	if res.Written != 0 {
		t.Errorf("export of %s after the moves wrote %d files, want 0", folder, res.Written)
	}
}

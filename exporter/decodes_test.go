package exporter

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/exporter/media/mediatest"
	"github.com/guidepub/guidepub/exporter/write"
)

// kingErr returns the error of the 301-king-st-e guide in rep.
func kingErr(rep *Report) error {
	for _, g := range rep.Guides {
		if g.Folder == kingFolder {
			return g.Err
		}
	}
	return nil
}

// countDecodes counts, until the test ends, the decodes that start of the
// bundle file ("folder/file").
func countDecodes(t *testing.T, file string) func() int {
	var mu sync.Mutex
	n := 0
	write.DecodeHook = func(f string) {
		if f == file {
			mu.Lock()
			n++
			mu.Unlock()
		}
	}
	t.Cleanup(func() { write.DecodeHook = nil })
	return func() int {
		mu.Lock()
		defer mu.Unlock()
		return n
	}
}

// TestFailedDecodeNotRetried: a PDF that passes the bundle's checks but
// does not parse rejects the bundle when it is stripped; the failure is
// recorded, and the next exports refuse the file without parsing it again
// until the file changes.
func TestFailedDecodeNotRetried(t *testing.T) {
	ev := newEnv(t, fsKinds[0])
	const rel = "doc/floorplan_metric_en.pdf"
	plan := filepath.Join(ev.srcDir, kingFolder, filepath.FromSlash(rel))
	decodes := countDecodes(t, kingFolder+"/"+rel)
	if err := afero.WriteFile(ev.src, plan, []byte("%PDF-1.4\n1 0 obj (no catalog) endobj\n%%EOF\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := kingErr(ev.exportAll())
	if err == nil || !strings.Contains(err.Error(), "the file is a PDF document that does not parse") || decodes() != 1 {
		t.Fatalf("first export: %v, %d decodes", err, decodes())
	}
	records, _ := afero.ReadDir(ev.out, filepath.Join(ev.privDir, write.DecodesDir))
	if len(records) != 1 {
		t.Fatalf("%d decode records", len(records))
	}
	err = kingErr(ev.exportAll())
	var be *bundle.Error
	if !errors.As(err, &be) || !strings.Contains(err.Error(), "does not parse") || !strings.Contains(err.Error(), "(when it was last exported; it is not decoded again until it changes)") {
		t.Fatalf("second export: %v", err)
	}
	if decodes() != 1 {
		t.Errorf("the second export parsed the PDF again (%d decodes)", decodes())
	}
	// A new version of the file is tried, and published.
	if err := afero.WriteFile(ev.src, plan, mediatest.PDF(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := kingErr(ev.exportAll()); err != nil || decodes() < 2 {
		t.Fatalf("after the file changed: %v, %d decodes", err, decodes())
	}
}

// decodeChildEnv names the environment variable that makes
// TestDecodeKilledHelper the child process of TestKilledDecodeNotRetried:
// its value is the source, public and private folders, and the file whose
// decode it stops in.
const decodeChildEnv = "GUIDEPUB_TEST_DECODE_CHILD"

// TestDecodeKilledHelper is the child of TestKilledDecodeNotRetried: it
// exports the bundles and, as the decode of the file named starts, says
// "decoding" and waits to be killed, as a process the kernel kills for
// memory in the middle of a decode.
func TestDecodeKilledHelper(t *testing.T) {
	v := os.Getenv(decodeChildEnv)
	if v == "" {
		return
	}
	dirs := strings.Split(v, "|")
	write.DecodeHook = func(file string) {
		if file == kingFolder+"/"+dirs[3] {
			fmt.Println("decoding")
			select {}
		}
	}
	e, err := New(testConfig(afero.NewOsFs(), dirs[0], dirs[1], dirs[2]))
	if err != nil {
		t.Fatal(err)
	}
	e.ExportAll(context.Background())
	t.Fatal("the decode was not reached")
}

// TestKilledDecodeNotRetried: a process killed (SIGKILL) while it decodes
// a photo, twice, makes the next export refuse the photo without decoding
// it, rather than being killed again at every start.
func TestKilledDecodeNotRetried(t *testing.T) {
	ev := newEnv(t, fsKinds[1])
	const rel = "photos/front.jpg"
	for i := range 2 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestDecodeKilledHelper$", "-test.count=1")
		cmd.Env = append(os.Environ(), decodeChildEnv+"="+strings.Join([]string{ev.srcDir, ev.outDir, ev.privDir, rel}, "|"))
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		cmd.Process.Kill()
		cmd.Wait()
		if strings.TrimSpace(line) != "decoding" {
			t.Fatalf("child %d: %q %s", i, line, stderr.String())
		}
	}
	// Only the photo was counted twice: another decode cut short by the
	// first kill had to run alone the second time, and so waited for the
	// photo's, which held the whole budget.
	records, _ := afero.ReadDir(ev.out, filepath.Join(ev.privDir, write.DecodesDir))
	for _, r := range records {
		data, _ := afero.ReadFile(ev.out, filepath.Join(ev.privDir, write.DecodesDir, r.Name()))
		if strings.Contains(string(data), `"unfinished":2`) && !strings.Contains(string(data), kingFolder+"/"+rel) {
			t.Errorf("another file was counted as killed twice: %s", data)
		}
	}
	decodes := countDecodes(t, kingFolder+"/"+rel)
	err := kingErr(ev.exportAll())
	if err == nil || !strings.Contains(err.Error(), "301-king-st-e/photos/front.jpg: the file is a JPEG image whose decoding did not finish 2 times") {
		t.Fatalf("export after two kills: %v", err)
	}
	if decodes() != 0 {
		t.Errorf("the photo was decoded again (%d)", decodes())
	}
}

// TestDecodeBudgetShared: decodes wait for their share of the budget, so
// that what they hold together never exceeds it, whatever the Jobs.
func TestDecodeBudgetShared(t *testing.T) {
	ev := newEnv(t, fsKinds[0])
	ev.cfg.Jobs = 4
	ev.cfg.Limits.DecodeMemory = 30 // MiB: one sample photo's decode at a time
	e := ev.exporter()
	rep, err := e.ExportAll(context.Background())
	if err != nil || rep.Rejected != 0 {
		t.Fatalf("%v %s", err, rep.Summary())
	}
	peak := e.w.DecodePeak()
	if peak <= 0 || peak > 30<<20 {
		t.Errorf("the decodes held %d bytes at once, budget %d", peak, 30<<20)
	}
	t.Logf("peak %.1f MiB of 30", float64(peak)/(1<<20))
}

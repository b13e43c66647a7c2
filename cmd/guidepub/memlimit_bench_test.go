//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/guidepub/guidepub/exporter"
	"github.com/guidepub/guidepub/exporter/media/mediatest"
	"github.com/guidepub/guidepub/fixtures"
)

// bigPhotoSide is the side of the three photos of bigPhotoBundle: 49
// megapixels each, every decode within the budget, not two at once.
const bigPhotoSide = 7000

// bigPhotoBundle writes into dir/src the sample bundle 301-king-st-e with
// three photos of bigPhotoSide² pixels: a CMYK baseline JPEG, a 16-bit
// PNG and a CMYK progressive JPEG (made with jpegtran, else skipped). It
// returns the source folder.
func bigPhotoBundle(tb testing.TB, dir string) string {
	tb.Helper()
	sub, err := fs.Sub(fixtures.Bundles, "bundles/301-king-st-e")
	if err != nil {
		tb.Fatal(err)
	}
	src := filepath.Join(dir, "src")
	bundle := filepath.Join(src, "301-king-st-e")
	if err := os.CopyFS(bundle, sub); err != nil {
		tb.Fatal(err)
	}
	cmyk := mediatest.CMYKJPEG(bigPhotoSide, bigPhotoSide)
	progressive, err := mediatest.Jpegtran(cmyk, "-progressive")
	if err != nil {
		fixtures.Missing(tb, "jpegtran", err.Error())
	}
	files := map[string][]byte{"photos/front.jpg": cmyk, "photos/kitchen.png": mediatest.PNG16(bigPhotoSide, bigPhotoSide),
		"photos/back.jpg": progressive}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(bundle, name), data, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	file := filepath.Join(bundle, "guide.json")
	data, err := os.ReadFile(file)
	if err != nil {
		tb.Fatal(err)
	}
	var g map[string]any
	if err := json.Unmarshal(data, &g); err != nil {
		tb.Fatal(err)
	}
	media := g["media"].(map[string]any)
	photos := media["photos"].([]any)
	back := map[string]any{"id": "ph-3", "file": "photos/back.jpg"}
	photos = append(photos, back)
	for _, p := range photos {
		p.(map[string]any)["width"], p.(map[string]any)["height"] = bigPhotoSide, bigPhotoSide
	}
	media["photos"] = photos
	if data, err = json.Marshal(g); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(file, data, 0o644); err != nil {
		tb.Fatal(err)
	}
	return src
}

// BenchmarkExportPeakRSS runs the guidepub binary's export of
// bigPhotoBundle (three 49-megapixel photos, each decode within the
// budget, so that they run one after the other) into empty trees, at the
// default flags, and reports its peak resident memory (peak-RSS-MiB, the
// kernel's maximum resident set size of the process) against the memory
// the documentation promises (budget-MiB: --max-decode-memory plus the
// export's overhead): with the memory limit guidepub sets (limit=default)
// and with none (limit=off: GOMEMLIMIT=off, as before guidepub set one).
// It fails when the default's peak is over the budget.
func BenchmarkExportPeakRSS(b *testing.B) {
	dir := b.TempDir()
	src := bigPhotoBundle(b, dir)
	bin := filepath.Join(dir, "guidepub")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GOMEMLIMIT=") {
			env = append(env, kv)
		}
	}
	budget := float64(exporter.DefaultConfig().MemoryBudget()) / (1 << 20)
	for _, tc := range []struct {
		name, gomemlimit string
	}{{"limit=default", ""}, {"limit=off", "off"}} {
		b.Run(tc.name, func(b *testing.B) {
			var peak float64
			for i := range b.N {
				out, priv := filepath.Join(dir, fmt.Sprint(tc.name, i, "out")), filepath.Join(dir, fmt.Sprint(tc.name, i, "private"))
				cmd := exec.Command(bin, "export", "--src", src, "--out", out, "--private", priv)
				cmd.Env = env
				if tc.gomemlimit != "" {
					cmd.Env = append(cmd.Env, "GOMEMLIMIT="+tc.gomemlimit)
				}
				if msg, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("export: %v\n%s", err, msg)
				}
				peak = max(peak, float64(cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss)/1024) // Maxrss is in KiB
				os.RemoveAll(out)
				os.RemoveAll(priv)
			}
			b.ReportMetric(peak, "peak-RSS-MiB")
			b.ReportMetric(budget, "budget-MiB")
			if tc.gomemlimit == "" && peak > budget {
				b.Errorf("export peaked at %.0f MiB, over the %.0f MiB budget", peak, budget)
			}
		})
	}
}

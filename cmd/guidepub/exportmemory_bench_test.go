package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// exportMemorySizes are the corpus sizes of BenchmarkExportCorpusRSS:
// GUIDEPUB_BENCH_EXPORT_GUIDES (comma-separated), or 200, 1,000 and 2,000.
func exportMemorySizes(b *testing.B) []int {
	s := os.Getenv("GUIDEPUB_BENCH_EXPORT_GUIDES")
	if s == "" {
		return []int{200, 1000, 2000}
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			b.Fatalf("GUIDEPUB_BENCH_EXPORT_GUIDES=%q: want positive numbers", s)
		}
		out = append(out, n)
	}
	return out
}

// BenchmarkExportCorpusRSS measures the peak resident memory of the
// guidepub binary's first export of a corpus of generated guides shaped
// like the samples (two views, two languages, photos, floor plans, PDFs:
// about 98 files each), without compressed siblings (they cost CPU, not
// memory that grows with the corpus), at several corpus sizes: what it
// grows by per 1,000 guides is what the export keeps per guide.
func BenchmarkExportCorpusRSS(b *testing.B) {
	bin := buildGuidepub(b)
	root := b.TempDir()
	src := filepath.Join(root, "src")
	made := 0
	for _, n := range exportMemorySizes(b) {
		for ; made < n; made++ {
			writeBundle(b, filepath.Join(src, fmt.Sprintf("bench-%05d", made)), benchBundle(b, made, "http://127.0.0.1:9/hook"))
		}
		b.Run(fmt.Sprintf("guides=%d", n), func(b *testing.B) {
			var peak float64
			for b.Loop() {
				out, priv := b.TempDir(), b.TempDir()
				cmd := exec.Command(bin, "export", "--src", src, "--out", out, "--private", priv, "--encodings", "none")
				if msg, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("export: %v\n%s", err, msg)
				}
				peak = max(peak, float64(cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss)/1024) // Maxrss is in KiB
				os.RemoveAll(out)
				os.RemoveAll(priv)
			}
			b.ReportMetric(peak, "peak-RSS-MiB")
		})
	}
}

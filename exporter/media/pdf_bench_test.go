package media

import (
	"bytes"
	"crypto/sha256"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/pdfcpu/pdfcpu/pkg/api"

	"github.com/guidepub/guidepub/exporter/media/mediatest"
	"github.com/guidepub/guidepub/site/procstat"
)

// BenchmarkPDF measures what publishing a PDF costs: for each distinct
// sample PDF, the rebuild (rebuild/) against the strip it replaced
// (strip-before/), in CPU milliseconds per page; and for the object
// stream bomb of sixty streams of 30 MiB, what checking it costs under
// the default budget (check-cpu-ms, check-peakRSS-MiB), whether it is
// refused, and the estimate against the peak resident memory of
// rebuilding a document of the same shape that fits (packed-*: six
// streams of 8 MiB reached by the page).
func BenchmarkPDF(b *testing.B) {
	names, _ := filepath.Glob(filepath.Join("..", "..", "fixtures", "bundles", "*", "*", "*.pdf"))
	seen := map[[sha256.Size]byte]bool{}
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			b.Fatal(err)
		}
		if seen[sha256.Sum256(data)] {
			continue
		}
		seen[sha256.Sum256(data)] = true
		pages, err := api.PageCount(bytes.NewReader(data), nil)
		if err != nil {
			b.Fatal(err)
		}
		sample := filepath.Base(filepath.Dir(filepath.Dir(n))) + "-" + filepath.Base(n)
		for _, way := range []struct {
			name string
			fn   func(io.Writer, []byte) error
		}{
			{"rebuild", func(w io.Writer, d []byte) error { return RebuildPDF(w, d, 0) }},
			{"strip-before", stripPDFBefore},
		} {
			b.Run(way.name+"/"+sample, func(b *testing.B) {
				var out bytes.Buffer
				c0 := procstat.CPUTime()
				for range b.N {
					out.Reset()
					if err := way.fn(&out, data); err != nil {
						b.Fatal(err)
					}
				}
				cpu := procstat.CPUTime() - c0
				b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N*pages), "cpu-ms/page")
				b.ReportMetric(float64(pages), "pages")
				b.ReportMetric(float64(out.Len())/1024, "out-KiB")
			})
		}
	}
	b.Run("packed-bomb", benchPackedBomb)
	b.Run("packed-fits", benchPackedFits)
}

// peakOf runs fn and returns the peak resident memory it added (MiB) and
// the CPU time it took.
func peakOf(b *testing.B, fn func()) (float64, time.Duration) {
	runtime.GC()
	debug.FreeOSMemory()
	if err := procstat.ResetPeakRSS(); err != nil {
		b.Skip("no peak RSS on this system:", err)
	}
	before, _ := procstat.RSS(0)
	c0 := procstat.CPUTime()
	fn()
	cpu := procstat.CPUTime() - c0
	peak, _ := procstat.PeakRSS()
	return peak - before, cpu
}

func benchPackedBomb(b *testing.B) {
	doc := mediatest.PackedBomb(60, 30<<20, 0)
	for range b.N {
		var err error
		peak, cpu := peakOf(b, func() { _, err = Check(bytes.NewReader(doc), int64(len(doc)), Limits{}) })
		b.ReportMetric(float64(len(doc))/(1<<20), "file-MiB")
		b.ReportMetric(peak, "check-peakRSS-MiB")
		b.ReportMetric(float64(cpu.Microseconds())/1000, "check-cpu-ms")
		refused := 0.0
		if err != nil {
			refused = 1
		}
		b.ReportMetric(refused, "refused")
	}
}

func benchPackedFits(b *testing.B) {
	doc := mediatest.PackedBomb(6, 8<<20, 0)
	for range b.N {
		info, err := Check(bytes.NewReader(doc), int64(len(doc)), Limits{})
		if err != nil {
			b.Fatal(err)
		}
		peak, cpu := peakOf(b, func() { err = RebuildPDF(io.Discard, doc, info.Decode.Bytes) })
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(48, "decoded-MiB")
		b.ReportMetric(float64(info.Decode.Bytes>>20), "est-MiB")
		b.ReportMetric(peak, "rebuild-peakRSS-MiB")
		b.ReportMetric(cpu.Seconds(), "rebuild-cpu-s")
	}
}

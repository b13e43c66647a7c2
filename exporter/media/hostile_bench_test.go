package media_test

import (
	"bytes"
	"crypto/sha256"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/guidepub/guidepub/exporter/media"
	"github.com/guidepub/guidepub/exporter/media/mediatest"
	"github.com/guidepub/guidepub/site/procstat"
)

// hostileImage is a file of BenchmarkHostileImages, made into a file by
// make.
type hostileImage struct {
	name   string
	format media.Format
	make   func(b *testing.B) []byte
}

// The files of the issue that set the decode budget, at their sizes: a
// flat 20-megapixel progressive JPEG with 2,000 more refinement scans,
// a 50-megapixel progressive JPEG with full-resolution colour (4:4:4), a
// 50-megapixel 16-bit interlaced PNG; and, for reference, a 50-megapixel
// baseline JPEG (4:2:0, as cameras write them), the same made progressive,
// and a 24-megapixel progressive one (4:2:0, as photo editors export
// them). (A CMYK one is
// not here: none of the encoders at hand writes CMYK.)
var hostileImages = []hostileImage{
	{"scans-2000-20MP", media.JPEG, func(b *testing.B) []byte { return manyScans(b, 5472, 3648, 2000) }},
	{"progressive-444-50MP", media.JPEG, func(b *testing.B) []byte {
		return encoded(b)(mediatest.Cjpeg(mediatest.Picture(8160, 6120), "-progressive", "-sample", "1x1", "-quality", "90"))
	}},
	{"png16-interlaced-50MP", media.PNG, func(b *testing.B) []byte {
		var buf bytes.Buffer
		if err := mediatest.InterlacedPNG16(&buf, 8160, 6120); err != nil {
			b.Fatal(err)
		}
		return buf.Bytes()
	}},
	{"baseline-420-50MP", media.JPEG, func(b *testing.B) []byte { return mediatest.JPEG(mediatest.Picture(8160, 6120)) }},
	{"progressive-420-50MP", media.JPEG, func(b *testing.B) []byte {
		return encoded(b)(mediatest.Jpegtran(mediatest.JPEG(mediatest.Picture(8160, 6120)), "-progressive"))
	}},
	{"progressive-420-24MP", media.JPEG, func(b *testing.B) []byte {
		return encoded(b)(mediatest.Jpegtran(mediatest.JPEG(mediatest.Picture(6000, 4000)), "-progressive"))
	}},
}

// usage runs fn and returns the peak resident memory it added (MiB) and
// the CPU time it took.
func usage(b *testing.B, fn func()) (peakMiB float64, cpu time.Duration) {
	runtime.GC()
	debug.FreeOSMemory()
	if err := procstat.ResetPeakRSS(); err != nil {
		b.Skip("no peak RSS on this system:", err)
	}
	before, _ := procstat.RSS(0)
	c0 := procstat.CPUTime()
	fn()
	cpu = procstat.CPUTime() - c0
	peak, _ := procstat.PeakRSS()
	return peak - before, cpu
}

// BenchmarkHostileImages measures, for each file of hostileImages, what
// decoding it for its renditions costs (decode-: peak RSS added and CPU
// time, what an export did with it before the budget) and what checking
// it costs now (check-: the header walk that refuses it or lets it
// through), with the estimate the check makes (est-MiB, est-Mpasses) and
// whether it refuses the file under the default limits (refused).
func BenchmarkHostileImages(b *testing.B) {
	dir := b.TempDir()
	for _, h := range hostileImages {
		b.Run(h.name, func(b *testing.B) {
			// The file is made and written first, and read back for each
			// measurement, so that its making is not measured.
			p := filepath.Join(dir, h.name)
			if err := os.WriteFile(p, h.make(b), 0o644); err != nil {
				b.Fatal(err)
			}
			for range b.N {
				data, err := os.ReadFile(p)
				if err != nil {
					b.Fatal(err)
				}
				var info media.Info
				var checkErr error
				checkPeak, checkCPU := usage(b, func() {
					info, checkErr = media.Check(bytes.NewReader(data), int64(len(data)), media.Limits{})
				})
				decodePeak, decodeCPU := usage(b, func() {
					var kept media.Kept
					err := media.Renditions(bytes.NewReader(data), h.format, sha256.Sum256(data), kept, []int{1600, 960, 480}, 0, func(int, int, []byte) error { return nil })
					if err != nil {
						b.Fatal(err)
					}
				})
				refused := 0.0
				if checkErr != nil {
					refused = 1
				}
				b.ReportMetric(float64(len(data))/(1<<20), "file-MiB")
				b.ReportMetric(decodePeak, "decode-peakRSS-MiB")
				b.ReportMetric(decodeCPU.Seconds(), "decode-cpu-s")
				b.ReportMetric(checkPeak, "check-peakRSS-MiB")
				b.ReportMetric(float64(checkCPU.Microseconds())/1000, "check-cpu-ms")
				b.ReportMetric(float64(info.Decode.Bytes>>20), "est-MiB")
				b.ReportMetric(float64(info.Decode.Work)/1e6, "est-Mpasses")
				b.ReportMetric(refused, "refused")
			}
		})
	}
}

package exporter

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/exporter/media"
	"github.com/guidepub/guidepub/exporter/media/mediatest"
	"github.com/guidepub/guidepub/exporter/write"
	"github.com/guidepub/guidepub/site"
	"github.com/guidepub/guidepub/site/procstat"
)

// renditionGuide writes under dir/bundle-00000 a corpus guide (genGuide)
// with 12 camera-size photos (4000×3000 JPEG) and 8 floor pages
// (2400×1800 JPEG), each file distinct.
func renditionGuide(b *testing.B, dir string) {
	g := genGuide(0)
	g.Media.Photos = g.Media.Photos[:12]
	d := g.Media.Documents["en"]
	d.JPGMetric = append(d.JPGMetric, bundle.FloorImage{ID: 4, FloorName: "Attic", File: "doc/floor_m_4.jpg"})
	d.JPGImperial = append(d.JPGImperial, bundle.FloorImage{ID: 4, FloorName: "Attic", File: "doc/floor_i_4.jpg"})
	g.Media.Documents["en"] = d
	writeCorpusGuide(b, dir, 0, g)
	photo := mediatest.JPEG(mediatest.Picture(4000, 3000))
	page := mediatest.JPEG(mediatest.Picture(2400, 1800))
	distinct := func(base []byte, name string) []byte {
		com := append([]byte{0xFF, 0xFE, 0, byte(len(name) + 2)}, name...)
		return append(append(append([]byte{}, base[:2]...), com...), base[2:]...)
	}
	folder := filepath.Join(dir, "bundle-00000")
	write := func(rel string, data []byte) {
		if err := os.WriteFile(filepath.Join(folder, filepath.FromSlash(rel)), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for _, p := range g.Media.Photos {
		write(p.File, distinct(photo, p.File))
	}
	for _, f := range append(d.JPGMetric, d.JPGImperial...) {
		write(f.File, distinct(page, f.File))
	}
}

// BenchmarkRenditions exports one guide with 12 photos of 4000×3000 and 8
// floor pages of 2400×1800 (two views and an alias, as BenchmarkExport's
// guides) to an empty folder, with renditions (full-s) and without them
// (norend-s: media.Widths emptied), and compresses its documents alone
// (floor-s, the compression floor); then an export after a guide.json
// edit (edit-ms), which makes no rendition. Per guide; rend-cpu-s is the
// CPU time renditions add, which a busy machine does not inflate.
// photo-cpu-ms is the CPU time of one photo's renditions (one decode,
// three widths). The anchor, when Debian's vipsthumbnail (libvips-tools)
// is on PATH: vipsthumbnail run once per width on each of the guide's
// images (vips-cpu-s, against rend-cpu-s) and on the photo
// (vips-photo-cpu-ms, against photo-cpu-ms), its process CPU time.
func BenchmarkRenditions(b *testing.B) {
	root := b.TempDir()
	src := filepath.Join(root, "src")
	renditionGuide(b, src)
	osfs := afero.NewOsFs()
	// CPU time, not wall time: on a shared machine wall time includes
	// waiting for a core.
	cpu := procstat.CPUTime
	export := func(name string) (*Exporter, string, time.Duration) {
		out := filepath.Join(root, name+"-out")
		e, err := New(testConfig(osfs, src, out, filepath.Join(root, name+"-private")))
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		rep, err := e.ExportAll(context.Background())
		if err != nil || rep.Rejected > 0 {
			b.Fatalf("export: %v, %+v", err, rep.Guides)
		}
		return e, out, time.Since(start)
	}
	b.ResetTimer()
	for iter := range b.N {
		work := write.ImagesDecoded()
		c0 := cpu()
		e, out, full := export(fmt.Sprint("full", iter))
		c1 := cpu()
		made := write.ImagesDecoded() - work
		saved := media.Widths
		media.Widths = nil
		_, _, norend := export(fmt.Sprint("norend", iter))
		c2 := cpu()
		media.Widths = saved

		// The floor: the guide's distinct documents through the
		// compressors, Jobs at a time.
		comp := write.NewCompressor()
		distinct := map[string][]byte{}
		for name, data := range documents(b, out) {
			if site.IsDocument(name) {
				distinct[string(data)] = data
			}
		}
		start := time.Now()
		slots := make(chan struct{}, testConfig(osfs, src, out, root).Jobs)
		var wg sync.WaitGroup
		for _, data := range distinct {
			for _, enc := range site.Encodings {
				wg.Go(func() {
					slots <- struct{}{}
					if _, err := comp.Compress(enc, data, false); err != nil {
						b.Error(err)
					}
					<-slots
				})
			}
		}
		wg.Wait()
		floor := time.Since(start)

		// A guide.json edit: documents change, images do not.
		raw, err := os.ReadFile(filepath.Join(src, "bundle-00000", bundle.FileName))
		if err != nil {
			b.Fatal(err)
		}
		var g map[string]any
		if err := json.Unmarshal(raw, &g); err != nil {
			b.Fatal(err)
		}
		g["property"].(map[string]any)["city"] = fmt.Sprint("Town ", iter)
		raw, _ = json.Marshal(g)
		if err := os.WriteFile(filepath.Join(src, "bundle-00000", bundle.FileName), raw, 0o644); err != nil {
			b.Fatal(err)
		}
		work = write.ImagesDecoded()
		start = time.Now()
		if _, err := e.ExportAll(context.Background()); err != nil {
			b.Fatal(err)
		}
		edit := time.Since(start)
		if n := write.ImagesDecoded() - work; n != 0 {
			b.Fatalf("an export after a guide.json edit decoded %d images", n)
		}
		b.ReportMetric(full.Seconds(), "full-s")
		b.ReportMetric(norend.Seconds(), "norend-s")
		b.ReportMetric((full - norend).Seconds(), "rend-s")
		b.ReportMetric((c1 - c0 - (c2 - c1)).Seconds(), "rend-cpu-s")
		b.ReportMetric(floor.Seconds(), "floor-s")
		b.ReportMetric(full.Seconds()/floor.Seconds(), "full/floor")
		b.ReportMetric(norend.Seconds()/floor.Seconds(), "norend/floor")
		b.ReportMetric(float64(made), "decoded")
		photo := filepath.Join(src, "bundle-00000", filepath.FromSlash(genGuide(0).Media.Photos[0].File))
		b.ReportMetric(float64(photoRenditionsCPU(b, photo).Microseconds())/1000, "photo-cpu-ms")
		if all, one := vipsThumbnails(b, filepath.Join(src, "bundle-00000"), photo, root); all > 0 {
			b.ReportMetric(all.Seconds(), "vips-cpu-s")
			b.ReportMetric(float64(one.Microseconds())/1000, "vips-photo-cpu-ms")
		}
		b.ReportMetric(float64(edit.Milliseconds()), "edit-ms")
		peak, _ := procstat.PeakRSS()
		b.ReportMetric(peak, "peakRSS-MB")
	}
}

// photoRenditionsCPU returns the CPU time of making the renditions of the
// image at path, as an export does (one decode, every width).
func photoRenditionsCPU(b *testing.B, path string) time.Duration {
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	widths := slices.Clone(media.RenditionWidths(4000))
	slices.Reverse(widths)
	c0 := procstat.CPUTime()
	err = media.Renditions(bytes.NewReader(data), media.JPEG, sha256.Sum256(data), media.Kept{}, widths, 0, func(int, int, []byte) error { return nil })
	if err != nil {
		b.Fatal(err)
	}
	return procstat.CPUTime() - c0
}

// vipsThumbnails runs vipsthumbnail once for each width of media.Widths
// narrower than the image on every JPEG under dir (width-bound, quality
// Quality, one thread), and returns its CPU time in all and for the photo
// at photo alone; 0 when vipsthumbnail is not on PATH.
func vipsThumbnails(b *testing.B, dir, photo, tmp string) (all, one time.Duration) {
	vips, err := exec.LookPath("vipsthumbnail")
	if err != nil {
		b.Log("no vipsthumbnail on PATH (Debian's libvips-tools): the libvips anchor is not measured")
		return 0, 0
	}
	files, err := filepath.Glob(filepath.Join(dir, "*", "*.jpg"))
	if err != nil || len(files) == 0 {
		b.Fatalf("no JPEG under %s: %v", dir, err)
	}
	out := filepath.Join(tmp, "vips")
	if err := os.MkdirAll(out, 0o755); err != nil {
		b.Fatal(err)
	}
	for i, f := range files {
		info, err := media.Check(mustOpen(b, f), fileSize(b, f), media.Limits{})
		if err != nil {
			b.Fatal(err)
		}
		for _, w := range media.RenditionWidths(info.Width) {
			cmd := exec.Command(vips, f, "--size", fmt.Sprint(w, "x"), "-o", filepath.Join(out, fmt.Sprintf("%d-%d.jpg[Q=%d]", i, w, media.Quality)))
			cmd.Env = append(os.Environ(), "VIPS_CONCURRENCY=1")
			if msg, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("vipsthumbnail %s: %v\n%s", f, err, msg)
			}
			cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			all += cpu
			if f == photo {
				one += cpu
			}
		}
	}
	return all, one
}

func mustOpen(b *testing.B, path string) *os.File {
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	return f
}

func fileSize(b *testing.B, path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	return fi.Size()
}

package exporter

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/exporter/media"
	"github.com/guidepub/guidepub/exporter/media/mediatest"
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
		work := imageWork.Load()
		c0 := cpu()
		e, out, full := export(fmt.Sprint("full", iter))
		c1 := cpu()
		made := imageWork.Load() - work
		saved := media.Widths
		media.Widths = nil
		_, _, norend := export(fmt.Sprint("norend", iter))
		c2 := cpu()
		media.Widths = saved

		// The floor: the guide's distinct documents through the
		// compressors, Jobs at a time.
		comp := NewCompressor()
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
					if _, err := comp.Compress(enc, data); err != nil {
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
		work = imageWork.Load()
		start = time.Now()
		if _, err := e.ExportAll(context.Background()); err != nil {
			b.Fatal(err)
		}
		edit := time.Since(start)
		if n := imageWork.Load() - work; n != 0 {
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
		b.ReportMetric(float64(edit.Milliseconds()), "edit-ms")
		peak, _ := procstat.PeakRSS()
		b.ReportMetric(peak, "peakRSS-MB")
	}
}

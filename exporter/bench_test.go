package exporter

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/exporter/media/mediatest"
	"github.com/guidepub/guidepub/exporter/render"
	"github.com/guidepub/guidepub/exporter/write"
	"github.com/guidepub/guidepub/site"
	"github.com/guidepub/guidepub/site/procstat"
)

// Corpus shape of the benchmark: realistic guides of 3 floors, about 40
// rooms with wall segments, 20 photos with small renditions, PDF and JPEG
// floor plans and private ZIPs; two views each plus an alias.
const (
	benchGuides      = 1000
	benchGuidesShort = 40
	benchFloors      = 3
	benchRooms       = 40
	benchPhotos      = 20
)

var roomTypes = []string{"Living", "Kitchen", "Dining", "Bedroom", "Bathroom", "Office", "Laundry", "Storage", "Utility", "Other"}

func f64(x float64) *float64 { return &x }

// genGuide returns guide number i of the corpus; the same i always gives
// the same guide.
func genGuide(i int) bundle.Guide {
	rng := rand.New(rand.NewPCG(uint64(i), 42))
	mm := func(lo, hi float64) float64 { return float64(int((lo+rng.Float64()*(hi-lo))*10)) / 10 }
	id := fmt.Sprintf("g%05d", i)
	standard := site.StandardRMS
	if i%2 == 1 {
		standard = site.StandardANSI
	}
	b := site.Building{ID: 1, Name: "Main Building", IsMainBuilding: true, WallThickness: f64(152.4)}
	var total, above float64
	roomID := 0
	for f := range benchFloors {
		fl := site.Floor{ID: f + 1, Name: []string{"Basement", "Main Floor", "Second Floor"}[f], IsBelowGrade: f == 0,
			Perimeter: f64(mm(30000, 50000)), WallThickness: f64(152.4)}
		var floorArea float64
		for r := range benchRooms / benchFloors {
			roomID++
			w, l := mm(1500, 6000), mm(1500, 7000)
			h := 2438.4
			room := site.Room{ID: roomID, Type: roomTypes[(r+f)%len(roomTypes)], Name: fmt.Sprintf("Room %d", roomID),
				Dims: []float64{w, l}, Area: w * l, Perimeter: f64(2 * (w + l)), PerimeterWithoutOpenings: f64(2*(w+l) - 900),
				WallArea: f64(2 * (w + l) * h), WallAreaWithoutOpenings: f64(2*(w+l)*h - 1828800), Volume: f64(w * l * h)}
			for _, s := range []float64{w, l, w, l} {
				room.WallSegments = append(room.WallSegments, site.WallSegment{Length: s, Height: h, Area: s * h, AreaWithoutOpenings: s * h})
			}
			floorArea += room.Area
			fl.Rooms = append(fl.Rooms, room)
		}
		if standard == site.StandardRMS {
			fl.InteriorArea, fl.ExteriorArea, fl.ExcludedArea = f64(floorArea), f64(floorArea*1.08), f64(0)
		} else {
			fl.FinishedArea, fl.UnfinishedArea = f64(floorArea*0.9), f64(floorArea*0.1)
		}
		total += floorArea
		if !fl.IsBelowGrade {
			above += floorArea
		}
		b.Floors = append(b.Floors, fl)
	}
	if standard == site.StandardRMS {
		b.IntAreaAboveGrade, b.IntAreaTotal = f64(above), f64(total)
		b.ExtAreaAboveGrade, b.ExtAreaTotal = f64(above*1.08), f64(total*1.08)
		b.ExcludedAreaAboveGrade, b.ExcludedAreaTotal = f64(0), f64(0)
	} else {
		b.FinishedAreaAboveGrade, b.UnfinishedAreaAboveGrade = f64(above*0.9), f64(above*0.1)
		b.FinishedAreaBelowGrade, b.UnfinishedAreaBelowGrade = f64((total-above)*0.9), f64((total-above)*0.1)
		b.FinishedAreaTotal, b.UnfinishedAreaTotal = f64(total*0.9), f64(total*0.1)
	}
	g := bundle.Guide{
		GuideID: id, Alias: fmt.Sprintf("%d-main-st", 100+i), OwnerID: fmt.Sprintf("user-%d", i%37), WorkOrderID: "WO" + strconv.Itoa(i),
		Addons:       []string{"vr"},
		BillableArea: &bundle.BillableArea{SqFeet: float64(int(total/929.0304)) / 100, SqMeters: float64(int(total/1e4)) / 100},
		Property: site.Property{FullAddress: fmt.Sprintf("%d Main St, Kitchener, ON N2G 2L3", 100+i), Country: "CA", City: "Kitchener",
			PostalCode: "N2G 2L3", StateProvince: "ON", StreetName: "Main St", StreetNumber: strconv.Itoa(100 + i),
			Location: &site.Location{Lat: 43.4 + float64(i)/1e4, Lng: -80.4}},
		Summary: &site.Summary{MeasurementStandard: standard, Buildings: []site.Building{b}},
		Media: bundle.Media{Video: "https://video.example.com/watch/" + id, Documents: map[string]bundle.Documents{
			"en": {GalleryFrontImage: "photos/p01.jpg", PDFMetric: "doc/plan_metric.pdf", PDFImperial: "doc/plan_imperial.pdf",
				EmbedImage: "doc/embed.jpg", GalleryZip: "doc/gallery.zip", SVGZip: "doc/svg.zip"},
		}},
		Views: []bundle.View{
			{ViewID: "v" + id + "a", Default: true},
			{ViewID: "v" + id + "b", Units: bundle.UnitsImperial, Hidden: []string{bundle.HideAddress, bundle.HideRoomDimensions}},
		},
		Webhooks: []site.Webhook{{URL: "https://hooks.example.com/" + id}},
	}
	d := g.Media.Documents["en"]
	for f := range benchFloors {
		d.JPGMetric = append(d.JPGMetric, bundle.FloorImage{ID: f + 1, FloorName: b.Floors[f].Name, File: fmt.Sprintf("doc/floor_m_%d.jpg", f+1)})
		d.JPGImperial = append(d.JPGImperial, bundle.FloorImage{ID: f + 1, FloorName: b.Floors[f].Name, File: fmt.Sprintf("doc/floor_i_%d.jpg", f+1)})
	}
	g.Media.Documents["en"] = d
	for p := range benchPhotos {
		g.Media.Photos = append(g.Media.Photos, bundle.Photo{ID: fmt.Sprintf("p%02d", p+1), File: fmt.Sprintf("photos/p%02d.jpg", p+1),
			Preferred: p == 0, Small: &bundle.Image{File: fmt.Sprintf("photos/p%02d_s.jpg", p+1)}})
	}
	return g
}

// writeCorpusGuide writes bundle i under dir: guide.json and every file it
// names (small real files of each format, mediatest.Sample; images of
// 32×24 pixels, too small for renditions: BenchmarkRenditions measures
// those).
func writeCorpusGuide(tb testing.TB, dir string, i int, g bundle.Guide) {
	folder := filepath.Join(dir, fmt.Sprintf("bundle-%05d", i))
	for _, rel := range render.NamedFiles(&g) {
		p := filepath.Join(folder, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		data := mediatest.Sample(g.GuideID+"/"+rel, 32, 24)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	raw, err := json.MarshalIndent(g, "", "  ")
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(folder, bundle.FileName), raw, 0o644); err != nil {
		tb.Fatal(err)
	}
}

// documents returns every document file and compressed sibling under dir
// by slash path (media files are left out to keep memory low).
func documents(tb testing.TB, dir string) map[string][]byte {
	tb.Helper()
	docs := map[string][]byte{}
	for _, pattern := range []string{"*/data/*", "*/reso/*", "*/" + site.PageFile + "*",
		site.UnbrandedDir + "/*/" + site.PageFile + "*", site.EmbedDir + "/*/" + site.PageFile + "*"} {
		matches, err := filepath.Glob(filepath.Join(dir, pattern))
		if err != nil {
			tb.Fatal(err)
		}
		for _, p := range matches {
			data, err := os.ReadFile(p)
			if err != nil {
				tb.Fatal(err)
			}
			rel, _ := filepath.Rel(dir, p)
			docs[filepath.ToSlash(rel)] = data
		}
	}
	return docs
}

// BenchmarkExport measures, in one run over a generated corpus (1,000
// guides; 40 with -short): a full export to an empty real folder, the
// same documents through the compressors alone (the floor), an
// incremental export after one guide changed, and the bytes per view.
// cpu-full/floor is the process's CPU time during the full export over
// that of the floor: the work the export adds, where full/floor also
// counts its waiting; user-full/floor leaves out the export's time in
// the kernel (creating, writing and flushing files).
func BenchmarkExport(b *testing.B) {
	n := benchGuides
	if testing.Short() {
		n = benchGuidesShort
	}
	root := b.TempDir()
	src := filepath.Join(root, "src")
	guides := make([]bundle.Guide, n)
	for i := range n {
		guides[i] = genGuide(i)
		writeCorpusGuide(b, src, i, guides[i])
	}
	osfs := afero.NewOsFs()
	b.ResetTimer()
	for iter := 0; iter < b.N; iter++ {
		b.StopTimer()
		out := filepath.Join(root, fmt.Sprintf("out-%d", iter))
		priv := filepath.Join(root, fmt.Sprintf("private-%d", iter))
		cfg := testConfig(osfs, src, out, priv) // one compression job per CPU
		e, err := New(cfg)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start, cpu, sys := time.Now(), procstat.CPUTime(), procstat.SystemTime()
		rep, err := e.ExportAll(context.Background())
		full, fullCPU, fullSys := time.Since(start), procstat.CPUTime()-cpu, procstat.SystemTime()-sys
		if err != nil || rep.Rejected > 0 {
			b.Fatalf("full export: %v, %d rejected", err, rep.Rejected)
		}
		b.StopTimer()
		rss, _ := procstat.PeakRSS() // before the checks below read the output

		// The floor: every distinct document of each guide (as the
		// exporter compresses them: the alias repeats the default view,
		// small documents repeat across guides) through the same
		// compressors alone, with as many workers.
		pub := documents(b, out)
		type job struct {
			sum  [32]byte
			data []byte
		}
		var jobs []job
		seen := map[string]bool{} // guide + hash, or hash for small documents
		var docBytes int64
		views := 0
		var viewDocs [][32]byte
		for _, name := range sortedNames(pub) {
			if !site.IsDocument(name) {
				continue
			}
			data := pub[name]
			sum := sha256.Sum256(data)
			top := strings.SplitN(name, "/", 2)[0]
			if top == site.UnbrandedDir || top == site.EmbedDir { // a page: u/<id>/index.html
				top = strings.SplitN(name, "/", 3)[1]
			}
			guide := strings.TrimRight(top, "ab") // vg00001a -> vg00001
			if !strings.HasPrefix(top, "v") {     // alias 101-main-st -> vg00001
				num, _ := strconv.Atoi(strings.SplitN(top, "-", 2)[0])
				guide = fmt.Sprintf("vg%05d", num-100)
			} else {
				viewDocs = append(viewDocs, sum)
				docBytes += int64(len(data))
				for _, enc := range site.Encodings {
					docBytes += int64(len(pub[name+enc.Ext]))
				}
				if strings.HasSuffix(name, "/"+site.StatusFile) {
					views++
				}
			}
			key := guide + string(sum[:])
			if len(data) <= write.SmallDoc {
				key = string(sum[:])
			}
			if !seen[key] {
				seen[key] = true
				jobs = append(jobs, job{sum, data})
			}
		}
		brSize := make([]int, len(jobs))
		start, cpu = time.Now(), procstat.CPUTime()
		// As many workers as the exporter has compression slots.
		next := make(chan int)
		var wg sync.WaitGroup
		for range e.cfg.Jobs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range next {
					for _, enc := range site.Encodings {
						z, err := enc.Encode(nil, jobs[i].data)
						if err != nil {
							b.Error(err)
						}
						if enc == site.Brotli {
							brSize[i] = len(z)
						}
					}
				}
			}()
		}
		for i := range jobs {
			next <- i
		}
		close(next)
		wg.Wait()
		floor, floorCPU := time.Since(start), procstat.CPUTime()-cpu
		// Brotli 11 of each view's documents, from the floor's output.
		bySum := map[[32]byte]int{}
		for i, j := range jobs {
			bySum[j.sum] = brSize[i]
		}
		var br11 int64
		for _, sum := range viewDocs {
			br11 += int64(bySum[sum])
		}

		// Incremental: one guide changes, a new exporter (a new process)
		// exports everything again.
		g := guides[n/2]
		g.Property.City = fmt.Sprintf("Waterloo %d", iter)
		writeCorpusGuide(b, src, n/2, g)
		e2, err := New(cfg)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start = time.Now()
		rep2, err := e2.ExportAll(context.Background())
		incr := time.Since(start)
		b.StopTimer()
		if err != nil || rep2.Written == 0 {
			b.Fatalf("incremental export: %v, %s", err, rep2.Summary())
		}
		for _, r := range rep2.Guides {
			if r.Written > 0 && r.Folder != fmt.Sprintf("bundle-%05d", n/2) {
				b.Fatalf("incremental export rewrote %s", r.Folder)
			}
		}

		b.ReportMetric(float64(rep.Views)/full.Seconds(), "views/s")
		b.ReportMetric(float64(rep.Bytes)/1e6/full.Seconds(), "MB/s")
		b.ReportMetric(full.Seconds(), "full-s")
		b.ReportMetric(floor.Seconds(), "floor-s")
		b.ReportMetric(full.Seconds()/floor.Seconds(), "full/floor")
		b.ReportMetric(fullCPU.Seconds()/floorCPU.Seconds(), "cpu-full/floor")
		b.ReportMetric((fullCPU-fullSys).Seconds()/floorCPU.Seconds(), "user-full/floor")
		b.ReportMetric(float64(incr.Milliseconds()), "incr-ms")
		b.ReportMetric(100*incr.Seconds()/full.Seconds(), "incr-%")
		b.ReportMetric(float64(docBytes)/float64(views), "docB/view")
		b.ReportMetric(float64(br11)/float64(views), "br11B/view")
		b.ReportMetric(rss, "peakRSS-MB")
		b.StartTimer()
	}
}

package exporter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/guidepub/guidepub/exporter/bundle"
)

func TestDocumentSizeLimit(t *testing.T) {
	tests := []struct {
		name   string
		limit  int
		reject bool
	}{
		{"default", 0, false},
		{"tiny", 2000, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := newEnv(t, fsKinds[0])
			ev.cfg.Limits.DocumentBytes = tt.limit
			_, err := ev.exporter().ExportBundle(context.Background(), kingFolder)
			var be *bundle.Error
			if !tt.reject {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.As(err, &be) || !strings.Contains(err.Error(), "more than the limit of 2.0 KiB for one file") {
				t.Fatalf("err = %v, want the document size limit", err)
			}
			if _, err := ev.out.Stat(ev.outDir); err == nil {
				t.Errorf("a rejected bundle published files")
			}
		})
	}
}

// TestEveryFileHeldToSizeLimit checks that the size limit holds for every
// file rendered for a guide, not only its documents: the view pages, the
// ready event and the record. A guide with a file over it is rejected
// with every such file named, and what was published before stays as it
// was.
func TestEveryFileHeldToSizeLimit(t *testing.T) {
	// The fixture's largest page is 17.0 KB (its French branded page; the
	// English one 16.4 KB), its autofill 19.8 KB, its event 9.8 KB, its
	// record 356 bytes; the work order id is in the event and the record
	// only.
	long := strings.Repeat("W", 23_000)
	tests := []struct {
		limit      int
		workOrder  string
		named, not []string
	}{
		{16_700, "WO-CHANGED", []string{"the file vKT301A/fr/index.html would be", "the file vKT301A/reso/autofill"},
			[]string{"the file vKT301A/index.html", "event.json"}},
		// The first view over the limit stops the rendering.
		{7_000, "WO-CHANGED", []string{"the file vKT301A/reso/autofill", "the file vKT301A/index.html"},
			[]string{"vKT301B", "event.json"}},
		{22_500, long, []string{"the file guides/gKT301KINGE1/event.json (private)", "the file guides/gKT301KINGE1/record.json (private)"},
			[]string{"index.html", "reso/autofill"}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.limit), func(t *testing.T) {
			ev := newEnv(t, fsKinds[0])
			if _, err := ev.exporter().ExportBundle(context.Background(), kingFolder); err != nil {
				t.Fatal(err)
			}
			pub, priv := snapshot(t, ev.out, ev.outDir), snapshot(t, ev.out, ev.privDir)
			ev.editGuide(kingFolder, func(g map[string]any) { g["workOrderId"] = tt.workOrder })
			ev.cfg.Limits.DocumentBytes = tt.limit
			_, err := ev.exporter().ExportBundle(context.Background(), kingFolder)
			var be *bundle.Error
			if !errors.As(err, &be) {
				t.Fatalf("err = %v, want the bundle rejected", err)
			}
			for _, want := range tt.named {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error does not name %q:\n%v", want, err)
				}
			}
			for _, not := range tt.not {
				if strings.Contains(err.Error(), not) {
					t.Errorf("error names %q, under the limit:\n%v", not, err)
				}
			}
			if !strings.Contains(err.Error(), "raise it with --max-document-size") {
				t.Errorf("error does not name the flag:\n%v", err)
			}
			if !maps.EqualFunc(pub, snapshot(t, ev.out, ev.outDir), bytes.Equal) || !maps.EqualFunc(priv, snapshot(t, ev.out, ev.privDir), bytes.Equal) {
				t.Errorf("a rejected bundle changed what was published")
			}
		})
	}
}

// writeGuideAtLimits replaces the guide.json of the king fixture in ev with
// one holding as much as lim allows: views with different hidden
// features, buildings, floors, rooms, wall segments, photos and floor plan
// pages.
func writeGuideAtLimits(t testing.TB, srcDir string, lim bundle.Limits) {
	p := filepath.Join(srcDir, kingFolder, bundle.FileName)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var g map[string]any
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	views := []any{}
	for i := range lim.Views {
		var hidden []string
		for j, h := range bundle.HiddenFeatures {
			if i&(1<<j) != 0 && h != bundle.HideAutofill {
				hidden = append(hidden, h)
			}
		}
		units := []string{"metric", "imperial"}[i%2]
		views = append(views, map[string]any{"viewId": fmt.Sprintf("vLIMIT%03d", i), "default": i == 0, "units": units, "hidden": hidden})
	}
	g["views"] = views
	nb := lim.Buildings
	fpb := lim.Floors / nb
	rpf := lim.Rooms / lim.Floors
	spr := lim.WallSegments / lim.Rooms
	var buildings []any
	floorID, roomID := 1, 1
	for b := range nb {
		var floors []any
		for range fpb {
			var rooms []any
			for range rpf {
				var segs []any
				for range spr {
					segs = append(segs, map[string]any{"length": 4300.5, "height": 2438.4, "area": 10485120.25, "areaWithoutOpenings": 10485120.25})
				}
				rooms = append(rooms, map[string]any{"id": roomID, "type": "Bedroom", "name": fmt.Sprintf("Bedroom %d", roomID),
					"dims": []float64{4300.5, 5998.25}, "area": 25791400.5, "perimeter": 20596.5, "wallArea": 50221286.4, "wallSegments": segs})
				roomID++
			}
			floors = append(floors, map[string]any{"id": floorID, "name": fmt.Sprintf("Floor %d", floorID), "interiorArea": 61307728.16,
				"exteriorArea": 66212346.41, "perimeter": 39540.2, "isBelowGrade": false, "rooms": rooms})
			floorID++
		}
		buildings = append(buildings, map[string]any{"id": b + 1, "name": fmt.Sprintf("Building %d", b+1), "intAreaAboveGrade": 100182928.16,
			"intAreaTotal": 152990928.16, "isMainBuilding": b == 0, "floors": floors})
	}
	g["summary"].(map[string]any)["buildings"] = buildings
	media := g["media"].(map[string]any)
	var photos []any
	for i := range lim.Photos {
		photos = append(photos, map[string]any{"id": fmt.Sprintf("ph-%d", i), "file": "photos/front_small.jpg"})
	}
	media["photos"] = photos
	en := media["documents"].(map[string]any)["en"].(map[string]any)
	delete(media["documents"].(map[string]any), "fr")
	pages := (lim.Documents - 7) / 2
	var metric, imperial []any
	for i := range pages {
		metric = append(metric, map[string]any{"id": i + 1, "floorName": fmt.Sprintf("Floor %d", i+1), "file": "doc/floor_metric_en_1.jpg"})
		imperial = append(imperial, map[string]any{"id": i + 1, "floorName": fmt.Sprintf("Floor %d", i+1), "file": "doc/floor_imperial_en_1.jpg"})
	}
	en["jpgMetric"], en["jpgImperial"] = metric, imperial
	out, err := json.Marshal(g)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestGuideAtLimitsLoads checks that a guide holding as much as the
// default limits allow is accepted (the limits are consistent with each
// other and with the size cap of guide.json); BenchmarkExportAtLimits
// exports it.
func TestGuideAtLimitsLoads(t *testing.T) {
	ev := osEnv(t)
	writeGuideAtLimits(t, ev.srcDir, bundle.DefaultLimits)
	if _, err := bundle.Load(ev.src, filepath.Join(ev.srcDir, kingFolder)); err != nil {
		t.Fatal(err)
	}
	over := bundle.DefaultLimits
	over.Rooms *= 2
	over.WallSegments *= 2
	writeGuideAtLimits(t, ev.srcDir, over)
	if _, err := bundle.Load(ev.src, filepath.Join(ev.srcDir, kingFolder)); err == nil || !strings.Contains(err.Error(), "--max-rooms") {
		t.Fatalf("Load of a guide over the limits: %v, want the rooms limit", err)
	}
}

// BenchmarkExportAtLimits exports a guide holding as much as the default
// limits allow, and reports the memory allocated and the peak heap.
func BenchmarkExportAtLimits(b *testing.B) {
	for b.Loop() {
		b.StopTimer()
		ev := newBenchEnv(b)
		writeGuideAtLimits(b, ev.srcDir, bundle.DefaultLimits)
		e, err := New(ev.cfg)
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		peak := sampleHeap()
		b.StartTimer()
		res, err := e.ExportBundle(context.Background(), kingFolder)
		b.StopTimer()
		runtime.ReadMemStats(&after)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/(1<<20), "MiB-alloc/op")
		b.ReportMetric(float64(peak())/(1<<20), "MiB-peak-heap")
		b.ReportMetric(float64(res.Written), "files/op")
		b.ReportMetric(float64(res.Bytes)/(1<<20), "MiB-written/op")
		b.StartTimer()
	}
}

// sampleHeap samples HeapInuse every 10 ms until the returned function is
// called, which returns the highest value seen.
func sampleHeap() func() uint64 {
	done := make(chan struct{})
	res := make(chan uint64)
	go func() {
		var peak uint64
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
			select {
			case <-done:
				res <- peak
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 { close(done); return <-res }
}

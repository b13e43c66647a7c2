package exporter

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/guidepub/guidepub/exporter/write"
)

// mediaWork counts, until the test ends, the reads of each bundle media
// file (write.CopyHook: one per copy or strip that reads the source) and
// the decodes of each (write.DecodeHook: a PDF rewritten, an image decoded
// for its renditions).
type mediaWork struct {
	mu            sync.Mutex
	reads, decods map[string]int
}

func countMediaWork(t *testing.T) *mediaWork {
	mw := &mediaWork{}
	mw.reset()
	write.CopyHook = func(rel string, _ int) {
		mw.mu.Lock()
		mw.reads[rel]++
		mw.mu.Unlock()
	}
	write.DecodeHook = func(file string) {
		mw.mu.Lock()
		mw.decods[file]++
		mw.mu.Unlock()
	}
	t.Cleanup(func() { write.CopyHook, write.DecodeHook = nil, nil })
	return mw
}

func (mw *mediaWork) reset() {
	mw.mu.Lock()
	defer mw.mu.Unlock()
	mw.reads, mw.decods = map[string]int{}, map[string]int{}
}

// shiftRoom changes the area of the sample's first room, so that the
// next export renders new documents while the media stay as they are.
func shiftRoom(ev *env, by float64) {
	ev.editGuide(kingFolder, func(g map[string]any) {
		fl := g["summary"].(map[string]any)["buildings"].([]any)[0].(map[string]any)["floors"].([]any)[0]
		room := fl.(map[string]any)["rooms"].([]any)[0].(map[string]any)
		room["area"] = room["area"].(float64) + by
	})
}

func exportKing(t *testing.T, e *Exporter) *GuideResult {
	t.Helper()
	res, err := e.ExportBundle(context.Background(), kingFolder)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestMediaMadeOnce: with the documents in five languages naming the same
// files (each published under every language's folder of both views), an
// export reads and strips each source once; an export that follows a
// change of guide.json alone, by the same exporter or by a new one (a new
// process: the guide's ledger is in its record), reads and decodes no
// media at all, and publishes the same bytes.
func TestMediaMadeOnce(t *testing.T) {
	ev := osEnv(t)
	langs := []string{"en", "es", "fr", "it", "zh"}
	ev.editGuide(kingFolder, func(g map[string]any) {
		docs := g["media"].(map[string]any)["documents"].(map[string]any)
		en := docs["en"]
		for _, l := range langs {
			docs[l] = en
		}
	})
	mw := countMediaWork(t)
	e := ev.exporter()
	exportKing(t, e)
	// A floor plan image is published stripped, and copied as it is
	// into the private tree (a copy reads its source twice: to compare
	// with the file in place, then to write it).
	for rel, want := range map[string]int{"doc/floorplan_metric_en.pdf": 1, "doc/floorplan_imperial_en.pdf": 1,
		"doc/embed_preview.jpg": 1, "doc/floor_metric_en_1.jpg": 1 + 2} {
		if n := mw.reads[rel]; n != want {
			t.Errorf("%s read %d times, want %d", rel, n, want)
		}
	}
	for _, rel := range []string{"doc/floorplan_metric_en.pdf", "doc/floorplan_imperial_en.pdf"} {
		if n := mw.decods[kingFolder+"/"+rel]; n != 1 {
			t.Errorf("%s decoded %d times, want once", rel, n)
		}
	}
	// New destinations of one product are names of one file.
	namesOfOne(t, ev.outDir, langs, "pdfMetric.pdf")
	pub := snapshot(t, ev.out, ev.outDir)

	mw.reset()
	images := write.ImagesDecoded()
	shiftRoom(ev, 1)
	if res := exportKing(t, e); !res.Changed {
		t.Fatal("the changed guide was not exported again")
	}
	if len(mw.reads) > 0 || len(mw.decods) > 0 || write.ImagesDecoded() != images {
		t.Errorf("unchanged media worked on again: read %v, decoded %v, %d images decoded", mw.reads, mw.decods, write.ImagesDecoded()-images)
	}
	for _, p := range changed(pub, snapshot(t, ev.out, ev.outDir)) {
		if ext := filepath.Ext(p); ext == ".pdf" || ext == ".jpg" || ext == ".png" || ext == ".zip" {
			t.Errorf("%s changed, though its media did not", p)
		}
	}
	mw.reset()
	shiftRoom(ev, 1)
	if res := exportKing(t, ev.exporter()); !res.Changed || res.Unchanged == 0 {
		t.Fatalf("a new exporter: %+v", res)
	}
	if len(mw.reads) > 0 || len(mw.decods) > 0 || write.ImagesDecoded() != images {
		t.Errorf("a new exporter worked on unchanged media again: read %v, decoded %v, %d images decoded", mw.reads, mw.decods, write.ImagesDecoded()-images)
	}

	// A floor page replaced by another image: its destinations, which
	// exist, are replaced by names of the one new file.
	before := readFile(t, findPublished(t, ev.outDir, "vKT301A/doc/en/jpgMetric-1.jpg"))
	page := filepath.Join(ev.srcDir, kingFolder, "doc/floor_metric_en_1.jpg")
	other := readFile(t, filepath.Join(ev.srcDir, kingFolder, "doc/floor_metric_en_2.jpg"))
	if err := os.WriteFile(page, other, 0o644); err != nil {
		t.Fatal(err)
	}
	exportKing(t, e)
	if bytes.Equal(namesOfOne(t, ev.outDir, langs, "jpgMetric-1.jpg"), before) {
		t.Fatal("the replaced floor page was not published again")
	}
}

// namesOfOne checks that the public document file name of every language
// of langs, in both views of 301-king-st-e, is one file (hard links) with
// the bytes of vKT301A's English one, and returns those bytes.
func namesOfOne(t *testing.T, outDir string, langs []string, name string) []byte {
	t.Helper()
	first := findPublished(t, outDir, "vKT301A/doc/en/"+name)
	want := readFile(t, first)
	for _, v := range []string{"vKT301A", "vKT301B"} {
		for _, l := range langs {
			p := findPublished(t, outDir, v+"/doc/"+l+"/"+name)
			if !bytes.Equal(readFile(t, p), want) {
				t.Errorf("%s/doc/%s/%s differs from en's", v, l, name)
			}
			if !sameFile(t, p, first) {
				t.Errorf("%s/doc/%s/%s is a copy, not another name of en's", v, l, name)
			}
		}
	}
	return want
}

func readFile(t *testing.T, p string) []byte {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestMediaRedone: an exporter redoes a media file, on the next export,
// when its published file was rewritten (even at the same size with its
// modification time put back) or deleted, when its source changed, and
// when guide.json names another source for it, whether it published the
// guide or a new one (a new process) did.
func TestMediaRedone(t *testing.T) {
	ev := osEnv(t)
	mw := countMediaWork(t)
	e := ev.exporter()
	exportKing(t, e)
	metric := findPublished(t, ev.outDir, "vKT301A/doc/en/pdfMetric.pdf")
	floor := findPublished(t, ev.outDir, "vKT301B/doc/en/jpgMetric-1.jpg")
	photo := findPublished(t, ev.outDir, "vKT301A/doc/photos/ph-1.w480.jpg")
	wantMetric, wantFloor, wantPhoto := readFile(t, metric), readFile(t, floor), readFile(t, photo)

	// Tampered: same size, modification time put back; deleted.
	fi, err := os.Stat(metric)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(metric, bytes.Repeat([]byte("x"), len(wantMetric)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(metric, time.Time{}, fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(floor); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(photo, []byte("not a rendition"), 0o644); err != nil {
		t.Fatal(err)
	}
	shiftRoom(ev, 1)
	exportKing(t, ev.exporter()) // a new process: the record's ledger tells
	for p, want := range map[string][]byte{metric: wantMetric, floor: wantFloor, photo: wantPhoto} {
		if got, err := os.ReadFile(p); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s not restored (%v)", p, err)
		}
	}

	// The source changed: the imperial plan copied over the metric one.
	imperial := readFile(t, findPublished(t, ev.outDir, "vKT301A/doc/en/pdfImperial.pdf"))
	src := filepath.Join(ev.srcDir, kingFolder, "doc", "floorplan_metric_en.pdf")
	if err := os.WriteFile(src, readFile(t, filepath.Join(ev.srcDir, kingFolder, "doc", "floorplan_imperial_en.pdf")), 0o644); err != nil {
		t.Fatal(err)
	}
	mw.reset()
	shiftRoom(ev, 1)
	exportKing(t, e)
	if got := readFile(t, metric); !bytes.Equal(got, imperial) {
		t.Error("a changed source was not published again")
	}
	if n := mw.decods[kingFolder+"/doc/floorplan_metric_en.pdf"]; n != 1 {
		t.Errorf("changed source decoded %d times, want once", n)
	}

	// guide.json names another source for the same file.
	ev.editGuide(kingFolder, func(g map[string]any) {
		en := g["media"].(map[string]any)["documents"].(map[string]any)["en"].(map[string]any)
		en["jpgMetric"].([]any)[0].(map[string]any)["file"] = "doc/floor_imperial_en_1.jpg"
	})
	exportKing(t, e)
	if got, want := readFile(t, floor), readFile(t, findPublished(t, ev.outDir, "vKT301B/doc/en/jpgImperial-1.jpg")); !bytes.Equal(got, want) {
		t.Error("a file given another source kept the old one's bytes")
	}
}

// sameFile reports whether the paths a and b name one file.
func sameFile(t *testing.T, a, b string) bool {
	t.Helper()
	fa, err := os.Stat(a)
	if err != nil {
		t.Fatal(err)
	}
	fb, err := os.Stat(b)
	if err != nil {
		t.Fatal(err)
	}
	return os.SameFile(fa, fb)
}

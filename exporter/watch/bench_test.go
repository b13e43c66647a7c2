package watch

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/guidepub/guidepub/site/procstat"
)

// nopHandler accepts every call.
type nopHandler struct{}

func (nopHandler) Changed(context.Context, string) (time.Time, error) { return time.Time{}, nil }
func (nopHandler) Removed(context.Context, string) error              { return nil }

// BenchmarkWatcherMemory reports the heap a running Watcher holds over a
// source folder of 10,000 bundles (each a folder with guide.json and a
// photos folder of two files), with file system events once every folder
// is watched (the background set-up done), and with polling after its
// initial scan.
func BenchmarkWatcherMemory(b *testing.B) {
	const guides = 10000
	root := b.TempDir()
	for n := range guides {
		dir := filepath.Join(root, fmt.Sprintf("guide-%05d", n))
		if err := os.MkdirAll(filepath.Join(dir, "photos"), 0o755); err != nil {
			b.Fatal(err)
		}
		for _, f := range []string{"guide.json", "photos/front.jpg", "photos/front_small.jpg"} {
			if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(f)), []byte(f), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	for _, mode := range []string{ModeEvents, ModePoll} {
		b.Run(mode, func(b *testing.B) {
			var heap float64
			for range b.N {
				cfg := testConfig(root, nopHandler{}, slog.New(slog.DiscardHandler))
				if mode == ModePoll {
					cfg.Poll = time.Hour
				}
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				w, err := New(cfg)
				if err != nil {
					b.Fatal(err)
				}
				if w.Mode() != mode {
					b.Fatalf("mode %s, want %s", w.Mode(), mode)
				}
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan error, 1)
				go func() { done <- w.Run(ctx) }()
				ack := make(chan struct{})
				w.in <- input{kind: inInspect, fn: func(*state) {}, ack: ack} // the loop is running
				<-ack
				if mode == ModeEvents {
					<-w.watched
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				heap = float64(int64(after.HeapInuse) - int64(before.HeapInuse))
				runtime.KeepAlive(w)
				cancel()
				if err := <-done; err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(heap/(1<<20), "heap-MB")
			b.ReportMetric(heap/guides, "heap-B/guide")
		})
	}
}

// signalHandler is a Handler that tells, for the folders registered with
// expect, when Changed was called for them; it accepts every call.
type signalHandler struct {
	mu   sync.Mutex
	want map[string]chan struct{}
}

func (h *signalHandler) expect(folder string) <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := make(chan struct{})
	h.want[folder] = c
	return c
}

func (h *signalHandler) Changed(_ context.Context, folder string) (time.Time, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if c, ok := h.want[folder]; ok {
		close(c)
		delete(h.want, folder)
	}
	return time.Time{}, nil
}

func (h *signalHandler) Removed(context.Context, string) error { return nil }

// uploadStyles are the ways of uploading of BenchmarkUpload: each
// prepares upload i (untimed) and returns the bundle folder and the step
// that completes it (timed).
var uploadStyles = []struct {
	name    string
	prepare func(b *testing.B, root string, i, n int) (folder string, complete func() error)
}{
	{"staged", func(b *testing.B, root string, i, _ int) (string, func() error) {
		folder := fmt.Sprintf("upload-%06d", i)
		staging := filepath.Join(root, folder+".partial")
		benchWrite(b, filepath.Join(staging, "photos", "front.jpg"), "jpeg")
		benchWrite(b, filepath.Join(staging, "guide.json"), "{}")
		return folder, func() error { return os.Rename(staging, filepath.Join(root, folder)) }
	}},
	{"renamed", func(b *testing.B, root string, i, n int) (string, func() error) {
		folder := fmt.Sprintf("guide-%05d", (i*7919)%n)
		tmp := filepath.Join(root, folder, "guide.json.tmp")
		benchWrite(b, tmp, fmt.Sprint(i))
		return folder, func() error { return os.Rename(tmp, filepath.Join(root, folder, "guide.json")) }
	}},
	{"copied", func(b *testing.B, root string, i, n int) (string, func() error) {
		folder := fmt.Sprintf("guide-%05d", (i*7919)%n)
		return folder, func() error {
			return os.WriteFile(filepath.Join(root, folder, "guide.json"), []byte(fmt.Sprint(i)), 0o644)
		}
	}},
}

// benchWrite writes data to p, creating its folder.
func benchWrite(b *testing.B, p, data string) {
	b.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkUpload measures what one upload costs the watcher itself over
// a source folder of 1,000 and 10,000 bundle folders, all watched, for
// each way of uploading: "staged" (a bundle folder written as
// "x.partial", then renamed into place), "renamed" (an existing bundle's
// guide.json saved through a temporary name) and "copied" (guide.json
// written in place). The handler does nothing, so what is measured is the
// watcher's work (events, debounce, renewing watches): cpu-ms/upload is the
// process's CPU time per upload, the untimed preparation of the upload
// included; latency-p50-ms is from the step that completes the upload
// until the handler is called, quiet period included when the upload
// waits for one (DefaultDebounce). Each bundle folder holds only a photos
// folder and guide.json: what the watcher spends depends on the number of
// folders it watches, not on their files. Each run is 20 uploads.
func BenchmarkUpload(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("guides=%d", n), func(b *testing.B) {
			root := b.TempDir()
			for i := range n {
				benchWrite(b, filepath.Join(root, fmt.Sprintf("guide-%05d", i), "photos", "front.jpg"), "jpeg")
				benchWrite(b, filepath.Join(root, fmt.Sprintf("guide-%05d", i), "guide.json"), "{}")
			}
			h := &signalHandler{want: map[string]chan struct{}{}}
			cfg := testConfig(root, h, slog.New(slog.DiscardHandler))
			w, err := New(cfg)
			if err != nil {
				b.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- w.Run(ctx) }()
			defer func() {
				cancel()
				if err := <-done; err != nil {
					b.Error(err)
				}
			}()
			<-w.watched
			benchIdle(b, w)
			seq := 0 // numbers every upload of this size: staged names never repeat
			for _, style := range uploadStyles {
				b.Run(style.name, func(b *testing.B) {
					var lat []time.Duration
					cpu0 := procstat.CPUTime()
					for range b.N * benchUploads {
						folder, complete := style.prepare(b, root, seq, n)
						seq++
						called := h.expect(folder)
						t0 := time.Now()
						if err := complete(); err != nil {
							b.Fatal(err)
						}
						select {
						case <-called:
						case <-time.After(time.Minute):
							b.Fatalf("%s: no handler call within a minute", folder)
						}
						lat = append(lat, time.Since(t0))
						benchIdle(b, w)
					}
					cpu := procstat.CPUTime() - cpu0
					slices.Sort(lat)
					b.ReportMetric(float64(cpu.Microseconds())/1000/float64(len(lat)), "cpu-ms/upload")
					b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "latency-p50-ms")
				})
			}
		})
	}
}

// benchUploads is the number of uploads of one run of BenchmarkUpload.
const benchUploads = 20

// benchIdle waits until w has nothing pending, queued or running.
func benchIdle(b *testing.B, w *Watcher) {
	b.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		ok := false
		ack := make(chan struct{})
		w.in <- input{kind: inInspect, fn: func(st *state) { ok = idle(st) }, ack: ack}
		<-ack
		if ok {
			return
		}
		if time.Now().After(deadline) {
			b.Fatal("the watcher is not idle after a minute")
		}
		time.Sleep(time.Millisecond)
	}
}

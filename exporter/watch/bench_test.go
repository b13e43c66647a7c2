package watch

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// nopHandler accepts every call.
type nopHandler struct{}

func (nopHandler) Changed(context.Context, string) (time.Time, error) { return time.Time{}, nil }
func (nopHandler) Removed(context.Context, string) error              { return nil }

// BenchmarkWatcherMemory reports the heap a running Watcher holds over a
// source folder of 10,000 bundles (each a folder with guide.json and a
// photos folder of two files), after its initial scan, with file system
// events and with polling.
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

package pipeline

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/guidepub/guidepub/exporter"
	"github.com/guidepub/guidepub/exporter/edge"
)

// TestPurgesFollowExports: each export's changed public ids are purged at
// the edge (Varnish's purge, on a local server), an export that only
// recompressed files purges nothing, and an export that fails half-way
// purges what it wrote; the purge record of an export is released once
// it is done, and kept when it was cut short.
func TestPurgesFollowExports(t *testing.T) {
	var mu sync.Mutex
	var purged []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		purged = append(purged, r.Header.Get("xkey-purge"))
		mu.Unlock()
	}))
	defer srv.Close()
	p, err := edge.Parse("varnish+"+srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	q, err := edge.Open(context.Background(), edge.Config{Dir: dir, Purger: p})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	pipe := New(Config{Edge: q})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { pipe.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	changes := func(paths ...string) []exporter.FileChange {
		var out []exporter.FileChange
		for _, p := range paths {
			out = append(out, exporter.FileChange{Path: p})
		}
		return out
	}
	for _, res := range []exporter.GuideResult{
		{Folder: "king", GuideID: "g1", Changed: true, Changes: changes("vA/data/summary", "u/vA/index.html", "king-st/data/status")},
		{Folder: "king", GuideID: "g1", Changed: true, Recompressed: true, Changes: changes("vA/data/summary.br")},
		{Folder: "rue", GuideID: "g2", Changed: true, Changes: changes("vB/doc/photos/ph-1.jpg"), Err: os.ErrPermission},
	} {
		pipe.ExportGuide(context.Background(), func() (*exporter.GuideResult, error) { return &res, res.Err })
	}
	idle, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	if n := pipe.Idle(idle); n != 0 {
		t.Fatalf("%d purges pending", n)
	}
	mu.Lock()
	got := strings.Join(purged, " ")
	mu.Unlock()
	want := "guidepub-king-st guidepub-vA guidepub-vB"
	if fields := slices.Sorted(slices.Values(strings.Fields(got))); strings.Join(fields, " ") != want {
		t.Errorf("purged %q, want %q", got, want)
	}
	names, _ := os.ReadDir(dir)
	for _, n := range names {
		if strings.HasPrefix(n.Name(), "owed-") || strings.HasPrefix(n.Name(), "purge-") {
			t.Errorf("%s left in the queue", n.Name())
		}
	}

	// An export that returns nothing and an error was cut short: its
	// record stays, so that a restart purges everything.
	pipe.ExportGuide(context.Background(), func() (*exporter.GuideResult, error) { return nil, context.Canceled })
	names, _ = os.ReadDir(dir)
	owed := 0
	for _, n := range names {
		if strings.HasPrefix(n.Name(), "owed-") {
			owed++
		}
	}
	if owed != 1 {
		t.Errorf("%d purge records after an export cut short, want 1", owed)
	}
}

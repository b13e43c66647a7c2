package delivery

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"
)

// BenchmarkDelivery measures deliveries per second end to end: Enqueue
// (committed) → a worker's POST → the receiver's 2xx, with the latency from
// the start of the Enqueue call to the receiver getting the event (p99).
// The workers=N runs enqueue everything at once in batches of 50 (their
// p99 is mostly time spent queued behind the others); the paced runs
// enqueue one event at a time, 200 a second, with the default settings.
func BenchmarkDelivery(b *testing.B) {
	for _, be := range backends {
		for _, workers := range []int{16, 64} {
			b.Run(fmt.Sprintf("%s/workers=%d", be.name, workers), func(b *testing.B) {
				benchmarkDelivery(b, be.dsn, workers, 0)
			})
		}
		b.Run(be.name+"/paced=200/s", func(b *testing.B) {
			benchmarkDelivery(b, be.dsn, DefaultConfig().Workers, 200)
		})
	}
}

// benchmarkDelivery delivers b.N events with workers senders, enqueued in batches as fast as possible (perSecond 0) or one
// at a time at perSecond.
func benchmarkDelivery(b *testing.B, newDSN func(testing.TB) string, workers, perSecond int) {
	dsn := newDSN(b)
	var (
		mu       sync.Mutex
		received = map[int]time.Time{}
		all      = make(chan struct{})
		want     int
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var ev struct{ N int }
		_ = json.Unmarshal(body, &ev)
		now := time.Now()
		mu.Lock()
		if _, dup := received[ev.N]; !dup {
			received[ev.N] = now
			if len(received) == want {
				close(all)
			}
		}
		mu.Unlock()
	}))
	defer srv.Close()

	st := openStore(b, dsn)
	cfg := testConfig()
	cfg.Workers = workers
	cfg.PollInterval = 0 // the default
	q := startQueue(b, st, cfg)
	ctx := context.Background()

	// Each run of this function delivers b.N new events.
	mu.Lock()
	base := len(received)
	want = base + b.N
	all = make(chan struct{})
	mu.Unlock()
	enqueued := make([]time.Time, b.N)
	b.ResetTimer()
	start := time.Now()
	batch := 50
	if perSecond > 0 {
		batch = 1
	}
	for i := 0; i < b.N; i += batch {
		if perSecond > 0 {
			time.Sleep(time.Until(start.Add(time.Duration(i) * time.Second / time.Duration(perSecond))))
		}
		var msgs []Message
		for j := i; j < min(b.N, i+batch); j++ {
			msgs = append(msgs, message("g-bench", srv.URL, base+j))
		}
		t0 := time.Now()
		if _, err := q.Enqueue(ctx, msgs); err != nil {
			b.Fatal(err)
		}
		for j := i; j < min(b.N, i+batch); j++ {
			enqueued[j] = t0
		}
	}
	enqueueTime := time.Since(start)
	select {
	case <-all:
	case <-time.After(5 * time.Minute):
		b.Fatal("deliveries did not all arrive within 5 minutes")
	}
	elapsed := time.Since(start)
	b.StopTimer()

	mu.Lock()
	lat := make([]time.Duration, 0, b.N)
	for j := range b.N {
		lat = append(lat, received[base+j].Sub(enqueued[j]))
	}
	mu.Unlock()
	slices.Sort(lat)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "deliveries/s")
	b.ReportMetric(float64(lat[(len(lat)*99)/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(runtime.NumCPU()), "cpus")
	b.ReportMetric(float64(b.N)/enqueueTime.Seconds(), "enqueued/s")
}

//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/guidepub/guidepub/exporter/pipeline"
	"github.com/guidepub/guidepub/sidecar/store/storetest"
)

// BenchmarkWebhookLag measures how long after the exporter publishes a new
// guide's data/status ("ready") its ready event reaches a webhook receiver:
// a watcher with the real exporter, the pipeline queueing ready events in a
// real store (a SQLite file, or PostgreSQL when GUIDEPUB_TEST_POSTGRES
// answers), the delivery queue at its default settings, and an httptest
// receiver on loopback. "dev" runs the watcher and the queue on one store,
// as "guidepub dev" does; "watch+sidecar" gives the watcher a store of its
// own (another connection to the same database, as a separate "guidepub
// watch" process has) and the sidecar another, so only the database links
// them.
//
// The moment the status is published is the change time (ctime) of the
// earliest of the guide's data/status files (views and alias), which the
// kernel sets when the file is linked or renamed into place; the kernel
// takes it from a clock that may lag by up to one tick, so the lag
// measured is, if anything, a little longer than the real one. Each run
// uploads GUIDEPUB_BENCH_UPLOADS new guides (default 40) one after the
// other, each once the previous one's event has arrived, each staged and
// its folder renamed into place (stageBundle); ms/event is the
// status→POST lag, queued-ms the part until the pipeline's Enqueue returned
// (the export's remaining writes and the commit), sent-ms the rest (it can
// be below zero: the POST may arrive before Enqueue has returned), and
// status-ms the time from the rename to the status.
func BenchmarkWebhookLag(b *testing.B) {
	stores := []struct {
		name string
		dsn  func(testing.TB) string
	}{{"sqlite", storetest.SQLite}, {"postgres", storetest.Postgres}}
	for _, st := range stores {
		for _, split := range []bool{false, true} {
			name := st.name + "/dev"
			if split {
				name = st.name + "/watch+sidecar"
			}
			b.Run(name, func(b *testing.B) { benchmarkWebhookLag(b, st.dsn(b), split) })
		}
	}
}

func benchmarkWebhookLag(b *testing.B, dsn string, split bool) {
	uploads := benchUploads(b, 40)
	pause := benchPause(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	root := b.TempDir()
	src, out, priv := filepath.Join(root, "src"), filepath.Join(root, "out"), filepath.Join(root, "private")
	for _, d := range []string{src, out, priv} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			b.Fatal(err)
		}
	}
	rcv := &arrivals{at: map[string]time.Time{}, kick: make(chan struct{}, 1)}
	hook := httptest.NewServer(rcv)
	defer hook.Close()

	logger := slog.New(slog.DiscardHandler)
	open := func() *sidecarParts {
		cfg := newSidecarConfig(priv, dsn, logger)
		cfg.AllowPrivateTargets = true
		parts, err := openSidecar(ctx, cfg)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { parts.Close(context.Background()) })
		return parts
	}
	side := open()
	if err := side.Start(ctx); err != nil {
		b.Fatal(err)
	}
	watcher := side
	if split {
		watcher = open()
	}
	queued := &enqueueTimes{q: eventQueue{watcher.Events, logger}, at: map[string]time.Time{}}

	_, stopped := benchWatch(ctx, b, src, out, priv, queued, logger, nil)

	var lag, toQueue, toPost, toStatus []time.Duration
	b.ResetTimer()
	for i := range uploads {
		time.Sleep(pause)
		uploaded := stageBundle(b, filepath.Join(src, fmt.Sprintf("guide-%05d", i)), benchBundle(b, i, hook.URL))
		id := fmt.Sprintf("gBENCH%05d", i)
		rcv.wait(b, "the event of "+id, time.Minute, func() bool { _, ok := rcv.of(id); return ok })
		// The POST may come before the pipeline's Enqueue call has returned.
		rcv.wait(b, "the return of Enqueue for "+id, time.Minute, func() bool { return !queued.of(id).IsZero() })
		posted, _ := rcv.of(id)
		status := statusPublished(b, out, i)
		enq := queued.of(id)
		toStatus = append(toStatus, status.Sub(uploaded))
		lag = append(lag, posted.Sub(status))
		toQueue = append(toQueue, enq.Sub(status))
		toPost = append(toPost, posted.Sub(enq))
	}
	b.StopTimer()
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	for _, m := range []struct {
		name string
		d    []time.Duration
	}{{"event", lag}, {"queued", toQueue}, {"sent", toPost}, {"status", toStatus}} {
		slices.Sort(m.d)
		unit := m.name + "-ms"
		if m.name == "event" {
			unit = "ms/event"
		}
		b.ReportMetric(ms(percentile(m.d, 50)), unit+"-p50")
		b.ReportMetric(ms(percentile(m.d, 99)), unit+"-p99")
	}
	b.ReportMetric(ms(lag[len(lag)-1]), "ms/event-max")
	cancel()
	stopped()
}

// benchPause returns the pause before each upload,
// $GUIDEPUB_BENCH_PAUSE (a Go duration; none when unset): with one, each
// upload is measured alone, the previous one's quick siblings finished.
func benchPause(b *testing.B) time.Duration {
	s := os.Getenv("GUIDEPUB_BENCH_PAUSE")
	if s == "" {
		return 0
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		b.Fatalf("GUIDEPUB_BENCH_PAUSE=%q: want a duration such as 2s", s)
	}
	return d
}

// statusPublished returns when the earliest of generated guide n's
// data/status documents (its two views and its alias) was put in place:
// its change time.
func statusPublished(b *testing.B, out string, n int) time.Time {
	b.Helper()
	var first time.Time
	for _, id := range []string{benchViewID(n, 0), benchViewID(n, 1), fmt.Sprintf("bench-%05d", n)} {
		fi, err := os.Stat(filepath.Join(out, id, "data", "status"))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			b.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		at := time.Unix(st.Ctim.Sec, st.Ctim.Nsec)
		if first.IsZero() || at.Before(first) {
			first = at
		}
	}
	if first.IsZero() {
		b.Fatalf("guide %d: no data/status published", n)
	}
	return first
}

// enqueueTimes is the pipeline's EventQueue, noting when each guide's
// Enqueue returned.
type enqueueTimes struct {
	q  pipeline.EventQueue
	mu sync.Mutex
	at map[string]time.Time
}

func (e *enqueueTimes) Enqueue(ctx context.Context, guideID string) (pipeline.Enqueued, error) {
	n, err := e.q.Enqueue(ctx, guideID)
	now := time.Now()
	e.mu.Lock()
	e.at[guideID] = now
	e.mu.Unlock()
	return n, err
}

func (e *enqueueTimes) of(guideID string) time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.at[guideID]
}

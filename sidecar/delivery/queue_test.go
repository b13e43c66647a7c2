package delivery

import (
	"context"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/riverqueue/river"

	"github.com/guidepub/guidepub/site"
	"github.com/guidepub/guidepub/site/clock/clocktest"
)

func TestNextRetryUsesClockAndRandom(t *testing.T) {
	st := openStore(t, backends[0].dsn(t))
	now := time.Date(2030, 5, 6, 7, 8, 9, 0, time.UTC)
	cfg := DefaultConfig() // 10m..15m
	cfg.Clock, cfg.Rand = clocktest.NowFunc(func() time.Time { return now }), mrand.New(mrand.NewPCG(7, 9))
	q, err := New(st, cfg)
	if err != nil {
		t.Fatal(err)
	}
	replay := mrand.New(mrand.NewPCG(7, 9))
	w := &worker{q: q}
	seen := map[time.Duration]bool{}
	for i := range 200 {
		want := 10*time.Minute + time.Duration(replay.Int64N(int64(5*time.Minute)+1))
		got := w.NextRetry(&river.Job[jobArgs]{})
		if !got.Equal(now.Add(want)) {
			t.Fatalf("draw %d: NextRetry = %v, want now+%s", i, got, want)
		}
		delay := got.Sub(now)
		if delay < 10*time.Minute || delay > 15*time.Minute {
			t.Fatalf("delay %s outside [10m, 15m]", delay)
		}
		seen[delay.Truncate(time.Minute)] = true
	}
	if len(seen) < 5 {
		t.Errorf("delays not spread over 10..15 minutes: %v", seen)
	}
	if got := w.Timeout(&river.Job[jobArgs]{}); got != 30*time.Second+jobMargin {
		t.Errorf("job timeout %s", got)
	}
	if q.cfg.RescueAfter != 30*time.Second+jobMargin+rescueMargin {
		t.Errorf("default RescueAfter %s, want timeout + 10s", q.cfg.RescueAfter)
	}
	if q.cfg.MaxAttempts != 5 {
		t.Errorf("default MaxAttempts %d", q.cfg.MaxAttempts)
	}
}

func TestConfigErrors(t *testing.T) {
	st := openStore(t, backends[0].dsn(t))
	for name, change := range map[string]func(*Config){
		"max below min":     func(c *Config) { c.RetryMin, c.RetryMax = time.Minute, time.Second },
		"negative min":      func(c *Config) { c.RetryMin, c.RetryMax = -time.Second, time.Second },
		"zero min":          func(c *Config) { c.RetryMin = 0 },
		"negative attempts": func(c *Config) { c.MaxAttempts = -1 },
		"zero attempts":     func(c *Config) { c.MaxAttempts = 0 },
		"negative timeout":  func(c *Config) { c.Timeout = -time.Second },
		"zero timeout":      func(c *Config) { c.Timeout = 0 },
		"too many workers":  func(c *Config) { c.Workers = 1 << 20 },
		"zero workers":      func(c *Config) { c.Workers = 0 },
	} {
		t.Run(name, func(t *testing.T) {
			cfg := DefaultConfig()
			change(&cfg)
			if _, err := New(st, cfg); err == nil {
				t.Error("New accepted it")
			}
		})
	}
	if _, err := New(nil, DefaultConfig()); err == nil {
		t.Error("New accepted a nil store")
	}
	// RescueAfter is never shorter than an attempt can take.
	cfg := DefaultConfig()
	cfg.Timeout, cfg.RescueAfter = time.Second, time.Millisecond
	q, err := New(st, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if q.cfg.RescueAfter != time.Second+jobMargin+rescueMargin {
		t.Errorf("RescueAfter %v, %v", q.cfg.RescueAfter, err)
	}
}

func TestEnqueueValidation(t *testing.T) {
	st := openStore(t, backends[0].dsn(t))
	q, err := New(st, testConfig())
	if err != nil {
		t.Fatal(err)
	}
	good := message("g", "https://example.com/h", 1)
	if ds, err := q.Enqueue(context.Background(), nil); err != nil || ds == nil || len(ds) != 0 {
		t.Errorf("Enqueue(nil) = %v, %v; want an empty list", ds, err)
	}
	for name, m := range map[string]Message{
		"no guide":   {Webhook: site.Webhook{URL: "https://example.com"}, Body: []byte(`{}`)},
		"no url":     {GuideID: "g", Body: []byte(`{}`)},
		"not json":   {GuideID: "g", Webhook: site.Webhook{URL: "https://example.com"}, Body: []byte(`{`)},
		"empty body": {GuideID: "g", Webhook: site.Webhook{URL: "https://example.com"}},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := q.Enqueue(context.Background(), []Message{good, m}); err == nil {
				t.Fatal("Enqueue accepted it")
			}
			ds, err := q.Deliveries(context.Background(), "g")
			if err != nil || len(ds) != 0 {
				t.Errorf("after a rejected batch: %d deliveries, %v; want none queued", len(ds), err)
			}
		})
	}
}

func TestUnique(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			st := openStore(t, dsn)
			rc := newReceiver(t, status(200))
			ctx := context.Background()
			q, err := New(st, testConfig())
			if err != nil {
				t.Fatal(err)
			}
			m := message("g-unique", rc.srv.URL, 1)
			m.Unique = true
			other := m
			other.Revision = "r2"
			first, err := q.Enqueue(ctx, []Message{m, m, other})
			if err != nil || len(first) != 2 {
				t.Fatalf("first Enqueue: %d deliveries, %v; want 2 (duplicate within the batch skipped)", len(first), err)
			}
			again, err := q.Enqueue(ctx, []Message{m})
			if err != nil || len(again) != 0 {
				t.Fatalf("second Enqueue: %d deliveries, %v; want none", len(again), err)
			}
			notUnique := m
			notUnique.Unique = false
			if ds, err := q.Enqueue(ctx, []Message{notUnique}); err != nil || len(ds) != 1 {
				t.Fatalf("non-unique Enqueue of the same message: %d, %v", len(ds), err)
			}

			// The same unique message from several processes at once (one
			// store each): one delivery.
			racer := message("g-race", rc.srv.URL, 1)
			racer.Unique = true
			const n = 6
			var (
				wg     sync.WaitGroup
				queued atomic.Int64
				errs   = make(chan error, n)
				start  = make(chan struct{})
			)
			for range n {
				s2 := openStore(t, dsn)
				q2, err := New(s2, testConfig())
				if err != nil {
					t.Fatal(err)
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					ds, err := q2.Enqueue(ctx, []Message{racer})
					if err != nil {
						errs <- err
					}
					queued.Add(int64(len(ds)))
				}()
			}
			close(start)
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Errorf("concurrent Enqueue: %v", err)
			}
			if queued.Load() != 1 {
				t.Errorf("%d processes queued the unique message, want 1", queued.Load())
			}
			startQueue(t, st, testConfig())
			for _, g := range []struct {
				guide string
				want  int
			}{{"g-unique", 3}, {"g-race", 1}} {
				ds, err := q.Deliveries(ctx, g.guide)
				if err != nil || len(ds) != g.want {
					t.Fatalf("Deliveries(%s): %d, %v; want %d", g.guide, len(ds), err, g.want)
				}
				for _, d := range ds {
					waitFinal(t, q, g.guide, d.ID)
				}
			}
			if got := len(rc.requests()); got != 4 {
				t.Errorf("receiver got %d requests, want 4", got)
			}
		})
	}
}

func TestRetryAfterDrop(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			st := openStore(t, b.dsn(t))
			var code atomic.Int64
			code.Store(404)
			rc := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(int(code.Load())) })
			cfg := testConfig()
			q := startQueue(t, st, cfg)
			ctx := context.Background()
			d := enqueueOne(t, q, message("g-retry", rc.srv.URL, 1))
			if got := waitFinal(t, q, "g-retry", d.ID); got.State != StateDropped {
				t.Fatalf("state %s", got.State)
			}
			if _, err := q.Retry(ctx, "g-other", d.ID); !errors.Is(err, ErrNotFound) {
				t.Errorf("Retry of another guide's delivery: %v, want ErrNotFound", err)
			}
			if _, err := q.Retry(ctx, "g-retry", "dlv_nope"); !errors.Is(err, ErrNotFound) {
				t.Errorf("Retry of an unknown delivery: %v, want ErrNotFound", err)
			}

			// Exhausted by 503s, then re-sent: a fresh budget of MaxAttempts.
			code.Store(503)
			r, err := q.Retry(ctx, "g-retry", d.ID)
			if err != nil || r.State != StateQueued || len(r.Attempts) != 1 {
				t.Fatalf("Retry: %+v, %v", r, err)
			}
			if _, err := q.Retry(ctx, "g-retry", d.ID); err != nil && !errors.Is(err, ErrNotRetryable) {
				t.Errorf("second Retry while queued: %v, want ErrNotRetryable or success after it finished", err)
			}
			got := waitFinal(t, q, "g-retry", d.ID)
			if got.State != StateExhausted || len(got.Attempts) != 1+cfg.MaxAttempts {
				t.Fatalf("after retry: %s with %d attempts, want exhausted with %d", got.State, len(got.Attempts), 1+cfg.MaxAttempts)
			}

			code.Store(200)
			if _, err := q.Retry(ctx, "g-retry", d.ID); err != nil {
				t.Fatal(err)
			}
			got = waitFinal(t, q, "g-retry", d.ID)
			if got.State != StateDelivered || len(got.Attempts) != 2+cfg.MaxAttempts {
				t.Fatalf("after second retry: %s with %d attempts", got.State, len(got.Attempts))
			}
			if _, err := q.Retry(ctx, "g-retry", d.ID); !errors.Is(err, ErrNotRetryable) {
				t.Errorf("Retry of a delivered one: %v, want ErrNotRetryable", err)
			}
			for _, r := range rc.requests() {
				if r.header.Get("webhook-id") != d.WebhookID {
					t.Errorf("re-sent with webhook-id %s, want %s", r.header.Get("webhook-id"), d.WebhookID)
				}
			}
			for i := 1; i < len(got.Attempts); i++ {
				if got.Attempts[i].At.Before(got.Attempts[i-1].At) {
					t.Errorf("attempts out of order: %+v", got.Attempts)
				}
			}
		})
	}
}

func TestDeliveriesList(t *testing.T) {
	st := openStore(t, backends[0].dsn(t))
	q, err := New(st, testConfig())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var msgs []Message
	for i := range 5 {
		msgs = append(msgs, message("g-list", fmt.Sprintf("https://example.com/%d", i), i))
	}
	msgs = append(msgs, message("g-else", "https://example.com/x", 9))
	queued, err := q.Enqueue(ctx, msgs)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := q.Deliveries(ctx, "g-list")
	if err != nil || len(ds) != 5 {
		t.Fatalf("%d deliveries, %v", len(ds), err)
	}
	ids := map[string]bool{}
	for _, d := range ds {
		if d.GuideID != "g-list" || d.State != StateQueued || d.Attempts == nil || !strings.HasPrefix(d.WebhookID, "msg_") {
			t.Errorf("listed %+v", d)
		}
		ids[d.ID] = true
	}
	for _, d := range queued[:5] {
		if !ids[d.ID] {
			t.Errorf("queued %s not listed", d.ID)
		}
	}
	if ds, _ := q.Deliveries(ctx, "g-none"); ds == nil || len(ds) != 0 {
		t.Errorf("unknown guide: %v, want an empty list", ds)
	}
	if _, err := q.Delivery(ctx, "g-else", queued[0].ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("Delivery of another guide: %v", err)
	}
}

func TestMetrics(t *testing.T) {
	st := openStore(t, backends[0].dsn(t))
	reg := prometheus.NewRegistry()
	ok := newReceiver(t, status(200))
	bad := newReceiver(t, status(400))
	flaky := newReceiver(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == 1 {
			w.WriteHeader(500)
			return
		}
		w.WriteHeader(200)
	})
	cfg := testConfig()
	cfg.Registerer = reg
	q, err := New(st, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ds, err := q.Enqueue(ctx, []Message{message("g-m", ok.srv.URL, 1), message("g-m", bad.srv.URL, 2), message("g-m", flaky.srv.URL, 3)})
	if err != nil {
		t.Fatal(err)
	}
	if got := testutil.ToFloat64(collector(t, reg, "guidepub_webhook_queue_depth")); got != 3 {
		t.Errorf("queue depth before start %v, want 3", got)
	}
	startQueue(t, st, cfg)
	for _, d := range ds {
		waitFinal(t, q, "g-m", d.ID)
	}
	for outcome, want := range map[string]float64{"delivered": 2, "dropped": 1, "retried": 1, "exhausted": 0} {
		if got := testutil.ToFloat64(q.metrics.outcomes.WithLabelValues(outcome)); got != want {
			t.Errorf("outcome %s = %v, want %v", outcome, got, want)
		}
	}
	if n := testutil.CollectAndCount(q.metrics.latency); n != 1 {
		t.Errorf("latency histogram series %d", n)
	}
	if got := testutil.ToFloat64(collector(t, reg, "guidepub_webhook_queue_depth")); got != 0 {
		t.Errorf("queue depth after delivery %v, want 0", got)
	}
	// A second queue on the same registry shares the collectors.
	if _, err := New(st, cfg); err != nil {
		t.Errorf("second queue on one registry: %v", err)
	}
}

// collector finds a registered collector by metric name.
func collector(t *testing.T, reg *prometheus.Registry, name string) prometheus.Collector {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return gathered{reg, name}
		}
	}
	t.Fatalf("metric %s not registered", name)
	return nil
}

// gathered re-gathers one metric family from a registry, as a Collector
// for testutil.
type gathered struct {
	reg  *prometheus.Registry
	name string
}

func (g gathered) Describe(chan<- *prometheus.Desc) {}

func (g gathered) Collect(ch chan<- prometheus.Metric) {
	mfs, _ := g.reg.Gather()
	for _, mf := range mfs {
		if mf.GetName() == g.name {
			ch <- prometheus.MustNewConstMetric(prometheus.NewDesc(g.name, "", nil, nil), prometheus.GaugeValue, mf.GetMetric()[0].GetGauge().GetValue())
		}
	}
}

func TestStopFinishesInFlight(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			st := openStore(t, b.dsn(t))
			arrived := make(chan struct{}, 1)
			rc := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
				arrived <- struct{}{}
				time.Sleep(300 * time.Millisecond) // a slow receiver, not a retry delay
				w.WriteHeader(200)
			})
			q, err := New(st, testConfig())
			if err != nil {
				t.Fatal(err)
			}
			if err := q.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			d := enqueueOne(t, q, message("g-stop", rc.srv.URL, 1))
			<-arrived
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := q.Stop(ctx); err != nil {
				t.Fatalf("Stop: %v", err)
			}
			got, err := q.Delivery(context.Background(), "g-stop", d.ID)
			if err != nil || got.State != StateDelivered || len(got.Attempts) != 1 {
				t.Errorf("after Stop: %+v, %v; want the in-flight send finished and recorded", got, err)
			}
			// Stopped: nothing more is sent.
			d2 := enqueueOne(t, q, message("g-stop", rc.srv.URL, 2))
			time.Sleep(100 * time.Millisecond)
			if got, _ := q.Delivery(context.Background(), "g-stop", d2.ID); got.State != StateQueued || len(rc.requests()) != 1 {
				t.Errorf("a stopped queue sent: %+v", got)
			}
		})
	}
}

func TestStopWithoutStart(t *testing.T) {
	st := openStore(t, backends[0].dsn(t))
	q, err := New(st, testConfig())
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Stop(context.Background()); err != nil {
		t.Errorf("Stop of a queue never started: %v", err)
	}
}

func TestStopCancelsWhenTimeIsUp(t *testing.T) {
	st := openStore(t, backends[0].dsn(t))
	arrived := make(chan struct{}, 1)
	rc := newReceiver(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		select { // hangs until the sender gives up
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	})
	cfg := testConfig()
	cfg.Timeout = 10 * time.Second
	cfg.RetryMin, cfg.RetryMax = time.Hour, time.Hour
	q, err := New(st, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The context given to Start ending does not stop the queue.
	startCtx, cancelStart := context.WithCancel(context.Background())
	if err := q.Start(startCtx); err != nil {
		t.Fatal(err)
	}
	cancelStart()
	d := enqueueOne(t, q, message("g-stop", rc.srv.URL, 1))
	<-arrived
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	began := time.Now()
	if err := q.Stop(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Stop = %v, want the context's deadline error", err)
	}
	if took := time.Since(began); took > 5*time.Second {
		t.Errorf("Stop took %s", took)
	}
	got, err := q.Delivery(context.Background(), "g-stop", d.ID)
	if err != nil || got.State != StateRetrying || len(got.Attempts) != 1 || got.Attempts[0].Error == "" {
		t.Errorf("after a cut-short Stop: %+v, %v; want one failed attempt, to be retried", got, err)
	}
}

// TestStaleJobAfterRetry: a job queued before a manual re-send (one River
// rescued after a crash, say) does nothing; the re-send's job sends.
func TestStaleJobAfterRetry(t *testing.T) {
	st := openStore(t, backends[0].dsn(t))
	var code atomic.Int64
	code.Store(404)
	rc := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(int(code.Load())) })
	q, err := New(st, testConfig()) // never started: the test runs the attempts itself
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	d := enqueueOne(t, q, message("g-stale", rc.srv.URL, 1))
	first := jobArgs{DeliveryID: d.ID}
	if err := q.attempt(ctx, first); err == nil {
		t.Fatal("a 404 attempt returned no error (River would not cancel the job)")
	}
	code.Store(200)
	if _, err := q.Retry(ctx, "g-stale", d.ID); err != nil {
		t.Fatal(err)
	}
	if err := q.attempt(ctx, first); err != nil {
		t.Fatalf("stale job: %v", err)
	}
	if n := len(rc.requests()); n != 1 {
		t.Fatalf("the stale job sent: %d requests, want 1", n)
	}
	if err := q.attempt(ctx, jobArgs{DeliveryID: d.ID, Round: 1}); err != nil {
		t.Fatalf("re-send's job: %v", err)
	}
	got, _ := q.Delivery(ctx, "g-stale", d.ID)
	if got.State != StateDelivered || len(got.Attempts) != 2 || len(rc.requests()) != 2 {
		t.Errorf("after the re-send's job: %s, %d attempts, %d requests", got.State, len(got.Attempts), len(rc.requests()))
	}
	// An unknown delivery cancels its job.
	if err := q.attempt(ctx, jobArgs{DeliveryID: "dlv_gone"}); err == nil {
		t.Error("a job for a missing delivery returned no error")
	}
}

package delivery

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	mrand "math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/guidepub/guidepub/sidecar/store"
	"github.com/guidepub/guidepub/sidecar/store/storetest"
	"github.com/guidepub/guidepub/site"
)

// backends are the databases every queue test runs on.
var backends = []struct {
	name string
	dsn  func(testing.TB) string
}{
	{"sqlite", storetest.SQLite},
	{"postgres", storetest.Postgres},
}

// received is one request a test receiver got.
type received struct {
	at     time.Time
	header http.Header
	body   []byte
}

// receiver is a real HTTP server that records what it gets and answers
// with handle (n is the 1-based number of the request).
type receiver struct {
	srv    *httptest.Server
	mu     sync.Mutex
	got    []received
	handle func(n int, w http.ResponseWriter, r *http.Request)
}

func newReceiver(t testing.TB, handle func(n int, w http.ResponseWriter, r *http.Request)) *receiver {
	t.Helper()
	rc := &receiver{handle: handle}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.got = append(rc.got, received{at: time.Now(), header: r.Header.Clone(), body: body})
		n := len(rc.got)
		rc.mu.Unlock()
		rc.handle(n, w, r)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) requests() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.got...)
}

// testConfig is a Config for fast tests: millisecond retry delays drawn
// from a seeded source, short polling, private targets allowed (the
// receivers listen on 127.0.0.1).
func testConfig() Config {
	return Config{
		RetryMin: 5 * time.Millisecond, RetryMax: 25 * time.Millisecond,
		MaxAttempts: 3, Timeout: 2 * time.Second, Workers: 4,
		AllowPrivateTargets: true,
		Rand:                mrand.New(mrand.NewPCG(1, 2)),
		PollInterval:        10 * time.Millisecond,
	}
}

// openStore opens dsn, closed at the end of the test.
func openStore(t testing.TB, dsn string) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), dsn, nil)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// startQueue builds and starts a queue on st, stopped at the end of the test.
func startQueue(t testing.TB, st *store.Store, cfg Config) *Queue {
	t.Helper()
	q, err := New(st, cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if err := q.Start(context.Background()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := q.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	return q
}

// event is a JSON body for message i.
func event(guideID string, i int) []byte {
	b, _ := json.Marshal(map[string]any{"type": "ready", "guideId": guideID, "n": i})
	return b
}

func message(guideID, url string, i int) Message {
	return Message{GuideID: guideID, Revision: fmt.Sprint("r", i), Webhook: site.Webhook{URL: url}, Body: event(guideID, i)}
}

func enqueueOne(t testing.TB, q *Queue, m Message) Delivery {
	t.Helper()
	ds, err := q.Enqueue(context.Background(), []Message{m})
	if err != nil {
		t.Fatalf("Enqueue: %v", err)
	}
	if len(ds) != 1 {
		t.Fatalf("Enqueue returned %d deliveries, want 1", len(ds))
	}
	return ds[0]
}

// waitFinal polls the delivery until it reaches a final state (delivered,
// dropped, exhausted) and returns it. Polling reads the database; it never
// waits for a retry delay of its own.
func waitFinal(t testing.TB, q *Queue, guideID, id string) Delivery {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		d, err := q.Delivery(context.Background(), guideID, id)
		if err != nil {
			t.Fatalf("Delivery: %v", err)
		}
		switch d.State {
		case StateDelivered, StateDropped, StateExhausted:
			return d
		}
		if time.Now().After(deadline) {
			t.Fatalf("delivery %s still %s after 30s: %+v", id, d.State, d.Attempts)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// expectedDelays replays the seeded source of testConfig: the delays the
// queue draws, in order, when one delivery is retried.
func expectedDelays(cfg Config, n int) []time.Duration {
	r := mrand.New(mrand.NewPCG(1, 2))
	span := int64(cfg.RetryMax - cfg.RetryMin)
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = cfg.RetryMin + time.Duration(r.Int64N(span+1))
	}
	return out
}

// openHelperStore opens dsn in a helper process (no testing.T there).
func openHelperStore(dsn string, logger *slog.Logger) (*store.Store, error) {
	return store.Open(context.Background(), dsn, logger)
}

package delivery

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// holdingReceiver answers nothing until released: the attempts it gets
// before are in flight when their sidecar is killed. After release it
// answers 204 at once and counts distinct webhook-ids.
type holdingReceiver struct {
	srv      *httptest.Server
	release  chan struct{}
	once     sync.Once
	mu       sync.Mutex
	inFlight int
	ids      map[string]time.Time
}

func newHoldingReceiver(t *testing.T) *holdingReceiver {
	h := &holdingReceiver{release: make(chan struct{}), ids: map[string]time.Time{}}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-h.release:
		default:
			h.mu.Lock()
			h.inFlight++
			h.mu.Unlock()
			<-h.release
			return // the sender is gone by now
		}
		h.mu.Lock()
		if _, ok := h.ids[r.Header.Get("webhook-id")]; !ok {
			h.ids[r.Header.Get("webhook-id")] = time.Now()
		}
		h.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(func() { h.open(); h.srv.Close() })
	return h
}

func (h *holdingReceiver) open() { h.once.Do(func() { close(h.release) }) }

func (h *holdingReceiver) counts() (inFlight, delivered int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.inFlight, len(h.ids)
}

// crashThenRecover enqueues total deliveries in a sidecar process with
// the given instance id, waits until four attempts hang at the receiver,
// kills the process with SIGKILL, and starts another with next (the same
// id: a restart; another: a takeover). It returns how long after that
// start every delivery had arrived.
func crashThenRecover(t *testing.T, dsn, timeout, first, next string) time.Duration {
	const total = 20
	h := newHoldingReceiver(t)
	a := startHelper(t, dsn, h.srv.URL, total, "HELPER_INSTANCE="+first, "HELPER_TIMEOUT="+timeout)
	a.expect(t, "enqueued", 60*time.Second)
	deadline := time.Now().Add(60 * time.Second)
	for n, _ := h.counts(); n < 4; n, _ = h.counts() {
		if time.Now().After(deadline) {
			t.Fatalf("only %d attempts in flight", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := a.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = a.cmd.Wait()
	h.open()
	start := time.Now()
	b := startHelper(t, dsn, h.srv.URL, 0, "HELPER_INSTANCE="+next, "HELPER_TIMEOUT="+timeout)
	b.expect(t, "enqueued", 60*time.Second)
	for _, n := h.counts(); n < total; _, n = h.counts() {
		if time.Since(start) > 3*time.Minute {
			t.Fatalf("%d of %d deliveries after 3 minutes", n, total)
		}
		time.Sleep(20 * time.Millisecond)
	}
	took := time.Since(start)
	b.terminate(t)
	return took
}

// TestCrashRecovery measures how soon the deliveries in flight at a
// kill -9 are sent again: by the same sidecar restarted (goal: 10 s, with
// a 30 s delivery timeout that River's own rescue would wait out first),
// and by another sidecar on the same PostgreSQL (goal: the delivery
// timeout plus 15 s).
func TestCrashRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills processes")
	}
	for _, b := range backends {
		t.Run("restart/"+b.name, func(t *testing.T) {
			took := crashThenRecover(t, b.dsn(t), "30s", "sidecar-a", "sidecar-a")
			t.Logf("%s: restarted sidecar re-sent every in-flight delivery %.1f s after it started (goal 10 s)", b.name, took.Seconds())
			if took > 10*time.Second {
				t.Errorf("restart recovery took %s, goal 10 s", took)
			}
		})
	}
	t.Run("takeover/postgres", func(t *testing.T) {
		took := crashThenRecover(t, backends[1].dsn(t), "5s", "sidecar-a", "sidecar-b")
		t.Logf("postgres: another sidecar took over every in-flight delivery %.1f s after it started (goal 5 s timeout + 15 s = 20 s)", took.Seconds())
		if took > 20*time.Second {
			t.Errorf("takeover took %s, goal 20 s", took)
		}
	})
}

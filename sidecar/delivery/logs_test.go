package delivery

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/guidepub/guidepub/sidecar/store"
	"github.com/guidepub/guidepub/sidecar/store/storetest"
)

// lockedBuffer is a log sink for concurrent writers.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) records(t *testing.T) []map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(l.b.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

// TestLogsAtInfo: at the default level, a sidecar's log shows what
// guidepub does, not River's routine chatter (migrations, poll-only mode,
// producer statistics), and a failed attempt is logged once, by guidepub.
func TestLogsAtInfo(t *testing.T) {
	var buf lockedBuffer
	logger := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	st, err := store.Open(context.Background(), storetest.SQLite(t), logger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	rc := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	cfg := testConfig()
	cfg.Logger = logger
	q := startQueue(t, st, cfg)
	d := enqueueOne(t, q, message("g-logs", rc.srv.URL, 1))
	if got := waitFinal(t, q, "g-logs", d.ID); got.State != StateDelivered {
		t.Fatalf("delivery %s, want delivered", got.State)
	}
	failed := 0
	for _, r := range buf.records(t) {
		if r["component"] == "river" {
			t.Errorf("River logged at %v: %v", r["level"], r["msg"])
		}
		if msg, _ := r["msg"].(string); strings.Contains(msg, "migrated") {
			t.Errorf("migration chatter at %v: %v", r["level"], msg)
		}
		if r["msg"] == "webhook attempt failed, will retry" {
			failed++
		}
	}
	if failed != 1 {
		t.Errorf("the failed attempt was logged %d times by guidepub, want once", failed)
	}

	// River's own warnings keep their level.
	buf.b.Reset()
	store.RiverLogger(logger).Warn("producer: Job appears to be stuck")
	store.RiverLogger(logger).Error("producer: Job errored", "job_id", 1)
	recs := buf.records(t)
	if len(recs) != 1 || recs[0]["level"] != "WARN" {
		t.Errorf("River warnings at info level: %v, want the stuck-job warning only", recs)
	}
}

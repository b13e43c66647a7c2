package delivery

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// helperEnv marks the test binary re-executed as a sidecar process.
const helperEnv = "GUIDEPUB_DELIVERY_HELPER"

// TestHelperProcess is not a test: run by the tests below as a separate
// process (the test binary itself), it opens the store, optionally enqueues
// HELPER_ENQUEUE deliveries to HELPER_URL, prints "enqueued", works the
// queue until SIGTERM, stops gracefully and prints "delivered N" (its own
// count).
func TestHelperProcess(t *testing.T) {
	if os.Getenv(helperEnv) != "1" {
		t.Skip("helper process for TestKillAndResume and TestProcessesShareQueue")
	}
	if err := runHelper(); err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		os.Exit(3)
	}
	os.Exit(0)
}

func runHelper() error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	level := slog.LevelWarn
	if os.Getenv("HELPER_DEBUG") != "" {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	st, err := openHelperStore(os.Getenv("HELPER_DSN"), logger)
	if err != nil {
		return err
	}
	defer st.Close()
	reg := prometheus.NewRegistry()
	timeout := time.Second
	if s := os.Getenv("HELPER_TIMEOUT"); s != "" {
		if timeout, err = time.ParseDuration(s); err != nil {
			return err
		}
	}
	q, err := New(st, Config{
		RetryMin: 5 * time.Millisecond, RetryMax: 10 * time.Millisecond, MaxAttempts: 5,
		Timeout: timeout, Workers: 4, AllowPrivateTargets: true,
		PollInterval: 10 * time.Millisecond, Logger: logger, Registerer: reg,
		InstanceID: os.Getenv("HELPER_INSTANCE"),
	})
	if err != nil {
		return err
	}
	n, _ := strconv.Atoi(os.Getenv("HELPER_ENQUEUE"))
	for i := 0; i < n; i += 50 {
		var batch []Message
		for j := i; j < min(n, i+50); j++ {
			batch = append(batch, message("g-proc", os.Getenv("HELPER_URL"), j))
		}
		if _, err := q.Enqueue(ctx, batch); err != nil {
			return err
		}
	}
	fmt.Println("enqueued")
	if err := q.Start(ctx); err != nil {
		return err
	}
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := q.Stop(sctx); err != nil {
		return err
	}
	fmt.Printf("delivered %d\n", int(testutil.ToFloat64(q.metrics.outcomes.WithLabelValues("delivered"))))
	return nil
}

// helper is a running helper process.
type helper struct {
	cmd   *exec.Cmd
	lines chan string
}

func startHelper(t *testing.T, dsn, url string, enqueue int, env ...string) *helper {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperEnv+"=1", "HELPER_DSN="+dsn, "HELPER_URL="+url, "HELPER_ENQUEUE="+strconv.Itoa(enqueue))
	cmd.Env = append(cmd.Env, env...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &helper{cmd: cmd, lines: make(chan string, 16)}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			h.lines <- sc.Text()
		}
		_, _ = io.Copy(io.Discard, out)
		close(h.lines)
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return h
}

// expect waits for a line starting with prefix and returns it.
func (h *helper) expect(t *testing.T, prefix string, within time.Duration) string {
	t.Helper()
	timeout := time.After(within)
	for {
		select {
		case l, ok := <-h.lines:
			if !ok {
				t.Fatalf("helper exited without printing %q", prefix)
			}
			if strings.HasPrefix(l, prefix) {
				return l
			}
		case <-timeout:
			t.Fatalf("helper did not print %q within %s", prefix, within)
		}
	}
}

// terminate sends SIGTERM and returns the helper's "delivered N" count.
func (h *helper) terminate(t *testing.T) int {
	t.Helper()
	if err := h.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	line := h.expect(t, "delivered ", 30*time.Second)
	if err := h.cmd.Wait(); err != nil {
		t.Fatalf("helper exit: %v", err)
	}
	n, _ := strconv.Atoi(strings.TrimPrefix(line, "delivered "))
	return n
}

// tally records, per message number, the webhook-ids it arrived with.
type tally struct {
	mu   sync.Mutex
	ids  map[int][]string
	hits int
}

func (tl *tally) add(body []byte, id string) {
	var ev struct{ N int }
	_ = json.Unmarshal(body, &ev)
	tl.mu.Lock()
	defer tl.mu.Unlock()
	tl.ids[ev.N] = append(tl.ids[ev.N], id)
	tl.hits++
}

func (tl *tally) counts() (distinct, hits int) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	return len(tl.ids), tl.hits
}

// newTallyReceiver answers 200 after delay and tallies every event.
func newTallyReceiver(t *testing.T, delay time.Duration) (*receiver, *tally) {
	tl := &tally{ids: map[int][]string{}}
	var rc *receiver
	assigned := make(chan struct{}) // rc is set: orders the handlers' reads after the write
	rc = newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
		<-assigned
		time.Sleep(delay) // a slow receiver
		rc.mu.Lock()
		got := rc.got[n-1]
		rc.mu.Unlock()
		tl.add(got.body, got.header.Get("webhook-id"))
		w.WriteHeader(200)
	})
	close(assigned)
	return rc, tl
}

// waitDistinct waits until n distinct messages arrived.
func waitDistinct(t *testing.T, tl *tally, n int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		d, _ := tl.counts()
		if d >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d messages arrived within %s", d, n, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitAllDelivered waits until every delivery of guide is recorded delivered.
func waitAllDelivered(t *testing.T, q *Queue, guide string, n int, within time.Duration) []Delivery {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		ds, err := q.Deliveries(context.Background(), guide)
		if err != nil {
			t.Fatal(err)
		}
		done := 0
		for _, d := range ds {
			if d.State == StateDelivered {
				done++
			}
		}
		if len(ds) == n && done == n {
			return ds
		}
		if time.Now().After(deadline) {
			logRiverJobs(t, q)
			t.Fatalf("%d of %d deliveries recorded delivered after %s", done, len(ds), within)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestKillAndResume kills a sidecar process with SIGKILL while it delivers
// and starts another on the same database: every delivery arrives at
// least once, and a message sent twice carries the same webhook-id.
func TestKillAndResume(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes and waits for River's rescuer")
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) { killAndResume(t, b.dsn(t)) })
	}
}

func killAndResume(t *testing.T, dsn string) {
	const total = 500
	rc, tl := newTallyReceiver(t, 15*time.Millisecond)

	first := startHelper(t, dsn, rc.srv.URL, total)
	first.expect(t, "enqueued", 60*time.Second)
	waitDistinct(t, tl, 120, 60*time.Second)
	if err := first.cmd.Process.Kill(); err != nil { // SIGKILL: no shutdown at all
		t.Fatal(err)
	}
	_ = first.cmd.Wait()
	before, _ := tl.counts()
	if before >= total {
		t.Fatalf("all %d arrived before the kill; the test proves nothing", total)
	}
	t.Logf("killed after %d of %d messages arrived", before, total)

	second := startHelper(t, dsn, rc.srv.URL, 0)
	second.expect(t, "enqueued", 60*time.Second)
	waitDistinct(t, tl, total, 120*time.Second)

	st := openStore(t, dsn)
	q, err := New(st, testConfig())
	if err != nil {
		t.Fatal(err)
	}
	ds := waitAllDelivered(t, q, "g-proc", total, 60*time.Second)
	second.terminate(t)

	byWebhookID := map[string]bool{}
	for _, d := range ds {
		byWebhookID[d.WebhookID] = true
	}
	_, hits := tl.counts()
	tl.mu.Lock()
	defer tl.mu.Unlock()
	for n := range total {
		ids := tl.ids[n]
		if len(ids) == 0 {
			t.Errorf("message %d never arrived", n)
			continue
		}
		for _, id := range ids {
			if id != ids[0] {
				t.Errorf("message %d arrived with webhook-ids %v; a duplicate must carry the same id", n, ids)
				break
			}
		}
		if !byWebhookID[ids[0]] {
			t.Errorf("message %d arrived with unknown webhook-id %s", n, ids[0])
		}
	}
	t.Logf("%d requests for %d messages (%d duplicates from the kill)", hits, total, hits-total)
}

// TestProcessesShareQueue runs two sidecar processes on one PostgreSQL
// database: every delivery is sent exactly once, and both take part.
func TestProcessesShareQueue(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	const total = 300
	dsn := backends[1].dsn(t)
	st := openStore(t, dsn) // migrates before the helpers start
	rc, tl := newTallyReceiver(t, 5*time.Millisecond)
	a := startHelper(t, dsn, rc.srv.URL, 0)
	b := startHelper(t, dsn, rc.srv.URL, 0)
	a.expect(t, "enqueued", 60*time.Second)
	b.expect(t, "enqueued", 60*time.Second)

	q, err := New(st, testConfig()) // enqueues only; never started
	if err != nil {
		t.Fatal(err)
	}
	var msgs []Message
	for i := range total {
		msgs = append(msgs, message("g-proc", rc.srv.URL, i))
	}
	if _, err := q.Enqueue(context.Background(), msgs); err != nil {
		t.Fatal(err)
	}
	waitDistinct(t, tl, total, 120*time.Second)
	waitAllDelivered(t, q, "g-proc", total, 60*time.Second)
	na, nb := a.terminate(t), b.terminate(t)
	if na+nb != total || na == 0 || nb == 0 {
		t.Errorf("processes delivered %d and %d, want both > 0 and %d in all", na, nb, total)
	}
	_, hits := tl.counts()
	if hits != total {
		t.Errorf("receiver got %d requests for %d deliveries, want each exactly once", hits, total)
	}
	tl.mu.Lock()
	defer tl.mu.Unlock()
	for n, ids := range tl.ids {
		if len(ids) != 1 {
			t.Errorf("message %d arrived %d times", n, len(ids))
		}
	}
}

// logRiverJobs logs River's unfinished jobs and its leader, to explain a
// delivery that did not finish.
func logRiverJobs(t *testing.T, q *Queue) {
	t.Helper()
	ctx := context.Background()
	rows, err := q.st.Query(ctx, `SELECT id, state, attempt, max_attempts, attempted_at, scheduled_at FROM river_job WHERE state <> 'completed' ORDER BY id`)
	if err != nil {
		t.Logf("river jobs: %v", err)
		return
	}
	for rows.Next() {
		var (
			id, attempt, maxAttempts int64
			state                    string
			attemptedAt, scheduledAt any
		)
		if err := rows.Scan(&id, &state, &attempt, &maxAttempts, &attemptedAt, &scheduledAt); err != nil {
			t.Logf("river jobs: %v", err)
			break
		}
		t.Logf("river job %d: %s, attempt %d of %d, attempted %v, scheduled %v", id, state, attempt, maxAttempts, attemptedAt, scheduledAt)
	}
	rows.Close()
	var leader string
	if err := q.st.QueryRow(ctx, `SELECT leader_id FROM river_leader`).Scan(&leader); err == nil {
		t.Logf("river leader %s; now %v", leader, time.Now().UTC())
	}
}

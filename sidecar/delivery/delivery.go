// Package delivery sends webhook events durably. Deliveries and their
// attempts live in guidepub's tables of the store; River
// (github.com/riverqueue/river) schedules the attempts on the same database,
// so an enqueued delivery survives a crash and several sidecars sharing one
// PostgreSQL database send each delivery once.
package delivery

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/riverqueue/river"

	"github.com/guidepub/guidepub/sidecar/store"
	"github.com/guidepub/guidepub/site"
	"github.com/guidepub/guidepub/site/clock"
)

// Delivery states.
const (
	StateQueued    = "queued"    // waiting for its first attempt, or re-sent by Retry
	StateRetrying  = "retrying"  // an attempt failed with 5xx, timeout or connection error; another follows
	StateDelivered = "delivered" // the receiver answered 2xx
	StateDropped   = "dropped"   // any other status, a refused address or URL: never retried
	StateExhausted = "exhausted" // MaxAttempts attempts failed
)

// ErrNotFound is returned for an unknown delivery (or one of another guide).
var ErrNotFound = store.ErrNotFound

// ErrNotRetryable is returned by Retry for a delivery that is not dropped
// or exhausted.
var ErrNotRetryable = errors.New("delivery is not dropped or exhausted")

// jobMargin is the time an attempt's job may take beyond the HTTP timeout,
// for reading the delivery and recording the attempt.
const jobMargin = 5 * time.Second

// rescueMargin is how long after its job's time limit a running attempt is
// taken to be lost: the limit has cancelled a live worker's send by then.
const rescueMargin = 5 * time.Second

func (c Config) withDefaults() (Config, error) {
	// Zero means zero: the defaults are DefaultConfig's, not zero values.
	if err := c.Validate(); err != nil {
		return c, err
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	c.Clock = clock.Or(c.Clock)
	if c.Rand == nil {
		var seed [16]byte
		if _, err := rand.Read(seed[:]); err != nil {
			return c, fmt.Errorf("seed retry delays: %w", err)
		}
		c.Rand = mrand.New(mrand.NewPCG(binary.LittleEndian.Uint64(seed[:8]), binary.LittleEndian.Uint64(seed[8:])))
	}
	if min := c.Timeout + jobMargin + rescueMargin; c.RescueAfter < min {
		c.RescueAfter = min
	}
	if c.ResponseLimit <= 0 {
		c.ResponseLimit = 64 << 10
	}
	return c, nil
}

// Queue sends webhook deliveries. It is safe for concurrent use.
type Queue struct {
	st       *store.Store
	cfg      Config
	client   *http.Client
	river    riverClient
	metrics  *metrics
	recorder *recorder

	randMu sync.Mutex

	// wakeFile is the SQLite database's wake file (nil on PostgreSQL);
	// started is set once River has started and until Stop, while wake-ups
	// may reach it; stopWatch ends the watch of the wake file.
	wakeFile  *wakeFile
	started   atomic.Bool
	stopWatch func()

	stopReclaim context.CancelFunc
	reclaimDone chan struct{}
}

// Message is one event to deliver to one webhook.
type Message struct {
	GuideID, Revision string
	Webhook           site.Webhook
	Body              []byte // the exact JSON body to POST, identical on every attempt
	Unique            bool   // true: a (GuideID, Revision, Webhook.URL) queued before is not queued again
}

// Delivery is one message to one webhook, with its attempts.
type Delivery struct {
	ID        string    `json:"id"`
	GuideID   string    `json:"guideId"`
	URL       string    `json:"url"`
	WebhookID string    `json:"webhookId"` // Standard Webhooks webhook-id, stable across attempts
	State     string    `json:"state"`     // queued, retrying, delivered, dropped, exhausted
	CreatedAt time.Time `json:"createdAt"`
	Attempts  []Attempt `json:"attempts"`
}

// Attempt is one POST of a delivery.
type Attempt struct {
	At         time.Time `json:"at"`
	StatusCode int       `json:"statusCode,omitempty"`
	Error      string    `json:"error,omitempty"`
	DurationMS int64     `json:"durationMs"`
}

// New builds a Queue on st. It does not send until Start; Enqueue works
// before Start (for a process that only enqueues). It returns an error for
// an invalid Config or when metrics cannot be registered.
func New(st *store.Store, cfg Config) (*Queue, error) {
	if st == nil {
		return nil, errors.New("delivery queue: nil store")
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("delivery queue: %w", err)
	}
	q := &Queue{st: st, cfg: cfg, recorder: newRecorder(st)}
	if st.Dialect() == store.SQLite {
		q.wakeFile = &wakeFile{path: st.SQLitePath() + wakeSuffix}
	}
	q.client = newHTTPClient(cfg)
	q.metrics, err = newMetrics(cfg.Registerer, q.depth)
	if err != nil {
		return nil, fmt.Errorf("delivery queue: metrics: %w", err)
	}
	q.river, err = newRiverClient(st, q)
	if err != nil {
		return nil, fmt.Errorf("delivery queue: %w", err)
	}
	return q, nil
}

// Start starts working queued deliveries, including those left queued,
// retrying or in flight by an earlier process. Cancelling ctx later does
// not stop the queue; Stop does. It returns River's error when the client
// cannot start.
func (q *Queue) Start(ctx context.Context) error {
	n, err := q.reclaimOwn(ctx, q.cfg.InstanceID)
	if err != nil {
		return fmt.Errorf("start delivery queue: %w", err)
	}
	if n > 0 {
		q.cfg.Logger.Info("deliveries in flight at the last stop sent again", "count", n, "instance", q.cfg.InstanceID)
	}
	q.watchWakeFile()
	if err := q.river.Start(context.WithoutCancel(ctx)); err != nil {
		if q.stopWatch != nil {
			q.stopWatch()
		}
		return fmt.Errorf("start delivery queue: %w", err)
	}
	q.started.Store(true)
	// A wake-up that came while River started was not passed on.
	q.river.Wake()
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	q.stopReclaim, q.reclaimDone = cancel, make(chan struct{})
	go func() { defer close(q.reclaimDone); q.reclaimLoop(rctx) }()
	return nil
}

// Stop stops taking new attempts and waits for in-flight sends to finish
// and be recorded. If ctx ends first, the sends still in flight are
// cancelled (recorded as failed attempts and retried later) and Stop
// returns ctx's error.
func (q *Queue) Stop(ctx context.Context) error {
	q.started.Store(false)
	if q.stopWatch != nil {
		q.stopWatch()
	}
	if q.stopReclaim != nil {
		q.stopReclaim()
		<-q.reclaimDone
	}
	err := q.river.Stop(ctx)
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		cctx, cancel := context.WithTimeout(context.Background(), jobMargin)
		defer cancel()
		_ = q.river.StopAndCancel(cctx)
	}
	return fmt.Errorf("stop delivery queue: %w", err)
}

// Enqueue persists the messages (durably, before returning) and returns
// one Delivery each (for a Unique duplicate, no Delivery is returned for
// it). It returns an error, and queues nothing, when a message lacks a
// guide id or URL, its body is not JSON, or the database fails.
func (q *Queue) Enqueue(ctx context.Context, msgs []Message) ([]Delivery, error) {
	for i, m := range msgs {
		if m.GuideID == "" || m.Webhook.URL == "" {
			return nil, fmt.Errorf("enqueue: message %d: guide id and webhook url are required", i)
		}
		if !json.Valid(m.Body) {
			return nil, fmt.Errorf("enqueue: message %d for %s: body is not JSON", i, redactURL(m.Webhook.URL))
		}
	}
	now := q.cfg.Clock.Now().UTC().Truncate(time.Microsecond)
	all := make([]Delivery, len(msgs))
	for i, m := range msgs {
		all[i] = Delivery{
			ID: "dlv_" + randomHex(12), GuideID: m.GuideID, URL: m.Webhook.URL,
			WebhookID: "msg_" + randomHex(16), State: StateQueued, CreatedAt: now, Attempts: []Attempt{},
		}
	}
	out := make([]Delivery, 0, len(msgs))
	if len(msgs) == 0 {
		return out, nil
	}
	err := q.st.InTx(ctx, func(tx store.Tx) error {
		out = out[:0]
		for start := 0; start < len(msgs); start += enqueueChunk {
			end := min(len(msgs), start+enqueueChunk)
			inserted, err := insertDeliveries(ctx, tx, msgs[start:end], all[start:end], now)
			if err != nil {
				return fmt.Errorf("insert deliveries: %w", err)
			}
			var jobs []jobArgs
			for _, d := range all[start:end] {
				if inserted[d.ID] {
					jobs = append(jobs, jobArgs{DeliveryID: d.ID})
					out = append(out, d)
				}
			}
			if err := q.river.InsertManyTx(ctx, tx, jobs); err != nil {
				return fmt.Errorf("insert jobs: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("enqueue: %w", err)
	}
	if len(out) > 0 {
		q.queued()
	}
	for _, d := range out {
		q.cfg.Logger.Info("delivery queued", "delivery", d.ID, "guide", d.GuideID, "url", redactURL(d.URL), "webhook_id", d.WebhookID)
	}
	return out, nil
}

// enqueueChunk is how many deliveries one INSERT statement writes (11
// parameters each, well under SQLite's and PostgreSQL's limits).
const enqueueChunk = 500

// insertDeliveries writes ds (built from msgs) in one statement and
// returns the ids actually inserted: a Unique message queued before (or
// earlier in the same batch) is skipped.
func insertDeliveries(ctx context.Context, tx store.Tx, msgs []Message, ds []Delivery, now time.Time) (map[string]bool, error) {
	var (
		sb   strings.Builder
		args = make([]any, 0, 11*len(msgs))
	)
	sb.WriteString(`INSERT INTO guidepub_delivery
		(id, guide_id, revision, url, secret, webhook_id, body, state, unique_key, created_at, updated_at) VALUES `)
	for i, m := range msgs {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
		var uniqueKey *string
		if m.Unique {
			k := uniqueKeyOf(m)
			uniqueKey = &k
		}
		d := ds[i]
		args = append(args, d.ID, d.GuideID, m.Revision, d.URL, m.Webhook.Secret, d.WebhookID, m.Body, d.State, uniqueKey,
			store.Micros(now), store.Micros(now))
	}
	sb.WriteString(" ON CONFLICT (unique_key) DO NOTHING RETURNING id")
	rows, err := tx.Query(ctx, sb.String(), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	inserted := make(map[string]bool, len(msgs))
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		inserted[id] = true
	}
	return inserted, rows.Err()
}

// uniqueKeyOf identifies a message for Unique: guide, revision and URL,
// separated by a byte none of them holds.
func uniqueKeyOf(m Message) string {
	return m.GuideID + "\x1f" + m.Revision + "\x1f" + m.Webhook.URL
}

// Deliveries returns guideID's deliveries, oldest first, each with its
// attempts in order. It returns a wrapped database error on failure.
func (q *Queue) Deliveries(ctx context.Context, guideID string) ([]Delivery, error) {
	var out []Delivery
	err := q.st.InTx(ctx, func(tx store.Tx) error {
		var err error
		out, err = listDeliveries(ctx, tx, `d.guide_id = ?`, guideID)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list deliveries of %s: %w", guideID, err)
	}
	return out, nil
}

// Delivery returns one delivery of guideID with its attempts, or ErrNotFound.
func (q *Queue) Delivery(ctx context.Context, guideID, id string) (Delivery, error) {
	var out []Delivery
	err := q.st.InTx(ctx, func(tx store.Tx) error {
		var err error
		out, err = listDeliveries(ctx, tx, `d.guide_id = ? AND d.id = ?`, guideID, id)
		return err
	})
	if err != nil {
		return Delivery{}, fmt.Errorf("delivery %s: %w", id, err)
	}
	if len(out) == 0 {
		return Delivery{}, fmt.Errorf("delivery %s: %w", id, ErrNotFound)
	}
	return out[0], nil
}

// listDeliveries reads the deliveries matching where (on alias d) and their
// attempts.
func listDeliveries(ctx context.Context, tx store.Tx, where string, args ...any) ([]Delivery, error) {
	rows, err := tx.Query(ctx, `SELECT d.id, d.guide_id, d.url, d.webhook_id, d.state, d.created_at
		FROM guidepub_delivery d WHERE `+where+` ORDER BY d.created_at, d.id`, args...)
	if err != nil {
		return nil, err
	}
	out := []Delivery{}
	index := map[string]int{}
	for rows.Next() {
		var (
			d       Delivery
			created int64
		)
		if err := rows.Scan(&d.ID, &d.GuideID, &d.URL, &d.WebhookID, &d.State, &created); err != nil {
			rows.Close()
			return nil, err
		}
		d.CreatedAt = store.FromMicros(created)
		d.Attempts = []Attempt{}
		index[d.ID] = len(out)
		out = append(out, d)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return out, nil
	}
	rows, err = tx.Query(ctx, `SELECT a.delivery_id, a.at, a.status_code, a.error, a.duration_ms
		FROM guidepub_attempt a JOIN guidepub_delivery d ON d.id = a.delivery_id
		WHERE `+where+` ORDER BY a.delivery_id, a.n`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id string
			at int64
			a  Attempt
		)
		if err := rows.Scan(&id, &at, &a.StatusCode, &a.Error, &a.DurationMS); err != nil {
			return nil, err
		}
		a.At = store.FromMicros(at)
		if i, ok := index[id]; ok {
			out[i].Attempts = append(out[i].Attempts, a)
		}
	}
	return out, rows.Err()
}

// Retry re-sends a dropped or exhausted delivery of guideID with the same
// webhook-id and a fresh budget of MaxAttempts attempts. It returns
// ErrNotFound for an unknown id (or another guide's) and ErrNotRetryable
// when the delivery is queued, retrying or delivered.
func (q *Queue) Retry(ctx context.Context, guideID string, id string) (Delivery, error) {
	var out []Delivery
	now := q.cfg.Clock.Now().UTC()
	err := q.st.InTx(ctx, func(tx store.Tx) error {
		var state string
		if err := tx.QueryRow(ctx, `SELECT state FROM guidepub_delivery WHERE id = ? AND guide_id = ?`, id, guideID).Scan(&state); err != nil {
			return err
		}
		var round int64
		err := tx.QueryRow(ctx, `UPDATE guidepub_delivery SET state = ?, updated_at = ?,
			round_start = (SELECT COUNT(*) FROM guidepub_attempt WHERE delivery_id = ?)
			WHERE id = ? AND state IN (?, ?) RETURNING round_start`,
			StateQueued, store.Micros(now), id, id, StateDropped, StateExhausted).Scan(&round)
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("%w (it is %s)", ErrNotRetryable, state)
		}
		if err != nil {
			return err
		}
		if err := q.river.InsertManyTx(ctx, tx, []jobArgs{{DeliveryID: id, Round: round}}); err != nil {
			return fmt.Errorf("insert job: %w", err)
		}
		out, err = listDeliveries(ctx, tx, `d.id = ?`, id)
		return err
	})
	if err != nil {
		return Delivery{}, fmt.Errorf("retry delivery %s: %w", id, err)
	}
	q.queued()
	q.cfg.Logger.Info("delivery re-sent", "delivery", id, "guide", guideID)
	return out[0], nil
}

// queued wakes the queues that send, once jobs were committed: this
// process's own, when started, and, on SQLite, every other process's
// through the wake file (see wake.go).
func (q *Queue) queued() {
	q.wakeUp()
	if q.wakeFile == nil {
		return
	}
	if err := q.wakeFile.signal(); err != nil {
		q.cfg.Logger.Debug("wake file not touched; other processes find the deliveries at their next poll", "path", q.wakeFile.path, "error", err.Error())
	}
}

// wakeUp makes this process's queue, when started, fetch due jobs now.
func (q *Queue) wakeUp() {
	if q.started.Load() {
		q.river.Wake()
	}
}

// watchWakeFile watches the wake file of a SQLite store, so that jobs other
// processes queue are fetched at once. A folder that cannot be watched is
// logged once: those jobs then wait for the next poll.
func (q *Queue) watchWakeFile() {
	if q.wakeFile == nil {
		return
	}
	stop, err := q.wakeFile.watch(q.wakeUp)
	if err != nil {
		q.cfg.Logger.Warn("cannot watch the store's wake file: deliveries queued by other processes are found by polling", "path", q.wakeFile.path, "error", err.Error())
		return
	}
	q.stopWatch = stop
}

// depth counts deliveries waiting for an attempt (queued or retrying),
// across every sidecar sharing the database.
func (q *Queue) depth(ctx context.Context) (int64, error) {
	var n int64
	err := q.st.QueryRow(ctx, `SELECT COUNT(*) FROM guidepub_delivery WHERE state IN (?, ?)`, StateQueued, StateRetrying).Scan(&n)
	return n, err
}

// retryDelay draws a uniform random delay in [RetryMin, RetryMax].
func (q *Queue) retryDelay() time.Duration {
	span := int64(q.cfg.RetryMax - q.cfg.RetryMin)
	if span <= 0 {
		return q.cfg.RetryMin
	}
	q.randMu.Lock()
	defer q.randMu.Unlock()
	return q.cfg.RetryMin + time.Duration(q.cfg.Rand.Int64N(span+1))
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand.Read never fails on supported platforms
	}
	return hex.EncodeToString(b)
}

var _ river.JobArgs = jobArgs{}

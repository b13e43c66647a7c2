package delivery

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"

	"github.com/guidepub/guidepub/sidecar/store"
)

// queueName is the River queue webhook attempts run on.
const queueName = "guidepub_webhook"

// jobArgs is a River job: one delivery to attempt. The delivery itself
// (URL, body, secret, state, attempts) lives in guidepub_delivery.
type jobArgs struct {
	DeliveryID string `json:"delivery_id"`
	// Round is the delivery's round_start when the job was queued: a job
	// of an earlier round (left over from before a manual re-send) finds
	// it changed and does nothing, so one delivery is never sent by two
	// jobs at once.
	Round int64 `json:"round,omitempty"`
}

// Kind names the job for River.
func (jobArgs) Kind() string { return "guidepub_webhook_delivery" }

// riverClient hides the transaction type River's client is generic over
// (*sql.Tx for SQLite, pgx.Tx for PostgreSQL).
type riverClient interface {
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
	StopAndCancel(ctx context.Context) error
	// InsertManyTx queues jobs in tx.
	InsertManyTx(ctx context.Context, tx store.Tx, jobs []jobArgs) error
	// Wake makes a started client fetch due jobs now rather than at its
	// next poll; a no-op where River's own notifications do it. It must
	// not be called before Start has returned.
	Wake()
}

type typedClient[TTx any] struct {
	c           *river.Client[TTx]
	maxAttempts int
	pilot       *wakePilot // nil: River's LISTEN/NOTIFY wakes the client
	// announce: every insert sends River's insert notification itself
	// (PostgreSQL; see announceInsert).
	announce bool
}

func (t typedClient[TTx]) Wake() {
	if t.pilot != nil {
		t.pilot.wake()
	}
}

func (t typedClient[TTx]) Start(ctx context.Context) error { return t.c.Start(ctx) }
func (t typedClient[TTx]) Stop(ctx context.Context) error  { return t.c.Stop(ctx) }
func (t typedClient[TTx]) StopAndCancel(ctx context.Context) error {
	return t.c.StopAndCancel(ctx)
}

func (t typedClient[TTx]) InsertManyTx(ctx context.Context, tx store.Tx, jobs []jobArgs) error {
	if len(jobs) == 0 {
		return nil
	}
	raw, ok := tx.Raw().(TTx)
	if !ok {
		return fmt.Errorf("transaction of type %T does not belong to this queue's database", tx.Raw())
	}
	opts := &river.InsertOpts{Queue: queueName, MaxAttempts: t.maxAttempts}
	params := make([]river.InsertManyParams, len(jobs))
	for i, j := range jobs {
		params[i] = river.InsertManyParams{Args: j, InsertOpts: opts}
	}
	if _, err := t.c.InsertManyTx(ctx, raw, params); err != nil {
		return err
	}
	if t.announce {
		return announceInsert(ctx, tx)
	}
	return nil
}

// insertTopic and insertPayload are the PostgreSQL notification River's
// producers listen for (channel "<schema>.river_insert", River's tables
// being in the connection's current schema) and its payload for
// guidepub's queue, as River formats them.
const (
	insertTopic   = "river_insert"
	insertPayload = `{"queue": "` + queueName + `"}`
)

// announceInsert notifies every started queue on the database that jobs
// were inserted in tx, when tx commits. River does so too, but at most once
// per fetch cooldown per process: an insert within the cooldown after an
// announced one is left to the poll, and is missed when the listener's
// fetch ran before it committed (a delivery then waited up to a poll
// interval). Notifying every time costs one statement per transaction;
// PostgreSQL folds it into River's own when both are sent in one
// transaction (same channel and payload).
func announceInsert(ctx context.Context, tx store.Tx) error {
	if _, err := tx.Exec(ctx, `SELECT pg_notify(concat(current_schema(), '.', ?::text), ?::text)`, insertTopic, insertPayload); err != nil {
		return fmt.Errorf("notify insert: %w", err)
	}
	return nil
}

// fetchCooldown is the least time between two fetches of due jobs by one
// sidecar. River's default (100ms) caps a sidecar at Workers jobs per
// 100ms; webhook attempts are short, so fetch more often.
const fetchCooldown = 5 * time.Millisecond

// riverMaxAttempts is River's own attempt limit for a job. guidepub counts
// attempts itself (in guidepub_attempt) and cancels the job when the
// budget is spent; River's limit is higher so that attempts lost with a
// killed process (rescued by River without a recorded attempt) do not make
// River discard a job behind guidepub's back.
func riverMaxAttempts(maxAttempts int) int { return maxAttempts + 10 }

func newRiverClient(st *store.Store, q *Queue) (riverClient, error) {
	workers := river.NewWorkers()
	if err := river.AddWorkerSafely(workers, &worker{q: q}); err != nil {
		return nil, err
	}
	poll := q.cfg.PollInterval
	if poll == 0 {
		poll = time.Second
		if st.Dialect() == store.SQLite {
			poll = 50 * time.Millisecond
		}
	}
	cooldown := min(poll, fetchCooldown)
	if q.cfg.fetchCooldown > 0 {
		cooldown = min(poll, q.cfg.fetchCooldown)
	}
	cfg := &river.Config{
		ID:                   q.cfg.InstanceID,
		FetchCooldown:        cooldown,
		FetchPollInterval:    poll,
		JobTimeout:           q.cfg.Timeout + jobMargin,
		Logger:               store.RiverLogger(q.cfg.Logger),
		MaxAttempts:          riverMaxAttempts(q.cfg.MaxAttempts),
		Queues:               map[string]river.QueueConfig{queueName: {MaxWorkers: q.cfg.Workers}},
		RescueStuckJobsAfter: q.cfg.RescueAfter,
		Workers:              workers,
		// Every delivery is worth keeping findable in River for a while;
		// guidepub's own tables keep the history for good.
		CompletedJobRetentionPeriod: 24 * time.Hour,
		CancelledJobRetentionPeriod: 7 * 24 * time.Hour,
		DiscardedJobRetentionPeriod: 7 * 24 * time.Hour,
	}
	switch st.Dialect() {
	case store.Postgres:
		return newTyped[pgx.Tx](riverpgxv5.New(st.PgPool()), cfg, q.cfg.MaxAttempts, nil, true)
	case store.SQLite:
		cfg.PollOnly = true
		pilot := &wakePilot{}
		driver := &wakeDriver{Driver: riversqlite.New(st.SQLDB()), pilot: pilot}
		return newTyped[*sql.Tx](driver, cfg, q.cfg.MaxAttempts, pilot, false)
	}
	return nil, fmt.Errorf("unknown store dialect %q", st.Dialect())
}

func newTyped[TTx any](driver riverdriver.Driver[TTx], cfg *river.Config, maxAttempts int, pilot *wakePilot, announce bool) (riverClient, error) {
	c, err := river.NewClient(driver, cfg)
	if err != nil {
		return nil, fmt.Errorf("river client: %w", err)
	}
	return typedClient[TTx]{c: c, maxAttempts: riverMaxAttempts(maxAttempts), pilot: pilot, announce: announce}, nil
}

// worker makes one attempt of a delivery per River job run.
type worker struct {
	river.WorkerDefaults[jobArgs]
	q *Queue
}

// NextRetry schedules the next attempt a uniform random delay in
// [RetryMin, RetryMax] after now on the queue's clock.
func (w *worker) NextRetry(*river.Job[jobArgs]) time.Time {
	return w.q.cfg.Clock.Now().Add(w.q.retryDelay())
}

// Timeout bounds a job: the HTTP timeout plus time to record the attempt.
func (w *worker) Timeout(*river.Job[jobArgs]) time.Duration {
	return w.q.cfg.Timeout + jobMargin
}

// Work makes one attempt. It returns nil when the delivery is finished
// (delivered now or earlier), river.JobCancel for a dropped or exhausted
// one, and a plain error (River retries after NextRetry) otherwise.
func (w *worker) Work(ctx context.Context, job *river.Job[jobArgs]) error {
	return w.q.attempt(ctx, job.Args)
}

package delivery

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/guidepub/guidepub/sidecar/store"
)

// record is one finished attempt to write to the database.
type record struct {
	deliveryID string
	at         time.Time
	status     int
	errText    string
	duration   time.Duration
	state      string // the delivery's state after it
	updatedAt  time.Time
	done       chan error
	taken      bool // in a batch being written (guarded by recorder.mu)
	writer     bool // its worker writes batches (guarded by recorder.mu)
}

// recorder writes attempts with group commit: while one worker's
// transaction runs, the records of other workers gather and go out together
// in the next one. A commit on SQLite with synchronous=FULL costs an fsync,
// so one transaction for many attempts is what lets the queue keep up.
type recorder struct {
	st         *store.Store
	maxWriters int // transactions at once: 1 on SQLite (one connection), more on PostgreSQL
	mu         sync.Mutex
	pending    []*record
	writing    int
	batches    atomic.Int64 // transactions written, for tests
}

// newRecorder returns a recorder suited to st's database.
func newRecorder(st *store.Store) *recorder {
	n := 1
	if st.Dialect() == store.Postgres {
		n = 4
	}
	return &recorder{st: st, maxWriters: n}
}

// maxBatch bounds one transaction.
const maxBatch = 256

// errTakeOver tells a waiting worker that it is now one of the writers.
var errTakeOver = errors.New("take over writing")

// write stores r, in a transaction with whatever other records are waiting,
// and returns that transaction's error. A worker writes batches only until
// its own record is written, then hands the writing on to a waiting worker,
// so no worker is kept writing for others for long.
func (rc *recorder) write(ctx context.Context, r *record) error {
	r.done = make(chan error, 1)
	rc.mu.Lock()
	rc.pending = append(rc.pending, r)
	if rc.writing >= rc.maxWriters {
		rc.mu.Unlock()
		if err := <-r.done; err != errTakeOver {
			return err
		}
		rc.mu.Lock() // a leaving writer handed its place to r
	} else {
		rc.writing++
	}
	r.writer = true
	for !r.taken {
		n := min(len(rc.pending), maxBatch)
		batch := rc.pending[:n:n]
		rc.pending = rc.pending[n:]
		for _, b := range batch {
			b.taken = true
		}
		rc.mu.Unlock()
		err := rc.commit(ctx, batch)
		rc.batches.Add(1)
		for _, b := range batch {
			b.done <- err
		}
		rc.mu.Lock()
	}
	handed := false
	for _, p := range rc.pending {
		if !p.writer {
			p.writer = true
			p.done <- errTakeOver
			handed = true
			break
		}
	}
	if !handed {
		rc.writing--
	}
	rc.mu.Unlock()
	return <-r.done
}

// commit writes batch in one transaction of two statements (one round
// trip on PostgreSQL) (a delivery
// appears at most once in a batch: one worker works it at a time).
func (rc *recorder) commit(ctx context.Context, batch []*record) error {
	var (
		ins, upd         strings.Builder
		insArgs, updArgs []any
	)
	ins.WriteString(`INSERT INTO guidepub_attempt (delivery_id, n, at, status_code, error, duration_ms)
		SELECT v.column1, (SELECT COALESCE(MAX(a.n), 0) + 1 FROM guidepub_attempt a WHERE a.delivery_id = v.column1),
			v.column2, v.column3, v.column4, v.column5
		FROM (VALUES `)
	upd.WriteString(`UPDATE guidepub_delivery SET state = v.column2, updated_at = v.column3 FROM (VALUES `)
	for i, r := range batch {
		if i > 0 {
			ins.WriteString(", ")
			upd.WriteString(", ")
		}
		ins.WriteString("(CAST(? AS TEXT), CAST(? AS BIGINT), CAST(? AS INTEGER), CAST(? AS TEXT), CAST(? AS BIGINT))")
		insArgs = append(insArgs, r.deliveryID, store.Micros(r.at), r.status, r.errText, r.duration.Milliseconds())
		upd.WriteString("(CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS BIGINT))")
		updArgs = append(updArgs, r.deliveryID, r.state, store.Micros(r.updatedAt))
	}
	ins.WriteString(") AS v")
	upd.WriteString(") AS v WHERE guidepub_delivery.id = v.column1")
	if err := rc.st.ExecAtomic(ctx, store.Stmt{Query: ins.String(), Args: insArgs}, store.Stmt{Query: upd.String(), Args: updArgs}); err != nil {
		return fmt.Errorf("record attempts: %w", err)
	}
	return nil
}

package publish

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofrs/flock"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/site/clock"
	"github.com/guidepub/guidepub/site/config"
)

// Defaults of LiveConfig.
const (
	DefaultRetryMin = 250 * time.Millisecond
	DefaultRetryMax = 10 * time.Second
)

// intentTries is how many times an intent is written before an export is
// refused: a write that fails once (a full disk freed a moment later)
// does not cost the export.
const intentTries = 5

// LiveConfig configures a Live publisher. Start from DefaultLiveConfig.
type LiveConfig struct {
	// Config says what to upload and where: From, FromDir, Bucket, Prefix,
	// Encoding, Jobs (uploads at once within one guide), PagesAsObjects,
	// MaxDeletes (the reconcile after a crash) and Logger are used.
	Config
	// Withdrawals, when set, returns what the exporter's records say was
	// withdrawn (see Withdrawn, RecordsWithdrawals), read when it is
	// called: the reconcile after a crash calls it, and deletes those
	// objects whatever MaxDeletes says. Nil, or an error (logged): only
	// the outbox's entries are known, and every other stale object counts
	// against MaxDeletes.
	Withdrawals func() (Withdrawn, error)
	// OutboxDir is the folder (in the private tree) that keeps what is
	// still to upload across restarts; it is created if missing.
	OutboxDir string
	// OutboxFs is the file system the outbox is written through: nil for
	// the operating system's. It must be that one or wrap it (the outbox's
	// lock is taken on OutboxDir through the operating system): tests
	// wrap it to make outbox writes fail (publishtest.FaultFs).
	OutboxFs afero.Fs
	// RetryMin and RetryMax bound the wait before a guide whose upload
	// failed is tried again: it doubles from RetryMin up to RetryMax
	// (defaults 250ms and 10s), so uploads resume within RetryMax of the
	// store coming back.
	RetryMin, RetryMax time.Duration
	// FailPermanent ends Run with the error of a permanent failure (the
	// store refuses the credentials, the bucket is missing) instead of
	// retrying it: for a one-shot command ("export --publish"), where
	// nobody would see the retries. Err returns it.
	FailPermanent bool
	// CompareFirst reads each object's attributes before uploading it
	// (a HEAD request) and skips those that already hold the file: for a
	// process whose local tree was lost and rebuilt (the exporter started
	// from the records in the private bucket, on an empty folder), which
	// then writes every file again but must upload none that is
	// unchanged.
	CompareFirst bool
	// LeaseName, when set, is added to the lease's key: publishers with
	// different names (the shards of one export) share a bucket and prefix
	// without waiting for each other.
	LeaseName  string
	Clock      clock.Clock           // nil: clock.System()
	Registerer prometheus.Registerer // nil: no metrics
}

// DefaultLiveConfig returns DefaultConfig with the default retry bounds.
func DefaultLiveConfig() LiveConfig {
	return LiveConfig{Config: DefaultConfig(), RetryMin: DefaultRetryMin, RetryMax: DefaultRetryMax}
}

// Validate returns one *config.FieldError per field that cannot work
// (joined), or nil.
func (c LiveConfig) Validate() error {
	var p config.Problems
	p.Add(c.OutboxDir != "", "OutboxDir", "is required")
	p.Add(c.RetryMin > 0, "RetryMin", "must be positive, got %v", c.RetryMin)
	p.Add(c.RetryMax >= c.RetryMin, "RetryMax", "must be at least RetryMin (%v), got %v", c.RetryMin, c.RetryMax)
	return errors.Join(c.Config.Validate(), p.Err())
}

// Live uploads, guide by guide, exactly the public files each export
// wrote or removed, without listing the bucket or walking the tree. What
// an export changed is stored in the outbox before it is uploaded, so a
// crash or a store outage resumes where it stopped; a guide re-exported
// while its upload is pending uploads only its latest files (each upload
// reads the file as it is then). Objects go up in the order that keeps
// readers consistent: media, then documents and pages, then statuses;
// removals last, statuses first among them.
//
// Nothing an export changed is lost (docs/hosting.md, "Live
// publishing"): an intent is written in the outbox before the export
// touches the tree, and removed only once what the export changed is
// saved in the outbox or in the bucket. Changes whose entry cannot be
// written are uploaded from memory all the same, and the write is tried
// again with each try of their upload; a process that dies with an intent
// left makes the next one reconcile the bucket with the tree, deleting
// the objects guidepub wrote (Owned) that the tree no longer has: those
// the records or the outbox name (LiveConfig.Withdrawals) all, the others
// at most MaxDeletes.
type Live struct {
	cfg   LiveConfig
	d     *describer
	clock clock.Clock
	log   *slog.Logger
	m     *liveMetrics
	wake  chan struct{}
	lease *lease
	box   outbox
	lock  *flock.Flock
	// proc and intents name intent files: unique to this process, and
	// one for each export, so that two exports at once keep one each.
	proc    string
	intents atomic.Int64

	mu      sync.Mutex
	pending map[string]*pendingGuide // by entry name
	recover bool                     // an export was cut short: reconcile first
	stale   []string                 // the intent files that say so
	unsaved int                      // pending guides whose entry could not be written
	held    []string                 // intents of finished exports, removed once unsaved is 0
	started bool                     // Run holds the lease (or gave up)
	failed  error                    // what ended Run (FailPermanent)
	idle    *sync.Cond
	busy    bool
}

// pendingGuide is one guide's files to upload, each with the generation
// that added it last.
type pendingGuide struct {
	name    string
	since   time.Time
	files   map[string]int // public file → generation
	gen     int
	tries   int
	next    time.Time // not before
	lastErr string    // the kind of the last failure, logged once per guide until it succeeds
	unsaved bool      // the outbox lacks some of files
}

// NewLive waits for the outbox's lock (held by another process that
// publishes from the same private tree: it says so and waits until that
// one stops, or ctx ends), reads the outbox an earlier process left and
// returns a Live ready to Run. It returns an error when the configuration
// is invalid, ctx ends first, or the outbox cannot be read. Close
// releases the lock.
func NewLive(ctx context.Context, cfg LiveConfig) (*Live, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("live publish: %w", err)
	}
	// Validate accepted the name: this is the value with its codec, ""
	// giving Identity.
	cfg.Encoding, _ = ParseEncoding(cfg.Encoding.Name)
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.OutboxFs == nil {
		cfg.OutboxFs = afero.NewOsFs()
	}
	if err := cfg.OutboxFs.MkdirAll(cfg.OutboxDir, 0o700); err != nil {
		return nil, fmt.Errorf("live publish: %w", err)
	}
	lock, err := lockOutbox(ctx, cfg.OutboxDir, cfg.RetryMax, cfg.Logger)
	if err != nil {
		return nil, fmt.Errorf("live publish: %w", err)
	}
	box := outbox{cfg.OutboxFs, cfg.OutboxDir}
	entries, intents, err := box.read()
	if err != nil {
		lock.Unlock()
		return nil, err
	}
	var proc [6]byte
	rand.Read(proc[:])
	l := &Live{cfg: cfg, d: newDescriber(cfg.Config), clock: clock.Or(cfg.Clock), log: cfg.Logger, box: box, lock: lock,
		proc: hex.EncodeToString(proc[:]), wake: make(chan struct{}, 1), pending: map[string]*pendingGuide{},
		recover: len(intents) > 0, stale: intents}
	l.idle = sync.NewCond(&l.mu)
	l.lease = newLease(cfg.Bucket, l.d.keys.prefix, cfg.LeaseName, cfg.OutboxDir, l.clock.Now)
	for _, e := range entries {
		g := &pendingGuide{name: e.Name, since: e.Since, files: map[string]int{}}
		for _, f := range e.Files {
			g.files[f] = 0
		}
		l.pending[e.Name] = g
	}
	l.m = newLiveMetrics(cfg.Registerer, l)
	if len(entries) > 0 || len(intents) > 0 {
		l.log.Info("uploads left by the last run", "guides", len(entries), "interrupted export", len(intents) > 0)
	}
	return l, nil
}

// Close releases the outbox's lock, so that another process may publish
// from it. It does not stop Run.
func (l *Live) Close() error { return l.lock.Unlock() }

// Err returns the permanent failure that ended Run (with FailPermanent),
// or nil.
func (l *Live) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.failed
}

func (l *Live) signal() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// Run uploads pending guides, oldest first, until ctx ends; a guide whose
// upload fails is tried again after a backoff, the others go on. It first
// takes the bucket's lease (which also proves the credentials and the
// bucket) and, after an interrupted export, reconciles the whole tree. It
// returns nil when ctx ends, or, with FailPermanent, the permanent
// failure that stopped it (also given by Err).
func (l *Live) Run(ctx context.Context) error {
	defer l.lease.release(context.WithoutCancel(ctx))
	beat := make(chan struct{})
	defer close(beat)
	go l.heartbeat(ctx, beat)
	if err := l.start(ctx); err != nil {
		return l.stop(ctx, err)
	}
	for {
		l.removeHeld()
		g, wait := l.nextDue()
		if g == nil {
			if !l.sleep(ctx, wait) {
				return nil
			}
			continue
		}
		if err := l.uploadGuide(ctx, g); err != nil {
			return l.stop(ctx, err)
		}
		if ctx.Err() != nil {
			return nil
		}
	}
}

// start takes the lease, then reconciles after an interrupted export,
// each tried until it succeeds (see until).
func (l *Live) start(ctx context.Context) error {
	if err := l.until(ctx, func() error { return l.lease.claim(ctx) }); err != nil {
		return err
	}
	l.mu.Lock()
	l.started = true
	recover := l.recover
	l.mu.Unlock()
	if !recover {
		return nil
	}
	return l.until(ctx, func() error { return l.reconcile(ctx) })
}

// until calls fn until it succeeds, waiting RetryMin doubling up to
// RetryMax between tries and logging each new error once with its kind.
// It returns ctx's error when ctx ends, or, with FailPermanent, a
// permanent error.
func (l *Live) until(ctx context.Context, fn func() error) error {
	wait, lastKind := l.cfg.RetryMin, ""
	for {
		err := fn()
		if err == nil {
			if lastKind != "" {
				l.log.Info("uploads resumed")
			}
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		kind := errorKind(err)
		l.m.failures.WithLabelValues(kind).Inc()
		if kind == "permanent" && l.cfg.FailPermanent {
			return err
		}
		if kind != lastKind { // not every try: the messages differ by request ids
			lastKind = kind
			l.log.Error("upload failed; retrying until it succeeds", "kind", kind, "in", wait.String(),
				"error", err.Error(), "what to do", advice(kind))
		}
		if !l.pause(ctx, wait) {
			return ctx.Err()
		}
		wait = min(2*wait, l.cfg.RetryMax)
	}
}

// stop ends Run with err: nil when ctx ended, else err kept for Err (and
// Idle's waiters woken).
func (l *Live) stop(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	err = fmt.Errorf("%w (%s)", err, adviceFor(err))
	l.log.Error("publishing stopped", "kind", errorKind(err), "error", err.Error())
	l.mu.Lock()
	l.failed, l.started = err, true
	l.idle.Broadcast()
	l.mu.Unlock()
	return err
}

// pause waits d or until ctx ends (false).
func (l *Live) pause(ctx context.Context, d time.Duration) bool {
	ch := make(chan struct{})
	cancel := l.clock.AfterFunc(d, func() { close(ch) })
	defer cancel()
	select {
	case <-ctx.Done():
		return false
	case <-ch:
		return true
	}
}

// sleep waits for d (0: until woken), a Record, or ctx; false when ctx ended.
func (l *Live) sleep(ctx context.Context, d time.Duration) bool {
	var timer <-chan struct{}
	if d > 0 {
		ch := make(chan struct{})
		stop := l.clock.AfterFunc(d, func() { close(ch) })
		defer stop()
		timer = ch
	}
	select {
	case <-ctx.Done():
		return false
	case <-l.wake:
	case <-timer:
	}
	return true
}

// nextDue returns the oldest guide due now, or nil and how long until one
// is (0: none pending). It signals idle waiters when nothing is pending.
func (l *Live) nextDue() (*pendingGuide, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.clock.Now()
	var due, soonest *pendingGuide
	for _, g := range l.pending {
		if !g.next.After(now) {
			if due == nil || g.since.Before(due.since) {
				due = g
			}
		} else if soonest == nil || g.next.Before(soonest.next) {
			soonest = g
		}
	}
	l.busy = due != nil
	if due == nil && len(l.pending) == 0 {
		l.idle.Broadcast()
	}
	if due != nil {
		return due, 0
	}
	if soonest != nil {
		return nil, soonest.next.Sub(now)
	}
	return nil, 0
}

// Idle waits until nothing is pending (the lease taken and any reconcile
// done), Run stopped on a permanent failure (see Err), or ctx ends, and
// returns the number of guides still pending.
func (l *Live) Idle(ctx context.Context) int {
	stop := context.AfterFunc(ctx, func() {
		l.mu.Lock()
		l.idle.Broadcast()
		l.mu.Unlock()
	})
	defer stop()
	l.mu.Lock()
	defer l.mu.Unlock()
	for (len(l.pending) > 0 || l.busy || l.recover || !l.started) && l.failed == nil && ctx.Err() == nil {
		l.idle.Wait()
	}
	return len(l.pending)
}

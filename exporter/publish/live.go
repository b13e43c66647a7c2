package publish

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofrs/flock"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/afero"
	"gocloud.dev/gcerrors"

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

// Exporting records, before an export of folder (or of every folder, for
// ""), that it is under way, trying a few times when the write fails.
// The returned done is called once what the export changed was given to
// Record; it removes the record as soon as every pending change is saved
// in the outbox (or in the bucket). A record left by a crash makes the
// next Run reconcile the whole tree once before anything else, since what
// that export changed may never have been saved. It returns an error when
// the record cannot be written (the export must not run then) or ctx
// ends.
func (l *Live) Exporting(ctx context.Context, folder string) (done func(), err error) {
	name := fmt.Sprintf("%s%s-%d-%s", intentPrefix, l.proc, l.intents.Add(1), outboxFile("folder:"+folder))
	wait := l.cfg.RetryMin
	for try := 1; ; try++ {
		err = l.box.write(name, []byte(folder))
		if err == nil {
			break
		}
		if try == intentTries {
			return nil, err
		}
		l.log.Warn("intent not written; trying again", "in", wait.String(), "error", err.Error())
		if !l.pause(ctx, wait) {
			return nil, ctx.Err()
		}
		wait = min(2*wait, l.cfg.RetryMax)
	}
	return func() { l.release(name) }, nil
}

// release removes the intent name, or keeps it until every pending guide
// is saved.
func (l *Live) release(name string) {
	l.mu.Lock()
	l.held = append(l.held, name)
	l.mu.Unlock()
	l.removeHeld()
}

// removeHeld removes the intents of finished exports once no pending
// change lacks its outbox entry. One that cannot be removed is tried
// again later.
func (l *Live) removeHeld() {
	l.mu.Lock()
	names := l.held
	if l.unsaved > 0 || len(names) == 0 {
		l.mu.Unlock()
		return
	}
	l.held = nil
	l.mu.Unlock()
	for i, name := range names {
		if err := l.box.remove(name); err != nil {
			l.log.Error("intent not removed; trying again later (a restart meanwhile reconciles the whole tree)", "error", err.Error())
			l.mu.Lock()
			l.held = append(l.held, names[i:]...)
			l.mu.Unlock()
			return
		}
	}
}

// GuideChanges is what one guide's export changed in the public tree, as
// Record reads it: plain data (exporter.GuideResult is one), so that this
// package needs nothing of the exporter's.
type GuideChanges interface {
	// Guide returns the guide's id ("" when none is known) and its
	// bundle folder.
	Guide() (id, folder string)
	// ChangedFiles returns the public files the export wrote or removed,
	// relative to the tree, slash-separated.
	ChangedFiles() []string
}

// Record queues the upload of the public files res wrote or removed and
// saves them in the outbox. They are queued whatever happens; the error
// says that the outbox could not be written: the files are then uploaded
// from memory, the write is tried again with each try of their upload,
// and the export's intent stays until it succeeds (or they are uploaded).
func (l *Live) Record(res GuideChanges) error {
	name, folder := res.Guide()
	if name == "" {
		name = "folder:" + folder
	}
	var added []string
	for _, f := range res.ChangedFiles() {
		if rel, ok := uploaded(f); ok {
			added = append(added, rel)
		}
	}
	if len(added) == 0 {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	g := l.pending[name]
	if g == nil {
		g = &pendingGuide{name: name, since: l.clock.Now(), files: map[string]int{}}
		l.pending[name] = g
	}
	g.gen++
	for _, rel := range added {
		if _, had := g.files[rel]; !had {
			l.m.pendingObjects.Inc()
		}
		g.files[rel] = g.gen
	}
	g.tries, g.next = 0, time.Time{}
	err := l.save(g)
	l.signal()
	return err
}

// save writes g's entry in the outbox, and keeps whether it could; l.mu
// is held.
func (l *Live) save(g *pendingGuide) error {
	err := l.box.writeEntry(&outboxEntry{Name: g.name, Since: g.since, Files: sortedKeys(g.files)})
	l.setUnsaved(g, err != nil)
	return err
}

// setUnsaved marks g as lacking its outbox entry or not; l.mu is held.
func (l *Live) setUnsaved(g *pendingGuide, unsaved bool) {
	switch {
	case unsaved && !g.unsaved:
		l.unsaved++
	case !unsaved && g.unsaved:
		l.unsaved--
	}
	g.unsaved = unsaved
}

func maps2slice(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
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

// heartbeat keeps the lease fresh while it is held, until stop closes.
func (l *Live) heartbeat(ctx context.Context, stop chan struct{}) {
	for {
		ch := make(chan struct{})
		cancel := l.clock.AfterFunc(leaseBeat, func() { close(ch) })
		select {
		case <-stop:
			cancel()
			return
		case <-ctx.Done():
			cancel()
			return
		case <-ch:
		}
		l.lease.mu.Lock()
		held := !l.lease.held.IsZero()
		l.lease.mu.Unlock()
		if held {
			if err := l.lease.claim(ctx); err != nil && ctx.Err() == nil {
				l.log.Warn("lease not renewed", "error", err.Error())
			}
		}
	}
}

// reconcile makes the bucket equal the tree after an export whose changes
// may never have been saved: it uploads every file that differs from its
// object and deletes the objects guidepub wrote (Owned) that the tree no
// longer has; another writer's objects stay. The deletions guidepub
// recorded (withdrawals) go whatever their number; more of the others
// than MaxDeletes is taken for a tree that is not the one published (say
// a wrong --out): then those stay, it says so, and leaves the intents for
// the next start (with FailPermanent it fails).
func (l *Live) reconcile(ctx context.Context) error {
	cfg := l.cfg.Config
	cfg.DryRun, cfg.Plan, cfg.Progress, cfg.KeepUnrecorded, cfg.DeleteForeign = false, nil, nil, false, false
	l.log.Warn("an export was cut short before its changes were saved: reconciling the bucket with the tree")
	cfg.Withdrawn = l.withdrawals()
	rep, err := Publish(ctx, cfg)
	keepIntents := false
	if errors.Is(err, ErrTooManyDeletes) && !l.cfg.FailPermanent {
		l.log.Error("reconcile: deleting only what the records or the outbox name; the other stale objects stay until the next start", "error", err.Error(),
			"what to do", "check that the public tree is the one this bucket publishes, then run \"guidepub publish\" with --max-deletes")
		cfg.KeepUnrecorded, keepIntents = true, true
		rep, err = Publish(ctx, cfg)
	}
	if err != nil {
		return err
	}
	l.m.uploads.Add(float64(rep.Uploaded))
	l.m.deletes.Add(float64(rep.Deleted))
	l.log.Info("reconciled", "uploaded", rep.Uploaded, "unchanged", rep.Unchanged, "deleted", rep.Deleted,
		"withdrawn by the records", rep.Withdrawn, "kept (no record names them)", rep.Kept, "kept (not written by guidepub)", rep.Foreign)
	// Only the intents left by the last process: this one's own exports
	// may be under way.
	for _, name := range l.stale {
		if keepIntents {
			break
		}
		if err := l.box.remove(name); err != nil {
			return err
		}
	}
	l.mu.Lock()
	l.recover = false
	l.mu.Unlock()
	return nil
}

// withdrawals returns the Withdrawn of a reconcile: the files the pending
// outbox entries name (their upload deletes those the tree lacks, however
// many) and those the exporter's records, read now, say were withdrawn
// (LiveConfig.Withdrawals). A record that cannot be read withdraws
// nothing (its files count against the limit, and a warning says so): it
// must not stop the reconcile, which every upload waits for.
func (l *Live) withdrawals() Withdrawn {
	l.mu.Lock()
	pending := map[string]bool{}
	for _, g := range l.pending {
		for f := range g.files {
			pending[f] = true
		}
	}
	l.mu.Unlock()
	var recorded Withdrawn
	if l.cfg.Withdrawals != nil {
		var err error
		if recorded, err = l.cfg.Withdrawals(); err != nil {
			l.log.Warn("reconcile: the export's records cannot be read; every stale object the outbox does not name counts against the limit of deletions",
				"error", err.Error())
			recorded = nil
		}
	}
	var warned sync.Once
	return func(rel string) (bool, error) {
		if pending[rel] {
			return true, nil
		}
		if recorded == nil {
			return false, nil
		}
		ok, err := recorded(rel)
		if err != nil {
			warned.Do(func() {
				l.log.Warn("reconcile: a record of the export cannot be read; the stale objects of its guide count against the limit of deletions",
					"file", rel, "error", err.Error())
			})
		}
		return ok && err == nil, nil
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

// uploadGuide uploads g's files as they are now, phase by phase, then
// removes what was uploaded from the outbox. A re-export between phases
// starts the guide over, so its media precede its new documents. An entry
// not saved yet is tried first. It returns the error that must stop Run (a
// permanent one, with FailPermanent), else nil.
func (l *Live) uploadGuide(ctx context.Context, g *pendingGuide) error {
	l.mu.Lock()
	if g.unsaved {
		l.save(g) // still failing: the intent stays, the upload goes on
	}
	gen := g.gen
	files := sortedKeys(g.files)
	l.mu.Unlock()

	err := l.uploadFiles(ctx, files, func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return g.gen != gen
	})
	if errors.Is(err, errReexported) {
		return nil // picked up again at once, with the new files
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return l.failedGuide(g, err)
	}
	if g.lastErr != "" {
		l.log.Info("uploads resumed", "guide", g.name, "after tries", g.tries)
	}
	done := 0
	for _, f := range files {
		if g.files[f] <= gen {
			delete(g.files, f)
			done++
		}
	}
	l.m.pendingObjects.Sub(float64(done))
	if len(g.files) == 0 {
		if err := l.box.remove(outboxFile(g.name)); err != nil {
			l.log.Error("outbox entry not removed: its files will be uploaded again at the next start", "guide", g.name, "error", err.Error())
		}
		l.setUnsaved(g, false) // in the bucket: nothing left to save
		delete(l.pending, g.name)
		return nil
	}
	if err := l.save(g); err != nil {
		l.log.Error("outbox entry not rewritten; trying again with the next upload", "guide", g.name, "error", err.Error())
	}
	g.tries, g.next, g.lastErr = 0, time.Time{}, ""
	return nil
}

// failedGuide schedules g's next try after err, logging err once per
// guide; with FailPermanent a permanent err is returned instead. l.mu is
// held.
func (l *Live) failedGuide(g *pendingGuide, err error) error {
	kind := errorKind(err)
	l.m.failures.WithLabelValues(kind).Inc()
	if kind == "permanent" && l.cfg.FailPermanent {
		return err
	}
	g.tries++
	wait := min(l.cfg.RetryMin<<min(g.tries-1, 30), l.cfg.RetryMax)
	g.next = l.clock.Now().Add(wait)
	if kind != g.lastErr { // not every try: the messages differ by request ids
		g.lastErr = kind
		l.log.Error("upload failed; retrying until it succeeds", "guide", g.name, "kind", kind, "in", wait.String(),
			"error", err.Error(), "what to do", advice(kind))
	}
	return nil
}

func sortedKeys(m map[string]int) []string {
	s := maps2slice(m)
	slices.Sort(s)
	return s
}

// errReexported stops a guide's upload whose guide was exported again.
var errReexported = errors.New("re-exported during its upload")

// uploadFiles uploads the public files rel as they are now (a missing one
// deletes its object), media first, statuses last, removals after every
// upload with statuses first. It stops with errReexported when changed
// reports a re-export between phases.
func (l *Live) uploadFiles(ctx context.Context, files []string, changed func() bool) error {
	if err := l.lease.claim(ctx); err != nil {
		return err
	}
	var phases [numPhases][]*local
	var gone [numPhases][]string
	for _, rel := range files {
		o, err := l.d.describe(rel, nil)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			gone[phaseOf(rel)] = append(gone[phaseOf(rel)], l.d.keys.key(rel))
		case err != nil:
			return err
		default:
			phases[o.phase] = append(phases[o.phase], o)
		}
	}
	for phase := range phases {
		if phase > 0 && len(phases[phase]) > 0 && changed() {
			return errReexported
		}
		err := parallel(ctx, l.cfg.Jobs, len(phases[phase]), func(ctx context.Context, i int) error {
			if _, err := upload(ctx, l.cfg.Config, phases[phase][i]); err != nil {
				return err
			}
			l.m.uploads.Inc()
			if l.cfg.OnUpload != nil {
				l.cfg.OnUpload(phases[phase][i].key)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	for phase := numPhases - 1; phase >= 0; phase-- {
		err := parallel(ctx, l.cfg.Jobs, len(gone[phase]), func(ctx context.Context, i int) error {
			key := gone[phase][i]
			// The rule of every deletion: only what guidepub wrote.
			switch reason, err := l.d.staleReason(ctx, key); {
			case err != nil:
				return err
			case reason == "foreign":
				l.log.Warn("object kept: guidepub did not write it", "key", key)
				return nil
			case reason == "":
				return nil // gone already
			}
			if err := l.cfg.Bucket.Delete(ctx, key); err != nil && !isNotFound(err) {
				return fmt.Errorf("delete %s: %w", key, err)
			}
			l.m.deletes.Inc()
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// errorKind sorts an upload error: "permanent" when the store refuses
// (credentials, permissions, a bad request or key) and retrying alone
// cannot help, "transient" otherwise (unreachable, overloaded, a file
// rewritten during its upload).
func errorKind(err error) string {
	if errors.Is(err, errOtherPublisher) {
		return "conflict"
	}
	if errors.Is(err, ErrTooManyDeletes) {
		return "permanent"
	}
	switch gcerrors.Code(err) {
	case gcerrors.PermissionDenied, gcerrors.InvalidArgument, gcerrors.FailedPrecondition, gcerrors.NotFound, gcerrors.Unimplemented:
		return "permanent"
	}
	// The drivers leave many refusals Unknown; their HTTP status tells.
	var withStatus interface{ HTTPStatusCode() int }
	if errors.As(err, &withStatus) {
		switch code := withStatus.HTTPStatusCode(); {
		case code == 408 || code == 429 || code >= 500:
			return "transient"
		case code >= 400:
			return "permanent"
		}
	}
	return "transient"
}

// adviceFor says what an operator can do about err.
func adviceFor(err error) string {
	if errors.Is(err, ErrTooManyDeletes) {
		return "check that the public tree is the one this bucket publishes, then run \"guidepub publish\" with --max-deletes"
	}
	return advice(errorKind(err))
}

// advice says what an operator can do about an error of kind.
func advice(kind string) string {
	switch kind {
	case "permanent":
		return "check the credentials (expired? AWS_ACCESS_KEY_ID…), that they may write to the bucket, that the bucket exists, and the bucket URL; a watcher's uploads resume on their own once it is fixed"
	case "conflict":
		return "two watchers publish to this bucket and prefix and would overwrite each other's guides: stop one, or give each its own bucket or prefix; this one's uploads wait in its outbox and go once the other stops"
	}
	return "nothing if the store is briefly away; check that it is up and reachable; uploads resume on their own"
}

// liveMetrics are Live's Prometheus metrics.
type liveMetrics struct {
	pendingObjects prometheus.Gauge
	uploads        prometheus.Counter
	deletes        prometheus.Counter
	failures       *prometheus.CounterVec
}

func newLiveMetrics(reg prometheus.Registerer, l *Live) *liveMetrics {
	m := &liveMetrics{
		pendingObjects: prometheus.NewGauge(prometheus.GaugeOpts{Name: "guidepub_publish_pending_objects",
			Help: "Public files exported but not yet in the bucket."}),
		uploads: prometheus.NewCounter(prometheus.CounterOpts{Name: "guidepub_publish_uploads_total",
			Help: "Objects uploaded by live publishing."}),
		deletes: prometheus.NewCounter(prometheus.CounterOpts{Name: "guidepub_publish_deletes_total",
			Help: "Objects deleted by live publishing."}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "guidepub_publish_failures_total",
			Help: "Failed guide uploads by kind (transient: retried; permanent: the store refuses, also retried)."}, []string{"kind"}),
	}
	m.failures.WithLabelValues("transient")
	m.failures.WithLabelValues("permanent")
	n := 0
	for _, g := range l.pending {
		n += len(g.files)
	}
	m.pendingObjects.Set(float64(n))
	if reg != nil {
		oldest := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "guidepub_publish_oldest_pending_seconds",
			Help: "Age of the oldest change not yet in the bucket (publish lag); 0 when none."}, l.oldestPendingSeconds)
		reg.MustRegister(m.pendingObjects, m.uploads, m.deletes, m.failures, oldest)
	}
	return m
}

// oldestPendingSeconds is the age of the oldest pending guide.
func (l *Live) oldestPendingSeconds() float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	var oldest time.Time
	for _, g := range l.pending {
		if oldest.IsZero() || g.since.Before(oldest) {
			oldest = g.since
		}
	}
	if oldest.IsZero() {
		return 0
	}
	return l.clock.Now().Sub(oldest).Seconds()
}

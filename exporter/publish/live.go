package publish

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"gocloud.dev/gcerrors"

	"github.com/guidepub/guidepub/exporter"
	"github.com/guidepub/guidepub/site/clock"
	"github.com/guidepub/guidepub/site/config"
)

// Defaults of LiveConfig.
const (
	DefaultRetryMin = 250 * time.Millisecond
	DefaultRetryMax = 10 * time.Second
)

// LiveConfig configures a Live publisher. Start from DefaultLiveConfig.
type LiveConfig struct {
	// Config says what to upload and where: From, FromDir, Bucket, Prefix,
	// Encoding, Jobs (uploads at once within one guide), PagesAsObjects
	// and Logger are used; the reconcile settings are not.
	Config
	// OutboxDir is the folder (in the private tree) that keeps what is
	// still to upload across restarts; it is created if missing.
	OutboxDir string
	// RetryMin and RetryMax bound the wait before a guide whose upload
	// failed is tried again: it doubles from RetryMin up to RetryMax
	// (defaults 250ms and 10s), so uploads resume within RetryMax of the
	// store coming back.
	RetryMin, RetryMax time.Duration
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
type Live struct {
	cfg   LiveConfig
	d     *describer
	clock clock.Clock
	log   *slog.Logger
	m     *liveMetrics
	wake  chan struct{}
	lease *lease
	// intents numbers intent files, so that two exports of one folder at
	// once keep one each.
	intents atomic.Int64

	mu      sync.Mutex
	pending map[string]*pendingGuide // by entry name
	recover bool                     // an export was cut short: reconcile first
	stale   []string                 // the intent files that say so
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
	lastErr string    // logged once per guide until it succeeds
}

// NewLive reads the outbox that an earlier process left and returns a
// Live ready to Run. It returns an error when the configuration is
// invalid or the outbox cannot be read.
func NewLive(cfg LiveConfig) (*Live, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("live publish: %w", err)
	}
	// Validate accepted the name: this is the value with its codec, ""
	// giving Identity.
	cfg.Encoding, _ = ParseEncoding(cfg.Encoding.Name)
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(cfg.OutboxDir, 0o700); err != nil {
		return nil, fmt.Errorf("live publish: %w", err)
	}
	entries, intents, err := readOutbox(cfg.OutboxDir)
	if err != nil {
		return nil, err
	}
	l := &Live{cfg: cfg, d: newDescriber(cfg.Config), clock: clock.Or(cfg.Clock), log: cfg.Logger,
		wake: make(chan struct{}, 1), pending: map[string]*pendingGuide{}, recover: len(intents) > 0, stale: intents}
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

// Exporting records, before an export of folder (or of every folder, for
// ""), that it is under way. The returned done removes the record; a
// record left by a crash makes the next Run reconcile the whole tree once
// before anything else, since what that export wrote was never recorded.
// It returns an error when the record cannot be written.
func (l *Live) Exporting(folder string) (done func(), err error) {
	name := intentPrefix + fmt.Sprint(l.intents.Add(1)) + "-" + outboxFile("folder:"+folder)
	if err := writeSynced(l.cfg.OutboxDir, name, []byte(folder)); err != nil {
		return nil, err
	}
	return func() {
		if err := removeSynced(l.cfg.OutboxDir, name); err != nil {
			l.log.Error("intent not removed: the next start reconciles the whole tree", "error", err.Error())
		}
	}, nil
}

// Record stores the public files res wrote or removed in the outbox and
// queues their upload. It returns when they are durably recorded, or an
// error when the outbox cannot be written (nothing is queued then).
func (l *Live) Record(res exporter.GuideResult) error {
	if len(res.Changes) == 0 {
		return nil
	}
	name := res.GuideID
	if name == "" {
		name = "folder:" + res.Folder
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	g := l.pending[name]
	fresh := g == nil
	if fresh {
		g = &pendingGuide{name: name, since: l.clock.Now(), files: map[string]int{}}
	}
	gen := g.gen + 1
	added := map[string]bool{}
	for _, f := range res.Changes {
		if rel, ok := uploaded(f.Path); ok && !added[rel] {
			added[rel] = true
		}
	}
	if len(added) == 0 {
		return nil
	}
	all := maps2slice(g.files)
	for rel := range added {
		if _, had := g.files[rel]; !had {
			all = append(all, rel)
		}
	}
	slices.Sort(all)
	if err := writeEntry(l.cfg.OutboxDir, &outboxEntry{Name: name, Since: g.since, Files: all}); err != nil {
		return err
	}
	l.m.pendingObjects.Add(float64(len(all) - len(g.files)))
	g.gen = gen
	for rel := range added {
		g.files[rel] = gen
	}
	g.tries, g.next = 0, time.Time{}
	if fresh {
		l.pending[name] = g
	}
	l.signal()
	return nil
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
// upload fails is tried again after a backoff, the others go on. After an
// interrupted export it first reconciles the whole tree (uploads only,
// no deletion). It returns nil when ctx ends.
func (l *Live) Run(ctx context.Context) error {
	defer l.lease.release(context.WithoutCancel(ctx))
	beat := make(chan struct{})
	defer close(beat)
	go l.heartbeat(ctx, beat)
	l.mu.Lock()
	recover := l.recover
	l.mu.Unlock()
	for recover {
		if err := l.reconcile(ctx); err == nil {
			break
		} else if ctx.Err() != nil {
			return nil
		} else {
			l.log.Error("reconcile after an interrupted export failed; trying again", "in", l.cfg.RetryMax.String(), "error", err.Error())
		}
		if !l.sleep(ctx, l.cfg.RetryMax) {
			return nil
		}
	}
	for {
		g, wait := l.nextDue()
		if g == nil {
			if !l.sleep(ctx, wait) {
				return nil
			}
			continue
		}
		l.uploadGuide(ctx, g)
		if ctx.Err() != nil {
			return nil
		}
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

// reconcile uploads every file that differs from its object, after an
// export whose changes were never recorded.
func (l *Live) reconcile(ctx context.Context) error {
	cfg := l.cfg.Config
	cfg.KeepStale = true // another writer's objects are not ours to delete
	cfg.DryRun, cfg.Plan, cfg.Progress = false, nil, nil
	l.log.Warn("an export was cut short before its changes were recorded: reconciling the bucket with the tree (no deletion)")
	rep, err := Publish(ctx, cfg)
	if err != nil {
		return err
	}
	l.m.uploads.Add(float64(rep.Uploaded))
	l.log.Info("reconciled", "uploaded", rep.Uploaded, "unchanged", rep.Unchanged)
	// Only the intents left by the last process: this one's own exports
	// may be under way.
	for _, name := range l.stale {
		if err := removeSynced(l.cfg.OutboxDir, name); err != nil {
			return err
		}
	}
	l.mu.Lock()
	l.recover = false
	l.mu.Unlock()
	return nil
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

// Idle waits until nothing is pending or ctx ends, and returns the number
// of guides still pending.
func (l *Live) Idle(ctx context.Context) int {
	stop := context.AfterFunc(ctx, func() {
		l.mu.Lock()
		l.idle.Broadcast()
		l.mu.Unlock()
	})
	defer stop()
	l.mu.Lock()
	defer l.mu.Unlock()
	for (len(l.pending) > 0 || l.busy || l.recover) && ctx.Err() == nil {
		l.idle.Wait()
	}
	return len(l.pending)
}

// uploadGuide uploads g's files as they are now, phase by phase, then
// removes what was uploaded from the outbox. A re-export between phases
// starts the guide over, so its media precede its new documents.
func (l *Live) uploadGuide(ctx context.Context, g *pendingGuide) {
	l.mu.Lock()
	gen := g.gen
	files := maps2slice(g.files)
	l.mu.Unlock()
	slices.Sort(files)

	err := l.uploadFiles(ctx, files, func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return g.gen != gen
	})
	if errors.Is(err, errReexported) {
		return // picked up again at once, with the new files
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		if ctx.Err() != nil {
			return
		}
		g.tries++
		wait := min(l.cfg.RetryMin<<min(g.tries-1, 30), l.cfg.RetryMax)
		g.next = l.clock.Now().Add(wait)
		kind := errorKind(err)
		l.m.failures.WithLabelValues(kind).Inc()
		if msg := err.Error(); msg != g.lastErr {
			g.lastErr = msg
			l.log.Error("upload failed; retrying until it succeeds", "guide", g.name, "kind", kind, "in", wait.String(),
				"error", msg, "what to do", advice(kind))
		}
		return
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
		if err := removeSynced(l.cfg.OutboxDir, outboxFile(g.name)); err != nil {
			l.log.Error("outbox entry not removed: its files will be uploaded again at the next start", "guide", g.name, "error", err.Error())
		}
		delete(l.pending, g.name)
		return
	}
	if err := writeEntry(l.cfg.OutboxDir, &outboxEntry{Name: g.name, Since: g.since, Files: sortedKeys(g.files)}); err != nil {
		l.log.Error("outbox entry not rewritten: some files will be uploaded again at the next start", "guide", g.name, "error", err.Error())
	}
	g.tries, g.next, g.lastErr = 0, time.Time{}, ""
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
			if err := l.cfg.Bucket.Delete(ctx, gone[phase][i]); err != nil && !isNotFound(err) {
				return fmt.Errorf("delete %s: %w", gone[phase][i], err)
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

// advice says what an operator can do about an error of kind.
func advice(kind string) string {
	switch kind {
	case "permanent":
		return "check the credentials (expired? AWS_ACCESS_KEY_ID…), that they may write to the bucket, and the bucket URL; uploads resume on their own once it is fixed"
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

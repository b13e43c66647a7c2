// Package pipeline runs what follows each guide's export: queueing the
// guide's ready event for its webhooks, and publishing the public files
// the export wrote or removed to a bucket (see package publish's Live).
// The commands "export", "watch" and "dev" wire it; the rules live here.
//
// Ready events: a ready guide whose content changed gets its event queued
// once per revision (the queue itself keeps one delivery per revision and
// webhook; a guide published again unchanged is logged as "unchanged
// revision, not sent again"). When queueing fails (the store is away), the guide is asked
// to be exported again after EnqueueRetry, and its event is queued then
// even if nothing changed.
//
// Live publishing: before an export, an intent is recorded; after it, the
// changed files go to the live publisher (and its outbox) and the intent
// is released: removed once those changes are saved in the outbox or in
// the bucket. A crash before then leaves the intent, and the next start
// reconciles the bucket with the tree before anything else, deleting the
// objects guidepub wrote that the tree no longer has.
//
// The private tree in a bucket: after each export that wrote or deleted
// a file, the guide is due to be mirrored (package privatebucket); it is
// mirrored once its public files are in the bucket (with live publishing,
// once Live.Settled says so), so that a record in the private bucket never
// names a public file that is not there yet.
//
// Purging the edge: in the same way, a purge is owed before each export
// and the public ids it changed are queued after it (package edge), sent
// once they are in place (with live publishing, once uploaded); an export
// that only recompressed files (quick siblings finished) purges nothing.
package pipeline

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/guidepub/guidepub/exporter"
	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/exporter/edge"
	"github.com/guidepub/guidepub/exporter/privatebucket"
	"github.com/guidepub/guidepub/exporter/publish"
	"github.com/guidepub/guidepub/site/clock"
)

// DefaultEnqueueRetry is how soon a guide whose ready event could not be
// queued is tried again.
const DefaultEnqueueRetry = 10 * time.Second

// DefaultFailedRetry is how soon a guide whose export failed on an I/O
// error (a full disk, a file that cannot be written) is exported again.
const DefaultFailedRetry = 10 * time.Second

// EventQueue queues ready events: the sidecar's store, opened without the
// rest of the sidecar.
type EventQueue interface {
	// Enqueue queues the ready event of guideID's current revision for
	// each of its webhooks, once per revision, and says how many
	// deliveries it queued and how many webhooks it skipped because that
	// revision was queued for them before. It returns an error when the
	// store cannot be written.
	Enqueue(ctx context.Context, guideID string) (Enqueued, error)
}

// Enqueued is what one EventQueue.Enqueue did.
type Enqueued struct {
	Queued     int // deliveries queued
	SentBefore int // webhooks skipped: this revision was queued for them before
}

// Config configures a Pipeline. Every field may be left zero.
type Config struct {
	Events EventQueue    // nil: no ready events are queued
	Live   *publish.Live // nil: nothing is published live
	Edge   *edge.Edge    // nil: no CDN is purged
	// Private mirrors the private tree to a bucket; nil: it stays a
	// folder.
	Private *privatebucket.Mirror
	// EnqueueRetry: see DefaultEnqueueRetry (used when zero).
	EnqueueRetry time.Duration
	// FailedRetry: see DefaultFailedRetry (used when zero).
	FailedRetry time.Duration
	Clock       clock.Clock  // nil: clock.System()
	Logger      *slog.Logger // nil: discard
}

// Pipeline runs what follows each export. It is safe for concurrent use.
type Pipeline struct {
	cfg Config
	clk clock.Clock
	log *slog.Logger

	mu     sync.Mutex
	unsent map[string]bool // guide ids whose ready event could not be queued yet
	queued int             // deliveries queued so far
}

// New returns a Pipeline for cfg.
func New(cfg Config) *Pipeline {
	if cfg.EnqueueRetry <= 0 {
		cfg.EnqueueRetry = DefaultEnqueueRetry
	}
	if cfg.FailedRetry <= 0 {
		cfg.FailedRetry = DefaultFailedRetry
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Pipeline{cfg: cfg, clk: clock.Or(cfg.Clock), log: cfg.Logger, unsent: map[string]bool{}}
}

// Run publishes live and purges the edge until ctx ends; without either
// it only waits. It returns nil when ctx ends, or the permanent failure
// that stopped live publishing (publish.LiveConfig.FailPermanent).
func (p *Pipeline) Run(ctx context.Context) error {
	if p.cfg.Private != nil {
		done := make(chan struct{})
		go func() { p.mirror(ctx); close(done) }()
		defer func() { <-done }()
	}
	if p.cfg.Edge != nil {
		done := make(chan struct{})
		go func() { p.cfg.Edge.Run(ctx); close(done) }()
		defer func() { <-done }()
	}
	if p.cfg.Live == nil {
		<-ctx.Done()
		return nil
	}
	return p.cfg.Live.Run(ctx)
}

// Idle waits until every recorded change is in the bucket and every purge
// it owes is sent, or ctx ends, and returns how many guides (and purges)
// are still pending.
func (p *Pipeline) Idle(ctx context.Context) int {
	n := 0
	if p.cfg.Live != nil {
		n += p.cfg.Live.Idle(ctx)
	}
	if p.cfg.Edge != nil {
		n += p.cfg.Edge.Idle(ctx)
	}
	if p.cfg.Private != nil {
		n += p.mirrorIdle(ctx)
	}
	return n
}

// ExportGuide runs export (one guide's export or removal) between an
// intent and the recording of what it changed, then queues the guide's
// ready event. It returns export's result and error, and when to export
// the guide again (zero: no need): FailedRetry later when export failed
// on an I/O error (an export that changes what the views show has then
// taken back what it did not reach, and the guide shows less until it
// succeeds), never for a rejected bundle (its next change tries again).
func (p *Pipeline) ExportGuide(ctx context.Context, export func() (*exporter.GuideResult, error)) (*exporter.GuideResult, time.Time, error) {
	run, err := p.exporting(ctx)
	if err != nil {
		return nil, time.Time{}, err
	}
	res, err := export()
	if res == nil {
		run.done(err == nil)
		return res, time.Time{}, err
	}
	// A failed or rejected export lists what it wrote before it stopped
	// (a file it did not finish was never renamed into place): recorded,
	// its intent can go.
	run.record(*res)
	run.done(true)
	if err != nil {
		var rejected *bundle.Error
		if ctx.Err() != nil || errors.As(err, &rejected) {
			return res, time.Time{}, err
		}
		return res, p.clk.Now().Add(p.cfg.FailedRetry), err
	}
	return res, p.afterExport(ctx, *res), nil
}

// ExportAll runs export (a whole export, the catch-up of a watcher) the
// same way, giving export the function to call with each guide's result
// as it is done (Exporter.ExportAllEach: what it changed goes to the live
// publisher guide by guide, not kept to the end), and returns its report
// and, by index in rep.Guides, when to export each guide again. After a catch-up every ready guide's event is
// queued, changed or not: the queue keeps one delivery per revision and
// webhook, so this queues only an event lost when a process stopped
// between an export and its queueing.
func (p *Pipeline) ExportAll(ctx context.Context, export func(each func(exporter.GuideResult)) (*exporter.Report, error)) (*exporter.Report, []time.Time, error) {
	run, err := p.exporting(ctx)
	if err != nil {
		return nil, nil, err
	}
	rep, err := export(run.record)
	// An interrupted export may have written files of a guide it did not
	// finish: its intent stays, and the next start reconciles.
	run.done(rep != nil && err == nil)
	if err != nil {
		return rep, nil, err
	}
	next := make([]time.Time, len(rep.Guides))
	for i, g := range rep.Guides {
		if g.Err != nil {
			continue
		}
		if g.Ready && p.cfg.Events != nil {
			p.mu.Lock()
			p.unsent[g.GuideID] = true
			p.mu.Unlock()
		}
		next[i] = p.afterExport(ctx, g)
	}
	return rep, next, nil
}

// Queued returns how many deliveries were queued so far.
func (p *Pipeline) Queued() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.queued
}

// Failed returns the guides whose ready event is not queued yet, sorted.
func (p *Pipeline) Failed() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for id := range p.unsent {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// exportRun is one export between its intents and their release.
type exportRun struct {
	p       *Pipeline
	release func()
	owed    *edge.Owed
}

// exporting records the intents before an export: live publishing's, and
// the purge it owes the edge.
func (p *Pipeline) exporting(ctx context.Context) (*exportRun, error) {
	run := &exportRun{p: p, release: func() {}}
	if p.cfg.Live != nil {
		release, err := p.cfg.Live.Exporting(ctx, "")
		if err != nil {
			return nil, errors.Join(errors.New("live publishing: cannot record the export's intent; check that the private tree is writable"), err)
		}
		run.release = release
	}
	if p.cfg.Edge != nil {
		owed, err := p.cfg.Edge.Owe()
		if err != nil {
			run.release()
			return nil, errors.Join(errors.New("purging the edge: cannot record the purge the export owes; check that the private tree is writable"), err)
		}
		run.owed = owed
	}
	return run, nil
}

// done releases the intents when the export finished and what it changed
// was given to record (the live publisher removes its intent once that is
// saved); an export that did not finish keeps them, so that the next start
// reconciles the bucket and purges everything.
func (r *exportRun) done(finished bool) {
	if !finished {
		return
	}
	r.release()
	if r.owed != nil {
		if err := r.owed.Release(); err != nil {
			r.p.log.Error("purge record not released: the next start purges everything at the edge", "error", err.Error())
		}
	}
}

// record queues res's changed public files for upload, and the purge of
// the public ids they are under. The files are queued even when the outbox
// cannot be written: they are uploaded from memory, the write is tried
// again, and the export's intent stays until then. A purge that cannot be
// saved keeps the export's purge record, so that the next start purges
// everything.
func (r *exportRun) record(res exporter.GuideResult) {
	if r.p.cfg.Private != nil && res.GuideID != "" && (res.Changed || res.Written+res.Deleted > 0) {
		r.p.cfg.Private.MarkDirty(res.GuideID)
	}
	if r.p.cfg.Live != nil {
		if err := r.p.cfg.Live.Record(res); err != nil {
			r.p.log.Error("changes not saved in the outbox: uploading them from memory and trying the write again; a crash before then makes the next start reconcile the bucket with the tree",
				"folder", res.Folder, "guide", res.GuideID, "error", err.Error())
		}
	}
	if r.owed == nil || res.Recompressed {
		return
	}
	if ids := res.ChangedIDs(); len(ids) > 0 {
		if err := r.owed.Record(edge.Change{GuideID: res.GuideID, Folder: res.Folder, IDs: ids}); err != nil {
			r.p.log.Error("purge not saved: the next start purges everything at the edge", "folder", res.Folder, "guide", res.GuideID, "error", err.Error())
		}
	}
}

// afterExport queues the ready event of a ready guide whose content
// changed, not only its compressed bytes (or whose event could not be
// queued before, or after a
// catch-up), and returns when to export the guide again: when a view
// expires, or after EnqueueRetry when queueing failed.
func (p *Pipeline) afterExport(ctx context.Context, res exporter.GuideResult) time.Time {
	next := res.NextChange
	if p.cfg.Events == nil || !res.Ready || res.GuideID == "" || res.Err != nil {
		return next
	}
	p.mu.Lock()
	retry := p.unsent[res.GuideID]
	p.mu.Unlock()
	if (!res.Changed || res.Recompressed) && !retry {
		return next // nothing new to tell: quick siblings finished at most
	}
	n, err := p.cfg.Events.Enqueue(ctx, res.GuideID)
	if err == nil && res.Changed && n.SentBefore > 0 {
		// Published again as it was (deleted and uploaded again, say):
		// one delivery per revision, so the webhooks hear nothing.
		p.log.Info("ready event not sent: unchanged revision, not sent again", "guide", res.GuideID,
			"revision", shortRevision(res.Revision), "webhooks", n.SentBefore)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.queued += n.Queued
	if err != nil {
		if ctx.Err() == nil {
			p.log.Error("ready event not queued; trying again", "guide", res.GuideID, "in", p.cfg.EnqueueRetry.String(), "error", err.Error())
		}
		p.unsent[res.GuideID] = true
		if soon := p.clk.Now().Add(p.cfg.EnqueueRetry); next.IsZero() || soon.Before(next) {
			next = soon
		}
		return next
	}
	delete(p.unsent, res.GuideID)
	return next
}

// shortRevision returns the first 12 characters of a revision, for logs.
func shortRevision(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}

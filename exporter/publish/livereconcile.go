package publish

import (
	"context"
	"errors"
	"sync"
)

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

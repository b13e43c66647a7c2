package publish

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"gocloud.dev/gcerrors"
)

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
			if l.cfg.CompareFirst {
				switch same, err := l.d.sameAsRemote(ctx, phases[phase][i], nil); {
				case err != nil:
					return err
				case same:
					return nil
				}
			}
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

package publish

import (
	"context"
	"fmt"
	"slices"
	"time"
)

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

func sortedKeys(m map[string]int) []string {
	s := maps2slice(m)
	slices.Sort(s)
	return s
}

package exporter

import (
	"context"
	"sync"
	"time"
)

// giveWay is who waits for whom among the exports of one Exporter, so
// that an upload is published as soon as it can be:
//
//   - The export of the whole tree (ExportAll, a watcher's catch-up at its
//     start) gives way to single-folder exports (a watcher's uploads,
//     ExportBundle): the catch-up's workers wait, before each folder they
//     take, while one is in progress, so that an upload made as the
//     watcher starts is not slowed down by a catch-up that can take
//     seconds on a large tree (docs/watching.md). The folders the catch-up
//     has taken are finished first (an upload of one of them waits for its
//     lock), and ExportAll itself starts once the uploads in progress are
//     done, so that it finds them up to date.
//   - The export that finishes an upload's quick siblings (write.Finishing)
//     steps aside for the export of a changed bundle: it does not start
//     while one is in progress, or while another Finishing export runs,
//     and stops where it is (before its next group of files, compression
//     or file) when one starts; it is done again finishRetry later, twice
//     as late each time in a row it gives way, maxFinishRetry at most (so
//     that a long run of uploads does not load every guide waiting to be
//     finished once a second). So a new upload has the CPU, the disk and
//     a worker of the watcher to itself (docs/output.md, "Quick
//     siblings"), and the quick siblings of uploads that follow one
//     another are finished once they pause.
type giveWay struct {
	uploads inProgress // single-folder exports
	changed inProgress // single-folder exports of a changed bundle (write.Quick)
	finish  sync.Mutex // held by the Finishing export in progress

	mu      sync.Mutex
	stepped map[string]int // by guide id: Finishing exports in a row that gave way
}

// How soon a Finishing export that gave way is done again: finishRetry
// the first time, twice as late each time in a row, maxFinishRetry at
// most.
const (
	finishRetry    = time.Second
	maxFinishRetry = 32 * time.Second
)

// steppedAside records that guide's Finishing export gave way and returns
// how soon to do it again.
func (g *giveWay) steppedAside(guide string) time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stepped == nil {
		g.stepped = map[string]int{}
	}
	n := g.stepped[guide]
	g.stepped[guide] = n + 1
	return min(finishRetry<<min(n, 16), maxFinishRetry)
}

// done forgets guide's Finishing exports that gave way: it was exported to
// the end, or unpublished.
func (g *giveWay) done(guide string) {
	g.mu.Lock()
	delete(g.stepped, guide)
	g.mu.Unlock()
}

// finishing reports whether a Finishing export may start now, and returns
// what records its end.
func (g *giveWay) finishing() (release func(), ok bool) {
	if g.changed.running() > 0 || !g.finish.TryLock() {
		return nil, false
	}
	return g.finish.Unlock, true
}

// yield tells a Finishing export in progress to stop where it is: the
// export of a changed bundle has started (write.Config.GiveWay).
func (g *giveWay) yield() bool { return g.changed.running() > 0 }

// inProgress counts work in progress that other work waits for.
type inProgress struct {
	mu   sync.Mutex
	n    int
	idle chan struct{} // made when n leaves zero, closed when it is back
}

// start records work starting and returns what records its end.
func (p *inProgress) start() (done func()) {
	p.mu.Lock()
	if p.n == 0 {
		p.idle = make(chan struct{})
	}
	p.n++
	p.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			p.mu.Lock()
			p.n--
			if p.n == 0 {
				close(p.idle)
			}
			p.mu.Unlock()
		})
	}
}

// wait returns nil once no work is in progress, or ctx's error if ctx
// ends first.
func (p *inProgress) wait(ctx context.Context) error {
	p.mu.Lock()
	idle, n := p.idle, p.n
	p.mu.Unlock()
	if n == 0 {
		return nil
	}
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// running returns how much work is in progress.
func (p *inProgress) running() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n
}

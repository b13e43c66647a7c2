package exporter

import (
	"context"
	"sync"
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
//     gives way to the export of a changed bundle: before each group of
//     files, each compression and each file it writes, it waits while one
//     is in progress, so that a new upload has the CPU and the disk to
//     itself; for write.MaxGiveWay in all at the most (docs/output.md,
//     "Quick siblings").
type giveWay struct {
	uploads inProgress // single-folder exports
	changed inProgress // single-folder exports of a changed bundle (write.Quick)
}

// inProgress counts work in progress that other work waits for.
type inProgress struct {
	mu   sync.Mutex
	n    int
	idle chan struct{} // closed while n is zero; nil: not made yet (zero)
}

// start records work starting and returns what records its end.
func (p *inProgress) start() (done func()) {
	p.mu.Lock()
	if p.n == 0 || p.idle == nil {
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
	idle := p.idle
	if p.n == 0 {
		idle = nil
	}
	p.mu.Unlock()
	if idle == nil {
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

package exporter

import "sync"

// giveWay lets single-folder exports (a watcher's uploads, ExportBundle)
// go before the export of the whole tree (ExportAll, a watcher's catch-up
// at its start): the catch-up's workers wait, before each folder they take,
// while an upload is being exported, so that an upload made as the
// watcher starts is not slowed down by a catch-up that can take seconds
// on a large tree (docs/watching.md). The folders the catch-up has taken
// are finished first (an upload of one of them waits for its lock), and
// ExportAll itself starts once the uploads in progress are done, so that
// it finds them up to date.
type giveWay struct {
	mu      sync.Mutex
	clear   *sync.Cond // signalled when uploads drops to zero
	uploads int        // single-folder exports in progress
}

// upload records a single-folder export starting and returns what records
// its end.
func (g *giveWay) upload() (done func()) {
	g.mu.Lock()
	g.uploads++
	g.mu.Unlock()
	return func() {
		g.mu.Lock()
		g.uploads--
		if g.uploads == 0 && g.clear != nil {
			g.clear.Broadcast()
		}
		g.mu.Unlock()
	}
}

// wait returns once no single-folder export is in progress.
func (g *giveWay) wait() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.clear == nil {
		g.clear = sync.NewCond(&g.mu)
	}
	for g.uploads > 0 {
		g.clear.Wait()
	}
}

package pipeline

import (
	"context"
	"time"
)

// mirrorEvery is how often the guides due to be mirrored to the private
// bucket are looked at: a guide's private files reach the bucket at most
// this long after its public ones.
const mirrorEvery = 200 * time.Millisecond

// mirror mirrors the due guides whose public files are in the bucket,
// every mirrorEvery, until ctx ends. A guide that fails stays due and is
// tried again at the next round; its error is logged once a minute.
func (p *Pipeline) mirror(ctx context.Context) {
	t := time.NewTicker(mirrorEvery)
	defer t.Stop()
	logged := map[string]time.Time{}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for _, id := range p.cfg.Private.Dirty() {
			if p.cfg.Live != nil && !p.cfg.Live.Settled(id, "") {
				continue
			}
			err := p.cfg.Private.Sync(ctx, id)
			if err == nil || ctx.Err() != nil {
				delete(logged, id)
				continue
			}
			if last, ok := logged[id]; !ok || time.Since(last) > time.Minute {
				logged[id] = time.Now()
				p.log.Error("private tree not mirrored to its bucket yet; trying again", "guide", id, "error", err.Error())
			}
		}
	}
}

// mirrorIdle waits until no guide is due to be mirrored, or ctx ends, and
// returns how many still are.
func (p *Pipeline) mirrorIdle(ctx context.Context) int {
	t := time.NewTicker(mirrorEvery / 4)
	defer t.Stop()
	for {
		n := len(p.cfg.Private.Dirty())
		if n == 0 {
			return 0
		}
		select {
		case <-ctx.Done():
			return n
		case <-t.C:
		}
	}
}

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
// tried again at the next round; failures are logged at most once a
// minute, with how many guides wait (a bucket away for long fails them
// all, and the log says so once, not once per guide).
func (p *Pipeline) mirror(ctx context.Context) {
	t := time.NewTicker(mirrorEvery)
	defer t.Stop()
	var logged time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		failed, waiting := 0, 0
		var first error
		for _, id := range p.cfg.Private.Dirty() {
			if p.cfg.Live != nil && !p.cfg.Live.Settled(id, "") {
				waiting++
				continue
			}
			if err := p.cfg.Private.Sync(ctx, id); err != nil && ctx.Err() == nil {
				failed++
				if first == nil {
					first = err
				}
			}
		}
		if first != nil && time.Since(logged) > time.Minute {
			logged = time.Now()
			p.log.Error("private tree not mirrored to its bucket yet; trying again", "guides", failed,
				"waitingForPublicFiles", waiting, "error", first.Error())
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

package oauth

import (
	"sync"
	"time"
)

// throttle counts failed sign-ins per key (an owner, an address) in fixed
// one-minute windows. An attempt is counted when it is admitted, before
// its password is checked, so attempts sent together cannot all pass a
// check made before any of them failed: once a key has max attempts in
// its window, failed or still being checked, further attempts are
// refused without checking the password until the window ends
// (docs/oauth.md#throttling). A successful sign-in gives its attempt
// back. It is per process.
type throttle struct {
	max    int
	window time.Duration
	now    func() time.Time

	mu   sync.Mutex
	seen map[string]*failures
}

type failures struct {
	start time.Time
	n     int
}

// maxThrottleKeys bounds the memory a flood of distinct keys can take;
// beyond it, windows that have ended are dropped first.
const maxThrottleKeys = 100000

func newThrottle(max int, window time.Duration, now func() time.Time) *throttle {
	return &throttle{max: max, window: window, now: now, seen: make(map[string]*failures)}
}

// attempt is an admitted sign-in attempt, counted against each of its keys
// until it is given back.
type attempt struct {
	t      *throttle
	counts []*failures
}

// admit counts one attempt against every key, atomically, unless one of
// them has used up its window: then nothing is counted and admit returns
// nil and the end of that window.
func (t *throttle) admit(keys ...string) (*attempt, time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	if len(t.seen) > maxThrottleKeys {
		for k, f := range t.seen {
			if now.Sub(f.start) >= t.window {
				delete(t.seen, k)
			}
		}
	}
	a := &attempt{t: t}
	for _, k := range keys {
		f := t.seen[k]
		if f == nil || now.Sub(f.start) >= t.window {
			f = &failures{start: now}
		} else if f.n >= t.max {
			return nil, f.start.Add(t.window)
		}
		a.counts = append(a.counts, f)
	}
	for i, k := range keys {
		t.seen[k] = a.counts[i]
		a.counts[i].n++
	}
	return a, time.Time{}
}

// giveBack uncounts an attempt that did not fail: the password was right,
// or it was never checked. A window that has been replaced since is left
// alone.
func (a *attempt) giveBack() {
	a.t.mu.Lock()
	defer a.t.mu.Unlock()
	for _, f := range a.counts {
		if f.n > 0 {
			f.n--
		}
	}
	a.counts = nil
}

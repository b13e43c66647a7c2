package oauth

import (
	"sync"
	"time"
)

// throttle counts failed sign-ins per key (an owner, an address) in fixed
// one-minute windows. Once a key has max failures in its window, further
// attempts are refused without checking the password until the window ends
// (docs/oauth.md#throttling). It is per process.
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

// blocked reports whether any of keys has used up its failures, and until
// when.
func (t *throttle) blocked(keys ...string) (bool, time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	for _, k := range keys {
		f := t.seen[k]
		if f != nil && now.Sub(f.start) < t.window && f.n >= t.max {
			return true, f.start.Add(t.window)
		}
	}
	return false, time.Time{}
}

// fail records one failed attempt for each key.
func (t *throttle) fail(keys ...string) {
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
	for _, k := range keys {
		f := t.seen[k]
		if f == nil || now.Sub(f.start) >= t.window {
			f = &failures{start: now}
			t.seen[k] = f
		}
		f.n++
	}
}

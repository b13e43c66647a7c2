package oauth

import (
	"sync"
	"time"
)

// signInPolicy holds the numbers of the sign-in throttle
// (docs/oauth.md#throttling); Config sets them.
type signInPolicy struct {
	// PairFailures is how many failed attempts one client may make for one
	// owner in a window; ClientFailures how many one client may make for
	// all owners together. Past either, the client's attempts are refused
	// unchecked until that window ends.
	PairFailures, ClientFailures int
	// OwnerFailures is how many failed attempts an owner may get in a
	// window, from every client together, before each further attempt for
	// that owner waits Delay, doubled for each failure beyond, at most
	// MaxDelay. The owner's count never refuses anyone: a stranger can
	// slow an owner down, never lock her out.
	OwnerFailures   int
	Delay, MaxDelay time.Duration
	// Window is how long a count lasts from its first failure.
	Window time.Duration
}

// throttle counts failed sign-ins per (owner, client), per client and per
// owner in fixed windows. An attempt is counted when it is admitted,
// before its password is checked, so attempts sent together cannot all
// pass a check made before any of them failed; a refused attempt is not
// counted, so refusals do not prolong a window. A successful sign-in gives
// its attempt back. It is per process.
type throttle struct {
	policy signInPolicy
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

func newThrottle(p signInPolicy, now func() time.Time) *throttle {
	return &throttle{policy: p, now: now, seen: make(map[string]*failures)}
}

// attempt is an admitted sign-in attempt, counted against each of its keys
// until it is given back.
type attempt struct {
	t      *throttle
	counts []*failures
}

// admit counts one attempt of client for owner, atomically, unless the
// client has used up its window for this owner or for all owners: then
// nothing is counted, and admit returns nil and the end of that window.
// An admitted attempt comes with the delay the owner's failures call for
// before its password is checked.
func (t *throttle) admit(owner, client string) (a *attempt, delay time.Duration, until time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	t.prune(now)
	// A client address holds no NUL, so the pair key is unambiguous.
	pair := t.current("p\x00"+client+"\x00"+owner, now)
	cli := t.current("c\x00"+client, now)
	own := t.current("o\x00"+owner, now)
	p := t.policy
	switch {
	case pair.n >= p.PairFailures && cli.n >= p.ClientFailures:
		return nil, 0, later(pair.start, cli.start).Add(p.Window)
	case pair.n >= p.PairFailures:
		return nil, 0, pair.start.Add(p.Window)
	case cli.n >= p.ClientFailures:
		return nil, 0, cli.start.Add(p.Window)
	}
	delay = p.delay(own.n)
	for _, f := range []*failures{pair, cli, own} {
		f.n++
	}
	return &attempt{t: t, counts: []*failures{pair, cli, own}}, delay, time.Time{}
}

// delay is the wait before checking an attempt for an owner who has
// failures failed (or still running) attempts in the window.
func (p signInPolicy) delay(failures int) time.Duration {
	extra := failures - p.OwnerFailures
	if extra < 0 {
		return 0
	}
	d := p.Delay
	for ; extra > 0 && d < p.MaxDelay; extra-- {
		d *= 2
	}
	return min(d, p.MaxDelay)
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// current returns the count of key in its current window, a new one when
// there is none or the last has ended. The caller holds t.mu.
func (t *throttle) current(key string, now time.Time) *failures {
	f := t.seen[key]
	if f == nil || now.Sub(f.start) >= t.policy.Window {
		f = &failures{start: now}
		t.seen[key] = f
	}
	return f
}

// prune drops ended windows once there are more than maxThrottleKeys.
// The caller holds t.mu.
func (t *throttle) prune(now time.Time) {
	if len(t.seen) <= maxThrottleKeys {
		return
	}
	for k, f := range t.seen {
		if now.Sub(f.start) >= t.policy.Window {
			delete(t.seen, k)
		}
	}
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

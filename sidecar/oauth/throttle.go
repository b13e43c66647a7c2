package oauth

import (
	"crypto/sha256"
	"encoding/binary"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"
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
// counted, and keeps nothing, so refusals do not prolong a window nor take
// memory. A successful sign-in gives its attempt back. It is per process.
//
// Its memory is bounded whatever clients send: a count is kept under a
// fixed-size digest of its key, in a table of at most maxThrottleKeys
// counts (hashicorp/golang-lru's simplelru), ordered by the start of their
// window: a count moves to the newest end only when its window starts, so
// the oldest is always the first to end, and ended windows are dropped
// from that end on each attempt, each in constant time. When the table is
// full, a new window drops the oldest count, the one that would end first.
type throttle struct {
	policy signInPolicy
	now    func() time.Time

	mu      sync.Mutex
	windows *simplelru.LRU[throttleKey, *failures]
}

type failures struct {
	start time.Time
	n     int
}

// throttleKey is the SHA-256 digest of what a count is kept for.
type throttleKey [sha256.Size]byte

// Kinds of count, the first byte of what a key digests.
const (
	kindPair   = 'p'
	kindClient = 'c'
	kindOwner  = 'o'
)

// keyOf digests kind and the length-prefixed parts, so that no two
// different lists of parts share a key.
func keyOf(kind byte, parts ...string) throttleKey {
	h := sha256.New()
	h.Write([]byte{kind})
	for _, p := range parts {
		h.Write(binary.BigEndian.AppendUint64(nil, uint64(len(p))))
		h.Write([]byte(p))
	}
	var k throttleKey
	h.Sum(k[:0])
	return k
}

// maxThrottleKeys bounds the counts kept: about 200 bytes each, 20 MB
// when full.
const maxThrottleKeys = 100000

func newThrottle(p signInPolicy, now func() time.Time) *throttle {
	return newThrottleSized(p, now, maxThrottleKeys)
}

// newThrottleSized is newThrottle keeping at most size counts (at least 3,
// the counts of one attempt).
func newThrottleSized(p signInPolicy, now func() time.Time, size int) *throttle {
	w, err := simplelru.NewLRU[throttleKey, *failures](max(size, 3), nil)
	if err != nil {
		panic(err) // only for a size below 1
	}
	return &throttle{policy: p, now: now, windows: w}
}

// attempt is an admitted sign-in attempt, counted against each of its keys
// until it is given back.
type attempt struct {
	t      *throttle
	counts []*failures
}

// admit counts one attempt of client for owner, atomically, unless the
// client has used up its window for this owner or for all owners: then
// nothing is counted nor kept, and admit returns nil and the end of that
// window. An admitted attempt comes with the delay the owner's failures
// call for before its password is checked.
func (t *throttle) admit(owner, client string) (a *attempt, delay time.Duration, until time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	t.expire(now)
	keys := [3]throttleKey{keyOf(kindPair, client, owner), keyOf(kindClient, client), keyOf(kindOwner, owner)}
	counts := [3]*failures{t.current(keys[0], now), t.current(keys[1], now), t.current(keys[2], now)}
	pair, cli, own := counts[0].count(), counts[1].count(), counts[2].count()
	p := t.policy
	switch {
	case pair >= p.PairFailures && cli >= p.ClientFailures:
		return nil, 0, later(counts[0].start, counts[1].start).Add(p.Window)
	case pair >= p.PairFailures:
		return nil, 0, counts[0].start.Add(p.Window)
	case cli >= p.ClientFailures:
		return nil, 0, counts[1].start.Add(p.Window)
	}
	for i, f := range counts {
		if f == nil {
			// A new window, kept from now at the newest end.
			f = &failures{start: now}
			counts[i] = f
			t.windows.Add(keys[i], f)
		}
		f.n++
	}
	return &attempt{t: t, counts: counts[:]}, p.delay(own), time.Time{}
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

// current returns the count of key in its current window, nil when there
// is none or it has ended; it keeps nothing (an ended window is replaced
// when an attempt is admitted). The caller holds t.mu.
func (t *throttle) current(key throttleKey, now time.Time) *failures {
	f, ok := t.windows.Peek(key)
	if !ok || now.Sub(f.start) >= t.policy.Window {
		return nil
	}
	return f
}

// count is the failures of a window, 0 for none.
func (f *failures) count() int {
	if f == nil {
		return 0
	}
	return f.n
}

// expire drops the counts whose window has ended, oldest first; each is
// dropped once, so an attempt costs constant time on average. The caller
// holds t.mu.
func (t *throttle) expire(now time.Time) {
	for {
		_, f, ok := t.windows.GetOldest()
		if !ok || now.Sub(f.start) < t.policy.Window {
			return
		}
		t.windows.RemoveOldest()
	}
}

// len is how many counts are kept.
func (t *throttle) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.windows.Len()
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

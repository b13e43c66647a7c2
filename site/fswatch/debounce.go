package fswatch

import (
	"sort"
	"time"
)

// Debouncer collects marks per key (a bundle folder, say) and says when
// each burst of marks is due: after a quiet period without marks, but no
// later than maxWait after the burst's first mark, so a steady stream of
// changes still shows up. It does not tell the time: callers pass it, from
// their injected clock. It is not safe for concurrent use.
type Debouncer struct {
	quiet, maxWait time.Duration
	pending        map[string]burst
}

// burst is the first and latest mark of a bundle since it was last due.
type burst struct{ first, last time.Time }

// NewDebouncer returns a Debouncer with the quiet period quiet and the
// maximum wait maxWait (at least quiet).
func NewDebouncer(quiet, maxWait time.Duration) *Debouncer {
	maxWait = max(maxWait, quiet)
	return &Debouncer{quiet: quiet, maxWait: maxWait, pending: make(map[string]burst)}
}

// Touch marks key as changed at now.
func (d *Debouncer) Touch(folder string, now time.Time) {
	b, ok := d.pending[folder]
	if !ok {
		b.first = now
	}
	b.last = now
	d.pending[folder] = b
}

// deadline returns when the burst b is due.
func (d *Debouncer) deadline(b burst) time.Time {
	t := b.last.Add(d.quiet)
	if m := b.first.Add(d.maxWait); m.Before(t) {
		t = m
	}
	return t
}

// Due removes and returns, sorted, the keys whose burst is due at now.
func (d *Debouncer) Due(now time.Time) []string {
	var out []string
	for f, b := range d.pending {
		if !d.deadline(b).After(now) {
			out = append(out, f)
			delete(d.pending, f)
		}
	}
	sort.Strings(out)
	return out
}

// Next returns the earliest deadline of a pending burst; ok is false when
// nothing is pending.
func (d *Debouncer) Next() (t time.Time, ok bool) {
	for _, b := range d.pending {
		if dl := d.deadline(b); !ok || dl.Before(t) {
			t, ok = dl, true
		}
	}
	return t, ok
}

// Pending reports whether key has a burst that is not due yet.
func (d *Debouncer) Pending(key string) bool {
	_, ok := d.pending[key]
	return ok
}

// Forget drops key's pending burst, if any: what it waited for is being
// handled now.
func (d *Debouncer) Forget(key string) { delete(d.pending, key) }

// Len returns how many keys have a pending burst.
func (d *Debouncer) Len() int { return len(d.pending) }

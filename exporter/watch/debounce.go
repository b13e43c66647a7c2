package watch

import (
	"sort"
	"time"
)

// debouncer collects marks per bundle folder and says when each burst of
// marks is due: after a quiet period without marks, but no later than
// maxWait after the burst's first mark.
type debouncer struct {
	quiet, maxWait time.Duration
	pending        map[string]burst
}

// burst is the first and latest mark of a bundle since it was last due.
type burst struct{ first, last time.Time }

func newDebouncer(quiet, maxWait time.Duration) *debouncer {
	return &debouncer{quiet: quiet, maxWait: maxWait, pending: make(map[string]burst)}
}

// touch marks folder as changed at now.
func (d *debouncer) touch(folder string, now time.Time) {
	b, ok := d.pending[folder]
	if !ok {
		b.first = now
	}
	b.last = now
	d.pending[folder] = b
}

// deadline returns when the burst b is due.
func (d *debouncer) deadline(b burst) time.Time {
	t := b.last.Add(d.quiet)
	if m := b.first.Add(d.maxWait); m.Before(t) {
		t = m
	}
	return t
}

// due removes and returns, sorted, the folders whose burst is due at now.
func (d *debouncer) due(now time.Time) []string {
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

// next returns the earliest deadline of a pending burst; ok is false when
// nothing is pending.
func (d *debouncer) next() (t time.Time, ok bool) {
	for _, b := range d.pending {
		if dl := d.deadline(b); !ok || dl.Before(t) {
			t, ok = dl, true
		}
	}
	return t, ok
}

// Package clocktest holds a clock.Clock for tests:
// a Clock that moves only when told to.
package clocktest

import (
	"sort"
	"sync"
	"time"
)

// Clock is a clock.Clock that moves only when Advance is called. Due
// functions run synchronously inside Advance, in time order, so a test sees
// their effects as soon as Advance returns.
type Clock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*timer
}

type timer struct {
	at   time.Time
	f    func()
	done bool
}

// NewClock returns a Clock that reads start until it is advanced.
func NewClock(start time.Time) *Clock { return &Clock{now: start} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc arranges for f to run inside the Advance that moves the clock
// d or more past now. The returned stop cancels it and reports whether it
// had not run yet.
func (c *Clock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &timer{at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		was := !t.done
		t.done = true
		return was
	}
}

// Advance moves the clock forward by d and runs every function that is
// due, earliest first.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due []*timer
	keep := c.timers[:0]
	for _, t := range c.timers {
		switch {
		case t.done:
		case !t.at.After(c.now):
			t.done = true
			due = append(due, t)
		default:
			keep = append(keep, t)
		}
	}
	c.timers = keep
	c.mu.Unlock()
	sort.SliceStable(due, func(i, j int) bool { return due[i].at.Before(due[j].at) })
	for _, t := range due {
		t.f()
	}
}

// NowFunc is a clock.Clock whose Now calls the function: a test that sets
// the time by hand uses it. Its AfterFunc waits in real time.
type NowFunc func() time.Time

// Now returns f().
func (f NowFunc) Now() time.Time { return f() }

// AfterFunc runs fn after d of real time; stop cancels it.
func (NowFunc) AfterFunc(d time.Duration, fn func()) func() bool { return time.AfterFunc(d, fn).Stop }

// Package clock is the one way guidepub tells the time and runs functions
// later: every package that schedules, expires or timestamps something
// takes a Clock, so tests can move time with clocktest.Clock instead of
// sleeping.
package clock

import "time"

// Clock tells the time and runs functions later.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// AfterFunc runs f in its own goroutine once d has passed and returns
	// a function that cancels it, reporting whether it had not run yet.
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

// System returns the Clock of the time package.
func System() Clock { return systemClock{} }

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (systemClock) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}

// Or returns c, or System() when c is nil.
func Or(c Clock) Clock {
	if c == nil {
		return System()
	}
	return c
}

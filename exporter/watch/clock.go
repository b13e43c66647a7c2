package watch

import "time"

// Clock tells the time and runs functions later. The Watcher uses it for
// debouncing, polling and expiry, so tests can control time.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// AfterFunc calls f in its own goroutine once d has passed. The
	// returned stop cancels the call and reports whether it did so before f
	// ran.
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

// SystemClock returns the Clock of the time package.
func SystemClock() Clock { return systemClock{} }

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (systemClock) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}

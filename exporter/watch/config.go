package watch

import (
	"log/slog"
	"runtime"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/guidepub/guidepub/site/clock"
	"github.com/guidepub/guidepub/site/config"
)

// Config is what New needs. Dir and Handler are required.
type Config struct {
	// Dir is the source folder; each of its sub-folders is a bundle. It is
	// a folder of the operating system's file system (events and polling
	// need real paths).
	Dir     string
	Handler Handler
	// Debounce is the quiet period after the last change of a bundle before
	// it is exported (default DefaultDebounce). MaxWait bounds the wait
	// after the first change of a burst (default DefaultMaxWait, and at
	// least Debounce).
	Debounce, MaxWait time.Duration
	// Poll, when positive, scans Dir at this interval instead of using file
	// system events.
	Poll time.Duration
	// FallbackPoll is the polling interval used when file system events
	// cannot be had (default DefaultPoll).
	FallbackPoll time.Duration
	// Jobs is how many handler calls may run at once (default GOMAXPROCS).
	Jobs   int
	Clock  clock.Clock  // default clock.System()
	Logger *slog.Logger // default slog.Default()

	// newEvents replaces fsnotify.NewWatcher in tests.
	newEvents func() (*fsnotify.Watcher, error)
}

// DefaultConfig returns the settings "guidepub watch" starts from: file
// system events (Poll 0), DefaultDebounce, DefaultMaxWait, DefaultPoll as
// the fallback, GOMAXPROCS jobs and the system clock. Dir and Handler are
// left to the caller.
func DefaultConfig() Config {
	return Config{
		Debounce: DefaultDebounce, MaxWait: DefaultMaxWait, FallbackPoll: DefaultPoll,
		Jobs: runtime.GOMAXPROCS(0), Clock: clock.System(),
	}
}

// Validate returns one *config.FieldError per field that cannot work
// (joined), or nil. Poll 0 means file system events.
func (c Config) Validate() error {
	var p config.Problems
	p.Add(c.Dir != "", "Dir", "is required")
	p.Add(c.Handler != nil, "Handler", "is required")
	p.Add(c.Debounce >= 0, "Debounce", "must not be negative, got %s", c.Debounce)
	p.Add(c.MaxWait >= 0, "MaxWait", "must not be negative, got %s", c.MaxWait)
	p.Add(c.Poll >= 0, "Poll", "must not be negative, got %s", c.Poll)
	p.Add(c.FallbackPoll >= 0, "FallbackPoll", "must not be negative, got %s", c.FallbackPoll)
	p.Add(c.Jobs >= 0, "Jobs", "must not be negative, got %d", c.Jobs)
	return p.Err()
}

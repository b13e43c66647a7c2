package watch

import (
	"context"
	"log/slog"
	"runtime"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/guidepub/guidepub/site/clock"
	"github.com/guidepub/guidepub/site/config"
)

// Config is what New needs. Zero means zero: New uses every field as
// given and refuses what Validate refuses, so a caller starts from
// DefaultConfig and sets Dir and Handler, which are required.
type Config struct {
	// Dir is the source folder; each of its sub-folders is a bundle. It is
	// a folder of the operating system's file system (events and polling
	// need real paths).
	Dir     string
	Handler Handler
	// Debounce is the quiet period after the last change of a bundle before
	// it is exported (an upload completed by a rename into place waits for
	// none: see Watcher), and how far a re-export due in the past is moved
	// ahead; it must be positive (zero would export half-written uploads
	// and could spin). MaxWait bounds the wait after the first change of a
	// burst and must be at least Debounce. DefaultConfig sets
	// DefaultDebounce and DefaultMaxWait.
	Debounce, MaxWait time.Duration
	// Poll, when positive, scans Dir at this interval instead of using file
	// system events; zero means file system events.
	Poll time.Duration
	// FallbackPoll is the polling interval used when file system events
	// cannot be had; it must be positive. DefaultConfig sets DefaultPoll.
	FallbackPoll time.Duration
	// Since, when set, is when the caller started, before it read what
	// it needs (an exporter its records, say): a bundle folder changed at
	// or after Since, but before New watched Dir, is an upload made as the
	// caller started, which no event can report; Run finds it by its
	// stamps and exports it first, beside the rest of the start. Zero
	// means when New is called.
	Since time.Time
	// Jobs is how many handler calls may run at once, at least 1;
	// DefaultConfig sets GOMAXPROCS.
	Jobs int
	// Clock tells the debounce, polling and expiry times (required);
	// DefaultConfig sets clock.System().
	Clock clock.Clock
	// Logger receives the warnings and errors of the Watcher; nil discards
	// them. DefaultConfig sets slog.Default().
	Logger *slog.Logger
	// Hold, when set, is waited for (closed, or Run's context ended)
	// before the watches of the bundle folders already there are added,
	// once those changed since the start (uploads) are watched and marked:
	// adding them looks at every file of every bundle, and the caller's
	// own start (an exporter reading its records) goes first. A change
	// made meanwhile is found by its stamps when its folder's watch is
	// added.
	Hold <-chan struct{}

	// newEvents replaces fsnotify.NewWatcher in tests.
	newEvents func() (*fsnotify.Watcher, error)
	// beforeWatches, in tests, runs before Run adds the watches of the
	// bundle folders already there (Watcher.watchExisting).
	beforeWatches func(ctx context.Context)
}

// DefaultConfig returns the settings "guidepub watch" starts from: file
// system events (Poll 0), DefaultDebounce, DefaultMaxWait, DefaultPoll as
// the fallback, GOMAXPROCS jobs, the system clock and slog.Default(). Dir
// and Handler are left to the caller.
func DefaultConfig() Config {
	return Config{
		Debounce: DefaultDebounce, MaxWait: DefaultMaxWait, FallbackPoll: DefaultPoll,
		Jobs: runtime.GOMAXPROCS(0), Clock: clock.System(), Logger: slog.Default(),
	}
}

// Validate returns one *config.FieldError per field that cannot work
// (joined), or nil: Dir, Handler and Clock are required, Debounce and
// FallbackPoll must be positive, MaxWait at least Debounce, Poll not
// negative (0 means file system events) and Jobs at least 1.
func (c Config) Validate() error {
	var p config.Problems
	p.Add(c.Dir != "", "Dir", "is required")
	p.Add(c.Handler != nil, "Handler", "is required")
	p.Add(c.Debounce > 0, "Debounce", "must be positive, got %s", c.Debounce)
	p.Add(c.MaxWait >= c.Debounce, "MaxWait", "must be at least Debounce (%s), got %s", c.Debounce, c.MaxWait)
	p.Add(c.Poll >= 0, "Poll", "must not be negative, got %s", c.Poll)
	p.Add(c.FallbackPoll > 0, "FallbackPoll", "must be positive, got %s", c.FallbackPoll)
	p.Add(c.Jobs >= 1, "Jobs", "must be at least 1, got %d", c.Jobs)
	p.Add(c.Clock != nil, "Clock", "is required")
	return p.Err()
}

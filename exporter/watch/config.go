package watch

import (
	"runtime"

	"github.com/guidepub/guidepub/site/clock"
	"github.com/guidepub/guidepub/site/config"
)

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

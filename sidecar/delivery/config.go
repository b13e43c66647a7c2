package delivery

import (
	"time"

	"github.com/guidepub/guidepub/site/clock"
	"github.com/guidepub/guidepub/site/config"
)

// DefaultConfig returns the delivery settings "guidepub sidecar" starts
// from: retries 10 to 15 minutes apart, 5 attempts of at most 30 seconds,
// 64 sends at once, public targets only.
func DefaultConfig() Config {
	return Config{
		RetryMin: 10 * time.Minute, RetryMax: 15 * time.Minute,
		MaxAttempts: 5, Timeout: 30 * time.Second, Workers: 64,
		Clock: clock.System(),
	}
}

// Validate returns one *config.FieldError per field that cannot work
// (joined), or nil: retry delays positive and in order, at least one
// attempt, a positive timeout and 1 to 10000 workers.
func (c Config) Validate() error {
	var p config.Problems
	p.Add(c.RetryMin > 0, "RetryMin", "must be positive, got %s", c.RetryMin)
	p.Add(c.RetryMax >= c.RetryMin, "RetryMax", "must be at least RetryMin (%s), got %s", c.RetryMin, c.RetryMax)
	p.Add(c.MaxAttempts >= 1, "MaxAttempts", "must be at least 1, got %d", c.MaxAttempts)
	p.Add(c.Timeout > 0, "Timeout", "must be positive, got %s", c.Timeout)
	p.Add(c.Workers >= 1 && c.Workers <= 10000, "Workers", "must be between 1 and 10000, got %d", c.Workers)
	p.Add(c.PollInterval >= 0, "PollInterval", "must not be negative, got %s", c.PollInterval)
	return p.Err()
}

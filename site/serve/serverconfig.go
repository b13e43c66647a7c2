package serve

import "github.com/guidepub/guidepub/site/config"

// DefaultConfig returns the settings "guidepub serve" starts from.
func DefaultConfig() Config {
	return Config{MemoryLimit: DefaultMemoryLimit, Debounce: DefaultDebounce, PollInterval: DefaultPollInterval}
}

// Validate returns one *config.FieldError per field that cannot work
// (joined), or nil.
func (c Config) Validate() error {
	var p config.Problems
	p.Add(c.MemoryLimit >= 0, "MemoryLimit", "must not be negative, got %d", c.MemoryLimit)
	p.Add(c.Debounce >= 0, "Debounce", "must not be negative, got %s", c.Debounce)
	p.Add(c.PollInterval >= 0, "PollInterval", "must not be negative, got %s", c.PollInterval)
	return p.Err()
}

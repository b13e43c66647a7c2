package publish

import (
	"github.com/guidepub/guidepub/site/config"
)

// DefaultConfig returns the settings "guidepub publish" starts from:
// identity documents, DefaultJobs uploads at once and at most
// DefaultMaxDeletes deletions. From, FromDir and Bucket are left to the
// caller.
func DefaultConfig() Config {
	return Config{Encoding: Identity, Jobs: DefaultJobs, MaxDeletes: DefaultMaxDeletes}
}

// Validate returns one *config.FieldError per field that cannot work
// (joined), or nil. Zero means zero: MaxDeletes 0 allows no deletion.
func (c Config) Validate() error {
	var p config.Problems
	p.Add(c.From != nil, "From", "is required")
	p.Add(c.Bucket != nil, "Bucket", "is required")
	if c.Encoding.Name != "" {
		_, err := ParseEncoding(c.Encoding.Name)
		p.Add(err == nil, "Encoding", "%v", err)
	}
	p.Add(c.Jobs >= 1, "Jobs", "must be at least 1, got %d", c.Jobs)
	p.Add(c.MaxDeletes >= 0, "MaxDeletes", "must not be negative, got %d", c.MaxDeletes)
	return p.Err()
}

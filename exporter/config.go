package exporter

import (
	"runtime"

	"github.com/guidepub/guidepub/site"
	"github.com/guidepub/guidepub/site/clock"
	"github.com/guidepub/guidepub/site/config"
)

// DefaultConfig returns the settings "guidepub export" starts from: the
// default URLs and source name, every encoding of site.Encodings, one
// compression job per CPU and the system clock. The file systems and
// folders are left to the caller.
func DefaultConfig() Config {
	return Config{
		ViewURL: DefaultViewURL, UnbrandedURL: DefaultUnbrandedURL,
		EmbedURL: DefaultEmbedURL, BaseURL: DefaultBaseURL,
		SourceName: DefaultSourceName,
		Encodings:  site.Encodings,
		Jobs:       runtime.NumCPU(),
		Clock:      clock.System(),
	}
}

// Validate returns one *config.FieldError per field that cannot work
// (joined), or nil.
func (c Config) Validate() error {
	var p config.Problems
	p.Add(c.Src != nil, "Src", "is required")
	p.Add(c.Out != nil, "Out", "is required")
	p.Add(c.Private != nil, "Private", "is required")
	for _, enc := range c.Encodings {
		e, ok := site.EncodingByName(enc.Name)
		p.Add(ok && e == enc, "Encodings", "unknown encoding %q", enc.Name)
	}
	p.Add(c.Jobs >= 0, "Jobs", "must not be negative, got %d", c.Jobs)
	if c.Shards > 1 {
		p.Add(c.Shard >= 0 && c.Shard < c.Shards, "Shard", "%d is not in [0, %d)", c.Shard, c.Shards)
	}
	return p.Err()
}

package serve

import (
	"log/slog"
	"time"

	"github.com/guidepub/guidepub/site/config"
)

// Config configures a Server. The zero value is usable.
type Config struct {
	// Logger receives reload and watch messages; nil discards them.
	Logger *slog.Logger
	// MemoryLimit is the size up to which a media file is held in memory;
	// larger ones stream from disk. Documents and their siblings are always
	// held in memory. Zero means DefaultMemoryLimit; negative keeps every
	// media file on disk.
	MemoryLimit int64
	// NoWatch turns off watching the tree for changes; Reload must then be
	// called after the tree changes. A tree that is not on the operating
	// system's file system is never watched.
	NoWatch bool
	// Debounce is how long the watcher waits after the last change before
	// it reloads. Zero means DefaultDebounce.
	Debounce time.Duration
	// PollInterval is how often the tree is reloaded when it cannot be
	// watched (inotify limits, say). Zero means DefaultPollInterval.
	PollInterval time.Duration
	// ReadHeaderTimeout, ReadTimeout, WriteTimeout and IdleTimeout bound
	// how long a connection may take to send its request headers, its
	// whole request, to take the whole response, and to sit idle between
	// requests; HTTPServer applies them. Zero means the Default value of
	// the same name; negative means no limit. See docs/serving.md.
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	WriteTimeout      time.Duration
	IdleTimeout       time.Duration
}

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

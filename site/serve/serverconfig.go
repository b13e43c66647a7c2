package serve

import (
	"log/slog"
	"time"

	"github.com/guidepub/guidepub/site/config"
)

// Defaults of Config, as DefaultConfig sets them.
const (
	DefaultCacheBytes     = 64 << 20
	DefaultSmallFileLimit = 64 << 10
	DefaultDebounce       = 30 * time.Millisecond
	DefaultPollInterval   = 2 * time.Second
)

// Config configures a Server. Start from DefaultConfig: in every field zero
// means zero (nothing cached, no debounce, no time limit), never "the
// default". See docs/serving.md.
type Config struct {
	// Logger receives watch and consistency messages; nil discards them.
	Logger *slog.Logger
	// CacheBytes bounds the memory of the cache of documents and small
	// files; the entries used least are dropped first. Zero caches
	// nothing: every request reads its files.
	CacheBytes int64
	// SmallFileLimit is the size up to which a media file is cached (with
	// an ETag from its content). Larger media, and every media file when
	// it is zero, stream from disk with an ETag from size, modification
	// time and inode. Documents are cached whatever their size, as long as
	// they fit in CacheBytes.
	SmallFileLimit int64
	// NoWatch turns off watching the tree. Cached files are then trusted
	// until Reload or ReloadDirs; files not cached are read as they are. A
	// tree that is not on the operating system's file system is never
	// watched.
	NoWatch bool
	// Poll, when positive, replaces watching: the tree is not watched, and
	// a cached file is checked against the tree (size, modification time,
	// inode) once it is older than Poll, as nginx's open_file_cache_valid
	// does. It is for network file systems, where inotify sees no change
	// made by another machine, and for trees so large that the watches
	// cost more memory than they are worth. Zero watches.
	Poll time.Duration
	// Debounce is how long the watcher gathers the creations, renames and
	// removals of a burst before it drops the cached entries under the
	// folders they touched. A changed file is dropped at once.
	Debounce time.Duration
	// PollInterval applies when the tree cannot be watched (inotify
	// limits, say): a cached file is trusted this long, then its files are
	// checked again (size, modification time, inode) before it is served.
	// Zero checks on every request.
	PollInterval time.Duration
	// EdgeTTL, when at least a second, is how long shared caches keep the
	// files of a public id: they get Surrogate-Control and
	// CDN-Cache-Control max-age and a Cache-Control s-maxage of it (the
	// browser's max-age is unchanged; site.FileHeaders). Zero: shared
	// caches follow Cache-Control. A long one is only safe when every
	// change is purged at the edge by surrogate key (docs/serving.md).
	EdgeTTL time.Duration
}

// DefaultConfig returns the settings "guidepub serve" starts from.
func DefaultConfig() Config {
	return Config{
		CacheBytes:     DefaultCacheBytes,
		SmallFileLimit: DefaultSmallFileLimit,
		Debounce:       DefaultDebounce,
		PollInterval:   DefaultPollInterval,
	}
}

// Validate returns one *config.FieldError per field that cannot work
// (joined), or nil.
func (c Config) Validate() error {
	var p config.Problems
	p.Add(c.CacheBytes >= 0, "CacheBytes", "must not be negative, got %d", c.CacheBytes)
	p.Add(c.SmallFileLimit >= 0, "SmallFileLimit", "must not be negative, got %d", c.SmallFileLimit)
	p.Add(c.Poll >= 0, "Poll", "must not be negative, got %s", c.Poll)
	p.Add(c.Debounce >= 0, "Debounce", "must not be negative, got %s", c.Debounce)
	p.Add(c.PollInterval >= 0, "PollInterval", "must not be negative, got %s", c.PollInterval)
	p.Add(c.EdgeTTL >= 0, "EdgeTTL", "must not be negative, got %s", c.EdgeTTL)
	return p.Err()
}

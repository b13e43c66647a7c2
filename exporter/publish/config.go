package publish

import (
	"io"
	"log/slog"
	"time"

	"github.com/spf13/afero"
	"gocloud.dev/blob"

	"github.com/guidepub/guidepub/site"
	"github.com/guidepub/guidepub/site/config"
)

// Config configures Publish. Start from DefaultConfig: zero values are
// zero (Jobs 0 is refused, MaxDeletes 0 allows no deletion).
type Config struct {
	From    afero.Fs
	FromDir string       // the exported public tree
	Bucket  *blob.Bucket // destination; Publish does not close it
	// Prefix is put before every key ("site/" → "site/<viewId>/data/status");
	// stale objects are looked for under it only.
	Prefix string
	// Encoding of the uploaded document bytes: Identity (or the zero
	// value), site.Gzip or site.Brotli. Media are always uploaded as is.
	Encoding site.Encoding
	Jobs     int // uploads at once, at least 1
	// MaxDeletes caps the stale objects deleted that nothing recorded:
	// those Withdrawn does not name, the difference between the tree and
	// the listing alone. With more, Publish fails before changing
	// anything: it guards against a wrong tree (an empty or unrelated
	// FromDir), not against what guidepub's records say was withdrawn,
	// which is deleted whatever their number. 0 allows no deletion of an
	// unrecorded object (see DefaultConfig).
	MaxDeletes int
	DryRun     bool // plan only; write the plan to Plan
	Force      bool // upload every object, changed or not
	// EdgeTTL, when at least a second, is how long a CDN keeps the objects
	// of a public id: their Cache-Control gets s-maxage and their metadata
	// surrogate-control (site.EdgeCacheControl, site.ObjectMetadata).
	// Zero: shared caches follow Cache-Control. Only safe with purges.
	EdgeTTL time.Duration
	// PagesAsObjects uploads each view page as the object of its URL
	// (vKT301A, beside vKT301A/data/status) rather than under its
	// index.html key (vKT301A/index.html, the default): S3 then serves
	// /vKT301A with no rewrite, but a store that keeps keys as files
	// (file://, versitygw's POSIX backend) cannot hold a key that is also a
	// prefix of others. See docs/hosting.md.
	PagesAsObjects bool
	// KnownDigest, when set, gives the recorded digest of a file not
	// touched since its export, so that a reconcile need not read it.
	KnownDigest KnownDigest
	// Rehash reads every file even where KnownDigest knows it.
	Rehash bool
	// Withdrawn, when set, names the stale objects whose deletion is
	// recorded intent (see Withdrawn): they are deleted whatever
	// MaxDeletes says. Nil: every stale object counts against MaxDeletes.
	Withdrawn Withdrawn
	// KeepUnrecorded plans no deletion of a stale object Withdrawn does
	// not name: those stay, counted in Report.Kept, and MaxDeletes is not
	// checked; the withdrawn ones are deleted.
	KeepUnrecorded bool
	// DeleteForeign deletes every stale object under the prefix; by
	// default only those guidepub wrote (Owned) are deleted, and another
	// writer's stay (counted in Report.Foreign).
	DeleteForeign bool
	Plan          io.Writer // receives one line per planned change; may be nil
	Progress      io.Writer // non-nil: draw a progress bar there
	Logger        *slog.Logger
	// OnUpload, when set, is called after each object is uploaded, from
	// the uploading goroutine.
	OnUpload func(key string)
}

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
	p.Add(c.EdgeTTL >= 0, "EdgeTTL", "must not be negative, got %s", c.EdgeTTL)
	return p.Err()
}

package exporter

import (
	"github.com/guidepub/guidepub/exporter/bundle"
	"io"
	"log/slog"
	"runtime"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/site"
	"github.com/guidepub/guidepub/site/clock"
	"github.com/guidepub/guidepub/site/config"
)

// Config is what an Exporter reads, writes and links to. Zero values take
// the defaults named on each field.
type Config struct {
	Src    afero.Fs // bundles: SrcDir/<folder>/guide.json (required)
	SrcDir string
	Out    afero.Fs // public tree (required)
	OutDir string
	// Private is the private tree: site.RecordPath, site.EventPath,
	// site.PrivateDocPath and site.ManifestFile (required).
	Private    afero.Fs
	PrivateDir string

	// URL settings (see docs/cli.md, "URLs"); defaults DefaultViewURL,
	// DefaultUnbrandedURL, DefaultEmbedURL and DefaultBaseURL.
	ViewURL, UnbrandedURL, EmbedURL, BaseURL string
	// SourceName is the autofill ...Source value; default DefaultSourceName.
	SourceName string
	// Encodings are the compressed siblings written beside each document;
	// nil means site.Encodings. An empty non-nil slice writes none.
	Encodings []site.Encoding
	// Jobs is how many documents are compressed at once (the CPU-bound
	// part of an export); ExportAll keeps up to twice as many guides in
	// flight so that file I/O overlaps compression. Default
	// runtime.NumCPU().
	Jobs int
	// Clock is what view expiry is checked against; nil is clock.System().
	Clock clock.Clock
	// Logger receives one line per changed or rejected guide; default
	// discards.
	Logger *slog.Logger
	// Progress, when non-nil, gets a progress bar during ExportAll.
	Progress io.Writer
	// Shard and Shards split a full rebuild across machines: with Shards
	// > 1, ExportAll handles only the folders f with ShardOf(f, Shards) ==
	// Shard and keeps its own manifest (ManifestName), so shards writing
	// into one public tree never unpublish each other's guides. Ids
	// claimed by two bundles of different shards are not detected.
	Shard, Shards int
	// Limits bound what one bundle may hold and the size of one rendered
	// document; zero fields take bundle.DefaultLimits (see
	// docs/robustness.md).
	Limits bundle.Limits
}

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

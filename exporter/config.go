package exporter

import (
	"io"
	"log/slog"
	"runtime"
	"slices"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/site"
	"github.com/guidepub/guidepub/site/clock"
	"github.com/guidepub/guidepub/site/config"
)

// Config is what an Exporter reads, writes and links to. Zero means zero:
// New uses every field as given and refuses what Validate refuses, so a
// caller starts from DefaultConfig and changes what it needs.
type Config struct {
	Src    afero.Fs // bundles: SrcDir/<folder>/guide.json (required)
	SrcDir string
	Out    afero.Fs // public tree (required)
	OutDir string
	// Private is the private tree: site.RecordPath, site.EventPath,
	// site.PrivateDocPath and the exporter's records, RecordsDir (required).
	Private    afero.Fs
	PrivateDir string

	// URL settings (see docs/cli.md, "URLs"): the hosts every document
	// links to, each required (an empty one would turn the links into
	// bare paths). DefaultConfig sets DefaultViewURL, DefaultUnbrandedURL,
	// DefaultEmbedURL and DefaultBaseURL.
	ViewURL, UnbrandedURL, EmbedURL, BaseURL string
	// SourceName is the autofill ...Source value of every measure
	// (required: an empty source reads as an absent measure);
	// DefaultConfig sets DefaultSourceName.
	SourceName string
	// Encodings are the compressed siblings written beside each document,
	// each one of site.Encodings. None (nil or empty) is a valid choice:
	// documents are written in identity only, which every server and
	// client can use. DefaultConfig sets site.Encodings.
	Encodings []site.Encoding
	// Jobs is how many documents are compressed at once (the CPU-bound
	// part of an export), at least 1; ExportAll keeps up to twice as many
	// guides in flight so that file I/O overlaps compression.
	// DefaultConfig sets runtime.NumCPU().
	Jobs int
	// QuickSiblings makes ExportBundle (a watcher's export of one upload)
	// write the compressed siblings of the documents that changed with
	// quick settings first, and report the guide as due again at once
	// (GuideResult.NextChange): its next export compresses them with
	// the final settings, leaving the bytes an export without
	// QuickSiblings writes (docs/output.md, "Quick siblings").
	// ExportAll always writes the final bytes. DefaultConfig leaves it
	// false; watch turns it on.
	QuickSiblings bool
	// Clock is what view expiry is checked against (required);
	// DefaultConfig sets clock.System().
	Clock clock.Clock
	// Logger receives one line per changed or rejected guide; nil
	// discards them (DefaultConfig leaves it nil).
	Logger *slog.Logger
	// Progress, when non-nil, gets a progress bar during ExportAll.
	Progress io.Writer
	// Shard and Shards split a full rebuild across machines: Shards 0 or
	// 1 is no split (Shard must then be 0); with Shards > 1, ExportAll
	// handles only the folders f with ShardOf(f, Shards) == Shard and
	// keeps its own records (RecordsDir), so shards writing into one
	// public tree never unpublish each other's guides. Ids claimed by two
	// bundles of different shards are not detected.
	Shard, Shards int
	// Limits bound what one bundle may hold and the size of one rendered
	// document (see docs/robustness.md); DefaultConfig sets
	// bundle.DefaultLimits. Package bundle reads a zero field as its
	// default limit.
	Limits bundle.Limits
}

// DefaultConfig returns the settings "guidepub export" starts from: the
// default URLs and source name, every encoding of site.Encodings, one
// compression job per CPU, the system clock and no logger. The file
// systems and folders are left to the caller.
func DefaultConfig() Config {
	return Config{
		ViewURL: DefaultViewURL, UnbrandedURL: DefaultUnbrandedURL,
		EmbedURL: DefaultEmbedURL, BaseURL: DefaultBaseURL,
		SourceName: DefaultSourceName,
		Encodings:  slices.Clone(site.Encodings),
		Jobs:       runtime.NumCPU(),
		Clock:      clock.System(),
		Limits:     bundle.DefaultLimits,
	}
}

// Validate returns one *config.FieldError per field that cannot work
// (joined), or nil: the three file systems, the four URLs, the source
// name and the clock are required, every encoding must be one of
// site.Encodings, Jobs must be at least 1, Shards must not be negative
// and Shard must be in [0, max(Shards, 1)).
func (c Config) Validate() error {
	var p config.Problems
	p.Add(c.Src != nil, "Src", "is required")
	p.Add(c.Out != nil, "Out", "is required")
	p.Add(c.Private != nil, "Private", "is required")
	for _, u := range []struct{ field, value string }{
		{"ViewURL", c.ViewURL}, {"UnbrandedURL", c.UnbrandedURL},
		{"EmbedURL", c.EmbedURL}, {"BaseURL", c.BaseURL}, {"SourceName", c.SourceName},
	} {
		p.Add(u.value != "", u.field, "is required")
	}
	for _, enc := range c.Encodings {
		e, ok := site.EncodingByName(enc.Name)
		p.Add(ok && e == enc, "Encodings", "unknown encoding %q", enc.Name)
	}
	p.Add(c.Jobs >= 1, "Jobs", "must be at least 1, got %d", c.Jobs)
	p.Add(c.Clock != nil, "Clock", "is required")
	p.Add(c.Shards >= 0, "Shards", "must not be negative, got %d", c.Shards)
	n := max(c.Shards, 1)
	p.Add(c.Shard >= 0 && c.Shard < n, "Shard", "%d is not in [0, %d)", c.Shard, n)
	return p.Err()
}

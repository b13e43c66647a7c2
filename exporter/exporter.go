package exporter

import (
	"fmt"
	"hash/fnv"
	"log/slog"
	"strings"
	"sync"

	"github.com/moby/locker"

	"github.com/guidepub/guidepub/exporter/claims"
	"github.com/guidepub/guidepub/exporter/media"
	"github.com/guidepub/guidepub/exporter/records"
	"github.com/guidepub/guidepub/exporter/render"
	"github.com/guidepub/guidepub/exporter/write"
	"github.com/guidepub/guidepub/site"
	"github.com/guidepub/guidepub/site/viewpage"
)

// Default URL settings: everything on one local host, as "guidepub dev"
// serves it.
const (
	DefaultViewURL      = "http://localhost:8080"
	DefaultUnbrandedURL = "http://localhost:8080/u"
	DefaultEmbedURL     = "http://localhost:8080/embed"
	DefaultBaseURL      = "http://localhost:8080"
	DefaultSourceName   = "Service"
)

// ShardOf returns the shard, in [0, n), that a bundle folder belongs to: a
// stable hash (FNV-1a) of its name, so every machine agrees.
func ShardOf(folder string, n int) int {
	if n <= 1 {
		return 0
	}
	h := fnv.New32a()
	h.Write([]byte(folder))
	return int(h.Sum32() % uint32(n))
}

// Exporter exports bundles into the public and private trees. Its methods
// are safe for concurrent use; calls for the same folder are serialized.
type Exporter struct {
	cfg      Config
	plan     render.Settings // what render.Guide renders with
	w        *write.Writer   // writes plans into the trees
	settings string          // fingerprint of the settings that shape the output

	folders locker.Locker // by bundle folder: one export of a folder at a time
	way     giveWay       // who waits for whom: uploads go first

	// mu guards the records' entries and the claims, which must change
	// together: a claim is checked against the published guides and those
	// in flight.
	mu      sync.Mutex
	records *records.Records
	claims  *claims.Claims
}

// New returns an Exporter for cfg, used as given (start from
// DefaultConfig), once it has read the records of earlier exports from the
// private tree (records.StartRecords, which converts a legacy
// manifest.json). It returns an error when cfg.Validate refuses cfg or a
// record cannot be read or decoded.
func New(cfg Config) (*Exporter, error) {
	e, err := Start(cfg)
	if err != nil {
		return nil, err
	}
	if err := e.Loaded(); err != nil {
		return nil, err
	}
	return e, nil
}

// Start is New without waiting for the records: they are read in the
// background, and Loaded waits for them. Meanwhile ExportBundle can
// publish a guide whose ids the records' ids index shows free (see
// records.StartRecords), and what needs every record (ExportAll,
// RemoveBundle, Manifest) waits for them: what a start costs as the
// corpus grows does not delay an upload made then. A guide its folder
// published before under another guide id is left to ExportAll, which
// unpublishes it: the caller runs it once the records are read (watch's
// catch-up does).
func Start(cfg Config) (*Exporter, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("exporter: %w", err)
	}
	// Zero means zero: the defaults are DefaultConfig's. Only a nil Logger
	// is given its documented meaning.
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	e := &Exporter{
		cfg: cfg,
		plan: render.Settings{URLs: render.URLs{View: cfg.ViewURL, Unbranded: cfg.UnbrandedURL, Embed: cfg.EmbedURL, Base: cfg.BaseURL},
			SourceName: cfg.SourceName, Limits: cfg.Limits},
		claims: claims.NewClaims(),
	}
	e.w = write.New(write.Config{
		Public:    write.Tree{FS: cfg.Out, Root: cfg.OutDir, Perm: 0o644},
		Private:   write.Tree{FS: cfg.Private, Root: cfg.PrivateDir, Perm: 0o600},
		Encodings: cfg.Encodings, Jobs: cfg.Jobs, Limits: cfg.Limits,
		// The manifest's name with a dot before and ".writing" after:
		// a hidden name, which what reads or uploads the trees skips.
		Marker:  "." + records.ManifestName(cfg.Shard, cfg.Shards) + ".writing",
		GiveWay: e.way.yield,
	})
	var names []string
	for _, enc := range cfg.Encodings {
		names = append(names, enc.Name)
	}
	// The stylesheet's path too: every page names it, so a new stylesheet
	// renders every guide's pages again.
	e.settings = strings.Join([]string{"v1", media.Version, cfg.ViewURL, cfg.UnbrandedURL, cfg.EmbedURL, cfg.BaseURL, cfg.SourceName, strings.Join(names, ","), viewpage.StylesheetPath}, "\x00")
	recs, err := records.StartRecords(cfg.Private, cfg.PrivateDir, cfg.Shard, cfg.Shards)
	if err != nil {
		return nil, err
	}
	e.records = recs
	return e, nil
}

// Loaded waits until the exporter has read its records and returns the
// error of one that could not be read or decoded, if any.
func (e *Exporter) Loaded() error { return e.records.Wait() }

// Manifest returns a copy of what the exporter has published: every
// guide's entry, without the hashes of its files (see Exporter.Records).
func (e *Exporter) Manifest() site.Manifest { return e.records.Snapshot() }

// Records returns the exporter's records: what it published, with the hash
// and stamp of every public file (records.Records.PublicFiles, records.Records.Lookup).
func (e *Exporter) Records() *records.Records { return e.records }

// entry returns the manifest entry of guide id.
func (e *Exporter) entry(id string) (site.ManifestGuide, bool, error) { return e.records.Entry(id) }

// publishedIn returns the ids of the guides folder published, except the
// guide id except, sorted.
func (e *Exporter) publishedIn(folder, except string) []string {
	return e.records.InFolder(folder, except)
}

// lockFolder waits until no other export of folder runs and returns what
// ends this one's turn. A folder's lock lasts while it is held or waited
// for: the locks held at rest do not grow with the number of folders.
func (e *Exporter) lockFolder(folder string) (unlock func()) {
	e.folders.Lock(folder)
	return func() { _ = e.folders.Unlock(folder) }
}

// RemoveStaleTemps deletes the temporary files an exporter killed in the
// middle of a write left behind in the public and private trees (see
// write.Writer.RemoveStaleTemps) and returns how many. ExportAll calls it
// first when the previous export was interrupted, and otherwise cleans
// only the top folder of the private tree.
func (e *Exporter) RemoveStaleTemps() (int, error) { return e.w.RemoveStaleTemps(true) }

package exporter

import (
	"fmt"
	"hash/fnv"
	"log/slog"
	"strings"
	"sync"

	"github.com/guidepub/guidepub/exporter/media"
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

// ManifestName returns the private-tree name of the single manifest file
// earlier versions kept for shard i of n (site.ManifestFile for an
// unsharded export, else "manifest-<i>-of-<n>.json"): OpenRecords converts
// it into per-guide records. The marker of writes in progress is named
// after it.
func ManifestName(i, n int) string {
	if n <= 1 {
		return site.ManifestFile
	}
	return fmt.Sprintf("manifest-%d-of-%d.json", i, n)
}

// Exporter exports bundles into the public and private trees. Its methods
// are safe for concurrent use; calls for the same folder are serialized.
type Exporter struct {
	cfg      Config
	urls     urls
	pub      tree
	priv     tree
	comp     *Compressor
	cpu      chan struct{} // Jobs slots for compression
	budget   decodeBudget  // the memory image decodes and PDF rewrites share (decodes.go)
	decoding folderLocks   // one decode of a content at a time, for its record
	settings string        // fingerprint of the settings that shape the output

	folders folderLocks

	// mu guards the records' entries and the claims, which must change
	// together: a claim is checked against the published guides and those
	// in flight.
	mu      sync.Mutex
	records *Records
	claims  *claims

	interrupted interruptState // see repair.go
	shared      sharedFiles    // see stylesheet.go
}

// New returns an Exporter for cfg, used as given (start from
// DefaultConfig), reading the records of earlier exports from the private
// tree (OpenRecords, which converts a legacy manifest.json). It returns an
// error when cfg.Validate refuses cfg or a record cannot be read or
// decoded.
func New(cfg Config) (*Exporter, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("exporter: %w", err)
	}
	// Zero means zero: the defaults are DefaultConfig's. Only a nil Logger
	// is given its documented meaning.
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	e := &Exporter{
		cfg:    cfg,
		urls:   urls{View: cfg.ViewURL, Unbranded: cfg.UnbrandedURL, Embed: cfg.EmbedURL, Base: cfg.BaseURL},
		pub:    tree{fs: cfg.Out, root: cfg.OutDir, perm: 0o644},
		priv:   tree{fs: cfg.Private, root: cfg.PrivateDir, perm: 0o600},
		comp:   NewCompressor(),
		cpu:    make(chan struct{}, cfg.Jobs),
		budget: newDecodeBudget(cfg.Limits),
		claims: newClaims(),
	}
	var names []string
	for _, enc := range cfg.Encodings {
		names = append(names, enc.Name)
	}
	// The stylesheet's path too: every page names it, so a new stylesheet
	// renders every guide's pages again.
	e.settings = strings.Join([]string{"v1", media.Version, cfg.ViewURL, cfg.UnbrandedURL, cfg.EmbedURL, cfg.BaseURL, cfg.SourceName, strings.Join(names, ","), viewpage.StylesheetPath}, "\x00")
	records, err := OpenRecords(cfg.Private, cfg.PrivateDir, cfg.Shard, cfg.Shards)
	if err != nil {
		return nil, err
	}
	e.records = records
	e.interrupted.verify = e.markerExists()
	return e, nil
}

// manifestName is the private-tree name of this exporter's manifest.
func (e *Exporter) manifestName() string { return ManifestName(e.cfg.Shard, e.cfg.Shards) }

// Manifest returns a copy of what the exporter has published: every
// guide's entry, without the hashes of its files (see Records).
func (e *Exporter) Manifest() site.Manifest { return e.records.snapshot() }

// Records returns the exporter's records: what it published, with the hash
// and stamp of every public file (Records.PublicFiles, Records.Lookup).
func (e *Exporter) Records() *Records { return e.records }

// PublicIDs returns the public top-level folders (view ids and aliases) of
// the guides published from folder: one index look-up, whatever the
// number of guides.
func (e *Exporter) PublicIDs(folder string) []string {
	ids := []string{}
	for _, id := range e.publishedIn(folder, "") {
		if mg, ok := e.entry(id); ok {
			ids = append(ids, mg.Ids...)
		}
	}
	return ids
}

// entry returns the manifest entry of guide id.
func (e *Exporter) entry(id string) (site.ManifestGuide, bool) { return e.records.get(id) }

// publishedIn returns the ids of the guides folder published, except the
// guide id except, sorted.
func (e *Exporter) publishedIn(folder, except string) []string {
	return e.records.inFolder(folder, except)
}

// folderLock returns the mutex serializing exports of folder.
func (e *Exporter) folderLock(folder string) *sync.Mutex { return e.folders.get(folder) }

package exporter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/exporter/media"
	"github.com/guidepub/guidepub/site"
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

// ManifestName returns the private-tree name of the manifest of shard i of
// n: site.ManifestFile for an unsharded export, else
// "manifest-<i>-of-<n>.json".
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
	settings string        // fingerprint of the settings that shape the output

	folders folderLocks

	// mu guards manifest and claims, which must change together: a
	// claim is checked against the published guides and those in flight.
	mu       sync.Mutex
	manifest *manifest
	claims   *claims

	interrupted interruptState // see repair.go
}

// New returns an Exporter for cfg, used as given (start from
// DefaultConfig), reading the manifest of earlier exports from the private
// tree. It returns an error when cfg.Validate refuses cfg or the manifest
// cannot be read or decoded.
func New(cfg Config) (*Exporter, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("exporter: %w", err)
	}
	// Zero means zero: the defaults are DefaultConfig's. Only a nil Logger
	// is given its documented meaning.
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	comp, err := NewCompressor()
	if err != nil {
		return nil, fmt.Errorf("exporter: %w", err)
	}
	e := &Exporter{
		cfg:      cfg,
		urls:     urls{View: cfg.ViewURL, Unbranded: cfg.UnbrandedURL, Embed: cfg.EmbedURL, Base: cfg.BaseURL},
		pub:      tree{fs: cfg.Out, root: cfg.OutDir, perm: 0o644},
		priv:     tree{fs: cfg.Private, root: cfg.PrivateDir, perm: 0o600},
		comp:     comp,
		cpu:      make(chan struct{}, cfg.Jobs),
		manifest: newManifest(),
		claims:   newClaims(),
	}
	var names []string
	for _, enc := range cfg.Encodings {
		names = append(names, enc.Name)
	}
	e.settings = strings.Join([]string{"v1", media.Version, cfg.ViewURL, cfg.UnbrandedURL, cfg.EmbedURL, cfg.BaseURL, cfg.SourceName, strings.Join(names, ",")}, "\x00")
	if err := e.loadManifest(); err != nil {
		return nil, err
	}
	e.interrupted.verify = e.markerExists()
	return e, nil
}

// manifestName is the private-tree name of this exporter's manifest.
func (e *Exporter) manifestName() string { return ManifestName(e.cfg.Shard, e.cfg.Shards) }

// loadManifest reads the manifest; a missing one is an empty manifest.
func (e *Exporter) loadManifest() error {
	data, err := e.priv.read(e.manifestName())
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("exporter: read manifest: %w", err)
	}
	if err := e.manifest.decode(data); err != nil {
		return fmt.Errorf("exporter: manifest %s: %w", e.priv.abs(e.manifestName()), err)
	}
	return nil
}

// saveManifest writes the manifest atomically unless the file already
// holds it.
func (e *Exporter) saveManifest() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	data, changed, err := e.manifest.needsSave()
	if err != nil {
		return fmt.Errorf("save manifest: %w", err)
	}
	if !changed && e.priv.exists(e.manifestName()) {
		return nil
	}
	if err := e.priv.write(e.manifestName(), data); err != nil {
		return fmt.Errorf("save manifest: %w", err)
	}
	e.manifest.saved(data)
	return nil
}

// Manifest returns a copy of what the exporter has published.
func (e *Exporter) Manifest() site.Manifest {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.manifest.snapshot()
}

// entry returns the manifest entry of guide id.
func (e *Exporter) entry(id string) (site.ManifestGuide, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.manifest.get(id)
}

// publishedIn returns the ids of the guides folder published, except the
// guide id except, sorted.
func (e *Exporter) publishedIn(folder, except string) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.manifest.inFolder(folder, except)
}

// claim checks and reserves the ids of guide g in folder (see
// claims.claim) and returns the *bundle.Error that rejects g, or nil.
func (e *Exporter) claim(folder string, g *bundle.Guide, alive alive) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if problems := e.claims.claim(folder, g, e.manifest, alive); len(problems) > 0 {
		return &bundle.Error{Folder: folder, Problems: problems}
	}
	return nil
}

// release drops the claims of guide g.
func (e *Exporter) release(g *bundle.Guide) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.claims.release(g)
}

// published records entry as the manifest entry of g (nil: the export
// failed and the entry stays as it was) and releases g's claims.
func (e *Exporter) published(g *bundle.Guide, entry *site.ManifestGuide) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if entry != nil {
		e.manifest.set(g.GuideID, *entry)
	}
	e.claims.release(g)
}

// unpublished drops guide id from the manifest.
func (e *Exporter) unpublished(id string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.manifest.remove(id)
}

// folderLock returns the mutex serializing exports of folder.
func (e *Exporter) folderLock(folder string) *sync.Mutex { return e.folders.get(folder) }

// checkFolder returns an error unless folder is a plain folder name.
func checkFolder(folder string) error {
	if folder == "" || strings.ContainsAny(folder, `/\`) || strings.HasPrefix(folder, ".") {
		return fmt.Errorf("invalid bundle folder name %q", folder)
	}
	return nil
}

// load loads the bundle in folder.
func (e *Exporter) load(folder string) (*bundle.Bundle, error) {
	return bundle.LoadLimits(e.cfg.Src, filepath.Join(e.cfg.SrcDir, folder), e.cfg.Limits)
}

// ExportBundle exports the bundle in folder (a folder name under SrcDir).
// A rejected bundle (invalid, or claiming an id another published bundle
// holds) returns a *bundle.Error and changes nothing published; other
// errors are I/O failures. The result is returned in both cases.
func (e *Exporter) ExportBundle(ctx context.Context, folder string) (*GuideResult, error) {
	res := &GuideResult{Folder: folder}
	if err := checkFolder(folder); err != nil {
		res.Err = err
		return res, err
	}
	l := e.folderLock(folder)
	l.Lock()
	defer l.Unlock()
	if err := ctx.Err(); err != nil {
		res.Err = err
		return res, err
	}
	b, err := e.load(folder)
	if err != nil {
		res.Err = err
		return res, err
	}
	res.GuideID = b.Guide.GuideID
	if err := e.claim(folder, &b.Guide, e.aliveOnDisk); err != nil {
		res.Err = err
		return res, err
	}
	*res = e.publishClaimed(ctx, b)
	return e.finish(res)
}

// finish saves the manifest, logs res and returns it with its error.
func (e *Exporter) finish(res *GuideResult) (*GuideResult, error) {
	if err := e.saveManifest(); err != nil && res.Err == nil {
		res.Err = err
	}
	e.logResult(*res)
	return res, res.Err
}

// RemoveBundle unpublishes what folder published: every public and
// private file of its guide. A folder that published nothing gives a zero
// result. It returns an error when a file cannot be deleted or the
// manifest cannot be saved.
func (e *Exporter) RemoveBundle(ctx context.Context, folder string) (*GuideResult, error) {
	res := &GuideResult{Folder: folder}
	l := e.folderLock(folder)
	l.Lock()
	defer l.Unlock()
	if err := ctx.Err(); err != nil {
		res.Err = err
		return res, err
	}
	for _, id := range e.publishedIn(folder, "") {
		r, err := e.unpublish(id)
		res.GuideID, res.Deleted, res.Changed = id, res.Deleted+r.Deleted, res.Changed || r.Changed
		if err != nil {
			res.Err = err
			break
		}
	}
	return e.finish(res)
}

// unpublish deletes every file of the published guide id and drops it from
// the manifest (the caller saves it).
func (e *Exporter) unpublish(id string) (GuideResult, error) {
	mg, ok := e.entry(id)
	res := GuideResult{Folder: mg.Folder, GuideID: id}
	if !ok {
		return res, nil
	}
	for _, p := range mg.Files {
		if err := e.pub.remove(p, nil); err != nil {
			return res, err
		}
		res.Deleted++
	}
	for _, p := range mg.Private {
		if err := e.priv.remove(p, privateKeep); err != nil {
			return res, err
		}
		res.Deleted++
	}
	res.Changed = res.Deleted > 0
	e.unpublished(id)
	return res, nil
}

// logResult logs a changed or failed guide.
func (e *Exporter) logResult(r GuideResult) {
	switch {
	case r.Err != nil:
		e.cfg.Logger.Warn("bundle not exported", append([]any{"folder", r.Folder}, bundle.LogAttrs(r.Err)...)...)
	case r.Changed:
		e.cfg.Logger.Info("guide exported", "folder", r.Folder, "guide", r.GuideID, "revision", r.Revision,
			"written", r.Written, "deleted", r.Deleted, "ready", r.Ready)
	}
}

// aliveOnDisk reports whether folder still holds the bundle of guide id, or
// a bundle that does not load (whose earlier publication stays).
func (e *Exporter) aliveOnDisk(folder, guideID string) bool {
	raw, err := afero.ReadFile(e.cfg.Src, filepath.Join(e.cfg.SrcDir, folder, bundle.FileName))
	if err != nil {
		return !errors.Is(err, fs.ErrNotExist)
	}
	var head struct {
		GuideID string `json:"guideId"`
	}
	if json.Unmarshal(raw, &head) != nil || head.GuideID == "" {
		return true
	}
	return head.GuideID == guideID
}

// publishClaimed publishes b, whose ids are claimed, and records it in the
// manifest (not saved). A guide the folder published before under another
// guide id is removed afterwards.
func (e *Exporter) publishClaimed(ctx context.Context, b *bundle.Bundle) GuideResult {
	g := &b.Guide
	old, hadOld := e.entry(g.GuideID)
	stale := e.publishedIn(b.Folder, g.GuideID)
	var oldp *site.ManifestGuide
	if hadOld {
		oldp = &old
	}
	res, entry, err := e.publish(ctx, b, oldp)
	if err != nil {
		e.published(g, nil)
		res.Err = fmt.Errorf("export %s: %w", b.Folder, err)
		return res
	}
	e.published(g, &entry)
	for _, id := range stale {
		r, err := e.unpublish(id)
		res.Deleted += r.Deleted
		res.Changed = res.Changed || r.Changed
		if err != nil {
			res.Err = err
			break
		}
	}
	return res
}

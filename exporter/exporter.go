package exporter

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"log/slog"
	"maps"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/site"
	"github.com/guidepub/guidepub/site/clock"
)

// Default URL settings: everything on one local host, as "guidepub dev"
// serves it.
const (
	DefaultViewURL      = "http://localhost:8080"
	DefaultUnbrandedURL = "http://localhost:8080"
	DefaultEmbedURL     = "http://localhost:8080/embed"
	DefaultBaseURL      = "http://localhost:8080"
	DefaultSourceName   = "Service"
)

// manifestVersion is the version of the manifest format this package writes.
const manifestVersion = 1

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

	mu       sync.Mutex // guards manifest, entryJSON, savedSum, reserved and folders
	manifest site.Manifest
	// entryJSON caches the JSON member `"id":{entry}` of each manifest
	// entry, so that saving the manifest after one guide's export encodes
	// that guide only; savedSum
	// is the SHA-256 of the manifest file as last read or written.
	entryJSON map[string][]byte
	savedSum  [sha256.Size]byte
	reserved  map[string]string // id or guide id claimed by an export in flight -> guide id
	folders   map[string]*sync.Mutex
}

// New returns an Exporter for cfg, reading the manifest of earlier exports
// from the private tree. It returns an error when a required file system
// is missing, an encoding is unknown, or the manifest cannot be read or
// decoded.
func New(cfg Config) (*Exporter, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("exporter: %w", err)
	}
	def := func(s *string, v string) {
		if *s == "" {
			*s = v
		}
	}
	def(&cfg.ViewURL, DefaultViewURL)
	def(&cfg.UnbrandedURL, DefaultUnbrandedURL)
	def(&cfg.EmbedURL, DefaultEmbedURL)
	def(&cfg.BaseURL, DefaultBaseURL)
	def(&cfg.SourceName, DefaultSourceName)
	if cfg.Encodings == nil {
		cfg.Encodings = site.Encodings
	}
	if cfg.Jobs <= 0 {
		cfg.Jobs = runtime.NumCPU()
	}
	cfg.Clock = clock.Or(cfg.Clock)
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	comp, err := NewCompressor()
	if err != nil {
		return nil, fmt.Errorf("exporter: %w", err)
	}
	e := &Exporter{
		cfg:       cfg,
		urls:      urls{View: cfg.ViewURL, Unbranded: cfg.UnbrandedURL, Embed: cfg.EmbedURL, Base: cfg.BaseURL},
		pub:       tree{fs: cfg.Out, root: cfg.OutDir, perm: 0o644},
		priv:      tree{fs: cfg.Private, root: cfg.PrivateDir, perm: 0o600},
		comp:      comp,
		cpu:       make(chan struct{}, cfg.Jobs),
		reserved:  map[string]string{},
		folders:   map[string]*sync.Mutex{},
		entryJSON: map[string][]byte{},
	}
	var names []string
	for _, enc := range cfg.Encodings {
		names = append(names, enc.Name)
	}
	e.settings = strings.Join([]string{"v1", cfg.ViewURL, cfg.UnbrandedURL, cfg.EmbedURL, cfg.BaseURL, cfg.SourceName, strings.Join(names, ",")}, "\x00")
	if err := e.loadManifest(); err != nil {
		return nil, err
	}
	return e, nil
}

// manifestName is the private-tree name of this exporter's manifest.
func (e *Exporter) manifestName() string { return ManifestName(e.cfg.Shard, e.cfg.Shards) }

// loadManifest reads the manifest; a missing one is an empty manifest.
func (e *Exporter) loadManifest() error {
	e.manifest = site.Manifest{Version: manifestVersion, Guides: map[string]site.ManifestGuide{}}
	data, err := e.priv.read(e.manifestName())
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("exporter: read manifest: %w", err)
	}
	var m site.Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("exporter: manifest %s: %w", e.priv.abs(e.manifestName()), err)
	}
	if m.Version != manifestVersion {
		return fmt.Errorf("exporter: manifest %s has version %d, want %d", e.priv.abs(e.manifestName()), m.Version, manifestVersion)
	}
	if m.Guides == nil {
		m.Guides = map[string]site.ManifestGuide{}
	}
	e.manifest = m
	clear(e.entryJSON)
	e.savedSum = sha256.Sum256(data)
	return nil
}

// setEntry records the manifest entry of guide id. The caller holds e.mu.
func (e *Exporter) setEntry(id string, entry site.ManifestGuide) {
	e.manifest.Guides[id] = entry
	delete(e.entryJSON, id)
}

// deleteEntry drops guide id from the manifest. The caller holds e.mu.
func (e *Exporter) deleteEntry(id string) {
	delete(e.manifest.Guides, id)
	delete(e.entryJSON, id)
}

// saveManifest writes the manifest atomically unless the file already
// holds it. The caller holds e.mu.
func (e *Exporter) saveManifest() error {
	data, err := e.encodeManifest()
	if err != nil {
		return err
	}
	sum := sha256.Sum256(data)
	if sum == e.savedSum && e.priv.exists(e.manifestName()) {
		return nil
	}
	if err := e.priv.write(e.manifestName(), data); err != nil {
		return fmt.Errorf("save manifest: %w", err)
	}
	e.savedSum = sum
	return nil
}

// encodeManifest returns the bytes marshalJSON(e.manifest) would return,
// assembled from the cached `"id":{entry}` JSON of each guide:
// encoding/json writes a map's entries sorted by key, and so does this. The
// caller holds e.mu.
func (e *Exporter) encodeManifest() ([]byte, error) {
	ids := slices.Sorted(maps.Keys(e.manifest.Guides))
	size := 64
	for _, id := range ids {
		if _, ok := e.entryJSON[id]; !ok {
			key, err := marshalJSON(id)
			if err != nil {
				return nil, err
			}
			entry, err := marshalJSON(e.manifest.Guides[id])
			if err != nil {
				return nil, err
			}
			member := append(bytes.TrimSuffix(key, []byte("\n")), ':')
			e.entryJSON[id] = append(member, bytes.TrimSuffix(entry, []byte("\n"))...)
		}
		size += len(e.entryJSON[id]) + 1
	}
	buf := make([]byte, 0, size)
	buf = fmt.Appendf(buf, `{"version":%d,"guides":{`, e.manifest.Version)
	for i, id := range ids {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, e.entryJSON[id]...)
	}
	return append(buf, "}}\n"...), nil
}

// Manifest returns a copy of what the exporter has published.
func (e *Exporter) Manifest() site.Manifest {
	e.mu.Lock()
	defer e.mu.Unlock()
	m := site.Manifest{Version: e.manifest.Version, Guides: make(map[string]site.ManifestGuide, len(e.manifest.Guides))}
	for k, v := range e.manifest.Guides {
		m.Guides[k] = v
	}
	return m
}

// GuideResult is the outcome of exporting or removing one bundle.
type GuideResult struct {
	Folder, GuideID string
	Revision        string    // site.GuideRecord.Revision
	Changed         bool      // some published byte (public or private) changed
	Ready           bool      // default view ready: site.EventPath written
	NextChange      time.Time // earliest future expiresAt of its views (zero if none): re-export then
	Views           int       // views published (the alias not counted)
	Written         int       // files written
	Unchanged       int       // files already up to date
	Deleted         int       // files deleted
	Bytes           int64     // bytes written
	Err             error     // *bundle.Error when rejected; an I/O error otherwise
}

// Report sums up an ExportAll run.
type Report struct {
	Guides                                       []GuideResult // by folder name
	Views, Written, Unchanged, Deleted, Rejected int
	Bytes                                        int64
	Duration                                     time.Duration
}

// Summary returns one line: guides exported and views, files written,
// unchanged and deleted, guides removed, bundles rejected, bytes written
// and seconds taken.
func (r *Report) Summary() string {
	exported, removed, failed := 0, 0, 0
	for _, g := range r.Guides {
		switch {
		case g.Err != nil:
			failed++
		case g.Views == 0:
			removed++
		default:
			exported++
		}
	}
	s := fmt.Sprintf("exported %d guides, %d views: %d files written, %d unchanged, %d deleted; %d guides removed, %d rejected",
		exported, r.Views, r.Written, r.Unchanged, r.Deleted, removed, r.Rejected)
	if other := failed - r.Rejected; other > 0 {
		s += fmt.Sprintf(", %d failed", other)
	}
	return s + fmt.Sprintf("; %s written in %.2fs", formatBytes(r.Bytes), r.Duration.Seconds())
}

func (r *Report) add(g GuideResult) {
	r.Guides = append(r.Guides, g)
	var be *bundle.Error
	if errors.As(g.Err, &be) {
		r.Rejected++
	}
	r.Views += g.Views
	r.Written += g.Written
	r.Unchanged += g.Unchanged
	r.Deleted += g.Deleted
	r.Bytes += g.Bytes
}

// formatBytes prints n with a binary unit.
func formatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// folderLock returns the mutex serializing exports of folder.
func (e *Exporter) folderLock(folder string) *sync.Mutex {
	e.mu.Lock()
	defer e.mu.Unlock()
	m, ok := e.folders[folder]
	if !ok {
		m = &sync.Mutex{}
		e.folders[folder] = m
	}
	return m
}

// checkFolder returns an error unless folder is a plain folder name.
func checkFolder(folder string) error {
	if folder == "" || strings.ContainsAny(folder, `/\`) || strings.HasPrefix(folder, ".") {
		return fmt.Errorf("invalid bundle folder name %q", folder)
	}
	return nil
}

// load loads the bundle in folder.
func (e *Exporter) load(folder string) (*bundle.Bundle, error) {
	return bundle.Load(e.cfg.Src, filepath.Join(e.cfg.SrcDir, folder))
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
	e.mu.Lock()
	problems := e.claim(folder, &b.Guide, e.aliveOnDisk)
	e.mu.Unlock()
	if len(problems) > 0 {
		err := &bundle.Error{Folder: folder, Problems: problems}
		res.Err = err
		return res, err
	}
	*res = e.publishClaimed(ctx, b)
	e.mu.Lock()
	defer e.mu.Unlock()
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
	e.mu.Lock()
	var ids []string
	for id, mg := range e.manifest.Guides {
		if mg.Folder == folder {
			ids = append(ids, id)
		}
	}
	e.mu.Unlock()
	for _, id := range ids {
		r, err := e.unpublish(id)
		res.GuideID, res.Deleted, res.Changed = id, res.Deleted+r.Deleted, res.Changed || r.Changed
		if err != nil {
			res.Err = err
			break
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.saveManifest(); err != nil && res.Err == nil {
		res.Err = err
	}
	e.logResult(*res)
	return res, res.Err
}

// unpublish deletes every file of the published guide id and drops it from
// the manifest (the caller saves it).
func (e *Exporter) unpublish(id string) (GuideResult, error) {
	e.mu.Lock()
	mg, ok := e.manifest.Guides[id]
	e.mu.Unlock()
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
	e.mu.Lock()
	e.deleteEntry(id)
	e.mu.Unlock()
	return res, nil
}

// privateKeep are the private folders that stay when they become empty.
var privateKeep = map[string]bool{site.GuidesDir: true}

// logResult logs a changed or failed guide.
func (e *Exporter) logResult(r GuideResult) {
	switch {
	case r.Err != nil:
		e.cfg.Logger.Warn("bundle not exported", "folder", r.Folder, "err", r.Err)
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

// publicIDs returns the top-level public folders guide g claims: its view
// ids and its alias.
func publicIDs(g *bundle.Guide) []string {
	ids := make([]string, 0, len(g.Views)+1)
	for _, v := range g.Views {
		ids = append(ids, v.ViewID)
	}
	if g.Alias != "" && !contains(ids, g.Alias) {
		ids = append(ids, g.Alias)
	}
	return ids
}

func contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

// claim checks that the guide id, view ids and alias of g (in folder) belong to no
// other published guide (or one in flight) and reserves them. A holder
// whose folder no longer holds it (alive false) gives way. It returns the
// problems that reject g. The caller holds e.mu.
func (e *Exporter) claim(folder string, g *bundle.Guide, alive func(folder, guideID string) bool) []bundle.Problem {
	file := folder + "/" + bundle.FileName
	var problems []bundle.Problem
	holder := func(id string) (string, string) { // guide id and folder holding id, "" if free
		if gid, ok := e.reserved[id]; ok && gid != g.GuideID {
			return gid, e.reserved["guide:"+gid]
		}
		for gid, mg := range e.manifest.Guides {
			if gid == g.GuideID {
				continue
			}
			if contains(mg.Ids, id) && mg.Folder != folder && alive(mg.Folder, gid) {
				return gid, mg.Folder
			}
		}
		return "", ""
	}
	if mg, ok := e.manifest.Guides[g.GuideID]; ok && mg.Folder != folder && alive(mg.Folder, g.GuideID) {
		problems = append(problems, bundle.Problem{File: file, Path: "$.guideId",
			Message: fmt.Sprintf("guide id %q is already published by bundle %q", g.GuideID, mg.Folder)})
	} else if owner, ok := e.reserved["guide:"+g.GuideID]; ok && owner != folder {
		problems = append(problems, bundle.Problem{File: file, Path: "$.guideId",
			Message: fmt.Sprintf("guide id %q is already claimed by bundle %q", g.GuideID, owner)})
	}
	for i, v := range g.Views {
		if gid, folder := holder(v.ViewID); gid != "" {
			problems = append(problems, bundle.Problem{File: file, Path: fmt.Sprintf("$.views[%d].viewId", i),
				Message: fmt.Sprintf("view id %q is already published by guide %q (bundle %q)", v.ViewID, gid, folder)})
		}
	}
	if g.Alias != "" {
		if gid, folder := holder(g.Alias); gid != "" {
			problems = append(problems, bundle.Problem{File: file, Path: "$.alias",
				Message: fmt.Sprintf("alias %q is already published by guide %q (bundle %q)", g.Alias, gid, folder)})
		}
	}
	if len(problems) > 0 {
		return problems
	}
	e.reserved["guide:"+g.GuideID] = folder
	for _, id := range publicIDs(g) {
		e.reserved[id] = g.GuideID
	}
	return nil
}

// release drops the reservations of guide g. The caller holds e.mu.
func (e *Exporter) release(g *bundle.Guide) {
	delete(e.reserved, "guide:"+g.GuideID)
	for _, id := range publicIDs(g) {
		if e.reserved[id] == g.GuideID {
			delete(e.reserved, id)
		}
	}
}

// publishClaimed publishes b, whose ids are reserved, and records it in the
// manifest (not saved). A guide the folder published before under another
// guide id is removed afterwards.
func (e *Exporter) publishClaimed(ctx context.Context, b *bundle.Bundle) GuideResult {
	g := &b.Guide
	e.mu.Lock()
	old, hadOld := e.manifest.Guides[g.GuideID]
	var stale []string
	for id, mg := range e.manifest.Guides {
		if mg.Folder == b.Folder && id != g.GuideID {
			stale = append(stale, id)
		}
	}
	e.mu.Unlock()
	var oldp *site.ManifestGuide
	if hadOld {
		oldp = &old
	}
	res, entry, err := e.publish(ctx, b, oldp)
	e.mu.Lock()
	if err == nil {
		e.setEntry(g.GuideID, entry)
	}
	e.release(g)
	e.mu.Unlock()
	if err != nil {
		res.Err = fmt.Errorf("export %s: %w", b.Folder, err)
		return res
	}
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

// idsOnly returns a copy of g with only what claims need: the guide id,
// the alias and the view ids.
func idsOnly(g *bundle.Guide) *bundle.Guide {
	out := &bundle.Guide{GuideID: g.GuideID, Alias: g.Alias, Views: make([]bundle.View, len(g.Views))}
	for i, v := range g.Views {
		out.Views[i] = bundle.View{ViewID: v.ViewID}
	}
	return out
}

// sameIDs reports whether a and b claim the same ids.
func sameIDs(a, b *bundle.Guide) bool {
	return a.GuideID == b.GuideID && slices.Equal(publicIDs(a), publicIDs(b))
}

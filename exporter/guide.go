package exporter

// The way of one guide, from top to bottom: ExportBundle checks and locks
// the folder, loads the bundle, claims its ids, and publishClaimed
// publishes it: publish skips a guide whose inputs did not change
// (fingerprint, upToDate), else renders every file (render), writes them
// (putAll, putRecord, deleteStale, in write.go, which counts each file
// written or deleted), and writes the guide's record (recordExport);
// published then records it in memory and releases its claims.
// RemoveBundle and unpublish undo it. ExportAll (all.go) runs the same
// steps for every folder.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/exporter/media"
	"github.com/guidepub/guidepub/site"
)

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

// claim checks and reserves the ids of guide g in folder (see
// claims.claim) and returns the *bundle.Error that rejects g, or nil.
func (e *Exporter) claim(folder string, g *bundle.Guide, alive alive) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if problems := e.claims.claim(folder, g, e.records, alive); len(problems) > 0 {
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

// publishClaimed publishes b, whose ids are claimed, and records it (its
// record file, then in memory). A guide the folder published before under another
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
		res.Changes = append(res.Changes, r.Changes...)
		res.Changed = res.Changed || r.Changed
		if err != nil {
			res.Err = err
			break
		}
	}
	return res
}

// publish writes every file of b that differs from what is published,
// deletes the files old published that b no longer does, and returns the
// result and the new manifest entry. When b's fingerprint equals old's and
// all of old's files exist, nothing is rendered or written. On an error
// some files may have been replaced by their new versions, never by a
// partial one; old's files that b no longer publishes are deleted only
// after everything else was written.
func (e *Exporter) publish(ctx context.Context, b *bundle.Bundle, old *site.ManifestGuide) (GuideResult, site.ManifestGuide, error) {
	g := &b.Guide
	now := e.cfg.Clock.Now()
	res := GuideResult{Folder: b.Folder, GuideID: g.GuideID, Views: len(g.Views)}
	res.Ready, res.NextChange = guideStatus(b, now)
	inputs := namedFiles(g)
	fp, err := e.fingerprint(b.Dir, b.Raw, inputs)
	if err != nil {
		return res, site.ManifestGuide{}, fmt.Errorf("bundle %s: %w", b.Folder, err)
	}
	// fp covers guide.json, which names the inputs: the same fingerprint
	// means the same inputs, so it is compared as it is, not taken again.
	if old != nil && old.Folder == b.Folder && e.mayBeUpToDate(old, now) && e.sameOutput(old, fp) {
		return unchangedResult(b.Folder, g.GuideID, old), *old, nil
	}
	p, err := e.render(b, now)
	if err != nil {
		return res, site.ManifestGuide{}, err
	}
	if err := e.beginWrite(); err != nil {
		return res, site.ManifestGuide{}, err
	}
	finished := false
	defer func() { e.endWrite(finished) }()
	w := &guideWriter{e: e, res: &res}
	if err := w.putStylesheet(); err != nil { // before the pages that link it
		return res, site.ManifestGuide{}, err
	}
	if err := w.putAll(ctx, b, p.files); err != nil {
		return res, site.ManifestGuide{}, err
	}
	res.Revision = w.revision()
	if err := w.putRecord(g, p.ready); err != nil {
		return res, site.ManifestGuide{}, err
	}
	slices.Sort(w.public)
	slices.Sort(w.private)
	if err := w.deleteStale(old); err != nil {
		return res, site.ManifestGuide{}, err
	}
	res.Changed = res.Written > 0 || res.Deleted > 0
	if res.Changed {
		// Once per guide, before the record names its new files: see
		// durable.go.
		if err := w.e.pub.syncFolders(w.public); err != nil {
			return res, site.ManifestGuide{}, err
		}
		if err := w.e.priv.syncFolders(w.private); err != nil {
			return res, site.ManifestGuide{}, err
		}
	}
	entry := site.ManifestGuide{Folder: b.Folder, Revision: res.Revision, Ids: p.ids, Files: w.public, Private: w.private,
		Source: fp, Inputs: inputs, Views: res.Views, Ready: res.Ready}
	if !res.NextChange.IsZero() {
		next := res.NextChange
		entry.NextChange = &next
	}
	if err := w.recordExport(g.GuideID, entry, old != nil); err != nil {
		return res, site.ManifestGuide{}, err
	}
	finished = true
	return res, entry, nil
}

// guideStatus fills the parts of a result that need no rendering.
func guideStatus(b *bundle.Bundle, now time.Time) (ready bool, next time.Time) {
	g := &b.Guide
	if def := g.DefaultView(); def != nil {
		ready = ViewStatus(g, def, now) == site.StatusReady
	}
	for _, v := range g.Views {
		if v.ExpiresAt != nil && !v.Locked && v.ExpiresAt.After(now) && (next.IsZero() || v.ExpiresAt.Before(next)) {
			next = *v.ExpiresAt
		}
	}
	return ready, next
}

// fingerprint returns the hash of what the output of a bundle depends on,
// time aside: the settings, guide.json (raw) and the size and modification
// time of every input file (inputs, relative to the bundle folder dir). It
// returns an error when an input cannot be examined. Time matters only at
// a view's expiry, which the manifest keeps as NextChange.
func (e *Exporter) fingerprint(dir string, raw []byte, inputs []string) (string, error) {
	h := sha256.New()
	h.Write([]byte(e.settings))
	h.Write([]byte{0})
	h.Write(raw)
	h.Write([]byte{0})
	for _, rel := range inputs {
		// rel was checked by bundle.Load: a clean path inside the bundle.
		fi, err := e.cfg.Src.Stat(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			return "", err
		}
		h.Write([]byte(rel + "\x00" + strconv.FormatInt(fi.Size(), 10) + "\x00" + strconv.FormatInt(fi.ModTime().UnixNano(), 10) + "\x00"))
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// upToDate reports whether the published guide mg needs no export at now:
// its inputs are as they were (same fingerprint), no view expired since,
// and every file it published still exists. raw is the guide.json now in
// the bundle folder dir.
func (e *Exporter) upToDate(mg *site.ManifestGuide, dir string, raw []byte, now time.Time) bool {
	if !e.mayBeUpToDate(mg, now) {
		return false
	}
	fp, err := e.fingerprint(dir, raw, mg.Inputs)
	return err == nil && e.sameOutput(mg, fp)
}

// mayBeUpToDate reports whether mg has a fingerprint and no view of it
// expired since it was exported, so that comparing fingerprints is worth
// it.
func (e *Exporter) mayBeUpToDate(mg *site.ManifestGuide, now time.Time) bool {
	return mg.Source != "" && (mg.NextChange == nil || now.Before(*mg.NextChange))
}

// sameOutput reports whether fp, the fingerprint of the bundle now, is
// mg's and every file mg published is still there as it was written.
func (e *Exporter) sameOutput(mg *site.ManifestGuide, fp string) bool {
	return fp == mg.Source && e.allExist(mg) && (!e.verifying() || e.encodingsAgree(mg))
}

// unchangedResult is the result of a guide found up to date.
func unchangedResult(folder, guideID string, mg *site.ManifestGuide) GuideResult {
	r := GuideResult{Folder: folder, GuideID: guideID, Revision: mg.Revision, Ready: mg.Ready, Views: mg.Views,
		Unchanged: len(mg.Files) + len(mg.Private)}
	if mg.NextChange != nil {
		r.NextChange = *mg.NextChange
	}
	return r
}

// namedFiles lists every file guide.json names, sorted, once each.
func namedFiles(g *bundle.Guide) []string {
	var out []string
	for _, p := range g.Media.Photos {
		out = append(out, p.File)
		if p.Small != nil {
			out = append(out, p.Small.File)
		}
	}
	if bi := g.Media.BannerImage; bi != nil {
		out = append(out, bi.File)
	}
	for _, lang := range sortedKeys(g.Media.Documents) {
		d := g.Media.Documents[lang]
		out = append(out, d.Files()...)
	}
	for _, v := range g.Views {
		for _, d := range v.Plans {
			out = append(out, d.Files()...)
		}
	}
	out = slices.DeleteFunc(out, func(s string) bool { return s == "" })
	slices.Sort(out)
	return slices.Compact(out)
}

// allExist reports whether every file of a manifest entry still exists.
func (e *Exporter) allExist(mg *site.ManifestGuide) bool {
	for _, p := range mg.Files {
		if !e.pub.exists(p) {
			return false
		}
	}
	for _, p := range mg.Private {
		if !e.priv.exists(p) {
			return false
		}
	}
	return true
}

// plan is everything the export of one guide publishes.
type plan struct {
	files      []outFile // public media, documents, private media, event
	ids        []string
	ready      bool
	views      int
	nextChange time.Time
}

// outFile is one file the export of a guide publishes.
type outFile struct {
	private bool   // in the private tree, else the public one
	path    string // slash-separated, relative to the tree
	data    []byte // content, or nil for a copy of src
	src     string // bundle file to copy when data is nil
	doc     bool   // a document: written with compressed siblings
	// format, for a public image or PDF, is its format: it is stripped
	// of private metadata rather than copied (images.go).
	format media.Format
	width  int // a rendition of src this wide (images.go)
}

// render renders every file guide b publishes at now.
func (e *Exporter) render(b *bundle.Bundle, now time.Time) (*plan, error) {
	g := &b.Guide
	def := g.DefaultView()
	if def == nil {
		return nil, fmt.Errorf("guide %s has no default view", g.GuideID)
	}
	r := &renderer{g: g, media: b.Media, urls: e.urls, sourceName: e.cfg.SourceName, now: now}
	p := &plan{ids: publicIDs(g), views: len(g.Views)}
	var mediaFiles, docs []outFile
	addView := func(folder string, vd viewDocs, withMedia bool) {
		for _, name := range site.Documents {
			if data, ok := vd.Docs[name]; ok {
				docs = append(docs, outFile{path: site.ViewFile(folder, name), data: data, doc: true})
			}
		}
		if withMedia {
			for _, m := range vd.Media {
				mediaFiles = append(mediaFiles, mediaFile(b, site.MediaFile(folder, m.Dst), m, false))
			}
		}
	}
	for i := range g.Views {
		v := &g.Views[i]
		first := len(docs)
		vd, err := r.renderView(v)
		if err != nil {
			return nil, fmt.Errorf("render view %s: %w", v.ViewID, err)
		}
		addView(v.ViewID, vd, true)
		ids := []string{v.ViewID}
		if v == def && g.Alias != "" && g.Alias != v.ViewID {
			// The alias serves the default view's documents; they link to
			// the view's own media, so the alias needs no media copies.
			addView(g.Alias, vd, false)
			ids = append(ids, g.Alias)
		}
		pages, err := r.renderPages(&vd.built, ids)
		if err != nil {
			return nil, fmt.Errorf("render view %s: %w", v.ViewID, err)
		}
		docs = append(docs, pages...)
		// Checked view by view, so that a huge guide is rejected after
		// rendering one view, not all of them.
		if problems := e.tooLarge(b.Folder, docs[first:]); len(problems) > 0 {
			return nil, &bundle.Error{Folder: b.Folder, Problems: problems}
		}
		if v.ExpiresAt != nil && !v.Locked && v.ExpiresAt.After(now) &&
			(p.nextChange.IsZero() || v.ExpiresAt.Before(p.nextChange)) {
			p.nextChange = *v.ExpiresAt
		}
	}
	p.files = append(mediaFiles, docs...)
	if err := checkPublic(g, now, p.files); err != nil {
		return nil, fmt.Errorf("guide %s: %w", g.GuideID, err)
	}
	if ViewStatus(g, def, now) == site.StatusReady {
		p.ready = true
		ev, priv := r.event(def)
		data, err := marshalJSON(ev)
		if err != nil {
			return nil, fmt.Errorf("render event: %w", err)
		}
		for _, m := range priv {
			p.files = append(p.files, mediaFile(b, site.PrivateDocPath(g.GuideID, m.Dst), m, true))
		}
		p.files = append(p.files, outFile{private: true, path: site.EventPath(g.GuideID), data: data})
	}
	// The record is written after the others, with a revision of fixed
	// length.
	rec, err := marshalJSON(guideRecord(g, strings.Repeat("0", revisionLen), p.ready))
	if err != nil {
		return nil, fmt.Errorf("render record: %w", err)
	}
	private := append(p.files[len(mediaFiles)+len(docs):len(p.files):len(p.files)], outFile{private: true, path: site.RecordPath(g.GuideID), data: rec})
	if problems := e.tooLarge(b.Folder, private); len(problems) > 0 {
		return nil, &bundle.Error{Folder: b.Folder, Problems: problems}
	}
	return p, nil
}

// tooLarge returns a problem for every file of files, rendered for the
// bundle in folder, larger than the limit of one file
// (Limits.DocumentBytes): documents, view pages, the ready event, the
// record. Media (no data: copies of the bundle's files) are not held to it.
func (e *Exporter) tooLarge(folder string, files []outFile) []bundle.Problem {
	max := e.cfg.Limits.WithDefaults().DocumentBytes
	var problems []bundle.Problem
	for _, f := range files {
		if f.data == nil || len(f.data) <= max {
			continue
		}
		name := f.path
		if f.private {
			name += " (private)"
		}
		problems = append(problems, bundle.Problem{File: folder + "/" + bundle.FileName,
			Message: fmt.Sprintf("the file %s would be %s, more than the limit of %s for one file (raise it with --max-document-size)",
				name, formatBytes(int64(len(f.data))), formatBytes(int64(max)))})
	}
	return problems
}

// recordExport writes the exporter's record of guide id (entry, with the
// hash and stamp of each public file; see Records), after every file of
// the guide was written and before the records in memory change. The
// hashes of the files written are those taken as they were written; hadOld
// says whether the guide had a record, whose hashes are reused for the
// other files when their stamp did not change.
func (w *guideWriter) recordExport(id string, entry site.ManifestGuide, hadOld bool) error {
	var old *record
	if hadOld {
		old, _ = w.e.records.recordOf(id) // unreadable: every hash not known is read again
	}
	public, err := describe(w.e.pub, entry.Files, w.digests, old)
	if err != nil {
		return err
	}
	return w.e.records.write(newRecord(id, entry, public))
}

// published records entry as the entry of g (nil: the export failed and
// the entry stays as it was) and releases g's claims. The record file was
// written before.
func (e *Exporter) published(g *bundle.Guide, entry *site.ManifestGuide) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if entry != nil {
		e.records.set(g.GuideID, *entry)
	}
	e.claims.release(g)
}

// finish logs res and returns it with its error.
func (e *Exporter) finish(res *GuideResult) (*GuideResult, error) {
	e.logResult(*res)
	return res, res.Err
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

// RemoveBundle unpublishes what folder published: every public and
// private file of its guide. A folder that published nothing gives a zero
// result. It returns an error when a file cannot be deleted.
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
		res.Changes = append(res.Changes, r.Changes...)
		if err != nil {
			res.Err = err
			break
		}
	}
	return e.finish(res)
}

// unpublish deletes every file of the published guide id, except those
// under an id another guide publishes now (the guide a folder holds after
// its guideId changed, see claims.claim), then its record, and drops it
// from the records, which frees its ids.
func (e *Exporter) unpublish(id string) (GuideResult, error) {
	mg, ok := e.entry(id)
	res := GuideResult{Folder: mg.Folder, GuideID: id}
	if !ok {
		return res, nil
	}
	for _, p := range mg.Files {
		if e.records.ownedByOther(p, id) {
			continue // the guide its folder holds now took the id over
		}
		if err := removeFile(&res, e.pub, p, nil, true); err != nil {
			return res, err
		}
	}
	for _, p := range mg.Private {
		if err := removeFile(&res, e.priv, p, privateKeep, false); err != nil {
			return res, err
		}
	}
	if err := e.records.delete(id); err != nil {
		return res, err
	}
	res.Changed = res.Deleted > 0
	e.unpublished(id)
	return res, nil
}

// unpublished drops guide id from the records in memory, which frees its
// ids.
func (e *Exporter) unpublished(id string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.records.remove(id)
}

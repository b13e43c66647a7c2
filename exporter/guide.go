package exporter

// The way of one guide, from top to bottom, entering each stage once, in
// order: ExportBundle checks and locks the folder (lockFolder),
// loads the bundle (package bundle), claims its ids (package claims), and
// publishClaimed publishes it: publish skips a guide whose inputs did not
// change (fingerprint, upToDate), else takes its plan (render.Guide),
// writes it (write.Writer.Guide: the files, the guide's record file,
// stale files deleted) and records what was written (records.Records.Save);
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
	"strconv"
	"strings"
	"time"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/exporter/claims"
	"github.com/guidepub/guidepub/exporter/ledger"
	"github.com/guidepub/guidepub/exporter/render"
	"github.com/guidepub/guidepub/exporter/write"
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
	defer e.way.uploads.start()() // ExportAll gives way meanwhile
	defer e.lockFolder(folder)()
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
	if err := e.claim(folder, claims.IDsOf(&b.Guide), e.aliveOnDisk); err != nil {
		res.Err = err
		return res, err
	}
	*res = e.publishClaimed(ctx, b, e.cfg.QuickSiblings)
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
// claims.Claims.Claim) and returns the *bundle.Error that rejects g, the
// error of records that could not be read, or nil.
func (e *Exporter) claim(folder string, g claims.IDs, alive claims.Alive) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	problems, err := e.claims.Claim(folder, g, e.records, alive)
	if err != nil {
		return fmt.Errorf("claim the ids of %s: %w", folder, err)
	}
	if len(problems) > 0 {
		return &bundle.Error{Folder: folder, Problems: problems}
	}
	return nil
}

// release drops the claims g holds.
func (e *Exporter) release(g claims.IDs) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.claims.Release(g)
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
// record file, then in memory), with quick siblings when quick (see
// publish). A guide the folder published before under another guide id
// is removed afterwards, once the exporter's records are read.
func (e *Exporter) publishClaimed(ctx context.Context, b *bundle.Bundle, quick bool) GuideResult {
	g := &b.Guide
	old, hadOld, err := e.entry(g.GuideID)
	if err != nil {
		// Without the list of what the guide published, its stale files
		// (a photo a new hide removes) could not be deleted: the guide
		// stays as it is until its record can be read.
		e.published(g, nil)
		return GuideResult{Folder: b.Folder, GuideID: g.GuideID, Err: fmt.Errorf("export %s: %w", b.Folder, err)}
	}
	var oldp *site.ManifestGuide
	if hadOld {
		oldp = &old
	}
	res, entry, err := e.publish(ctx, b, oldp, quick)
	if err != nil {
		e.published(g, nil)
		res.Err = fmt.Errorf("export %s: %w", b.Folder, err)
		return res
	}
	e.published(g, &entry)
	if !e.records.Loaded() {
		// Which guides the folder published before needs every record:
		// ExportAll, which runs once they are read (Start), unpublishes
		// those it no longer holds.
		return res
	}
	for _, id := range e.publishedIn(b.Folder, g.GuideID) {
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
// after everything else was written, unless the export changes what the
// views show and fails half-way: then every public file of old it did
// not reach is deleted (write.Writer.Guide). With quick, the siblings of changed
// documents are quick ones (write.Writer.Guide) and the result's
// NextChange is now, so that the guide's next export, soon, finishes
// them; a guide with quick siblings is never up to date.
func (e *Exporter) publish(ctx context.Context, b *bundle.Bundle, old *site.ManifestGuide, quick bool) (GuideResult, site.ManifestGuide, error) {
	g := &b.Guide
	now := e.cfg.Clock.Now()
	res := GuideResult{Folder: b.Folder, GuideID: g.GuideID, Views: len(g.Views)}
	res.Ready, res.NextChange = render.Status(b, now)
	inputs := render.NamedFiles(g)
	fp, err := e.fingerprint(b.Dir, b.Raw, inputs)
	if err != nil {
		return res, site.ManifestGuide{}, fmt.Errorf("bundle %s: %w", b.Folder, err)
	}
	// fp covers guide.json, which names the inputs: the same fingerprint
	// means the same inputs, so it is compared as it is, not taken again.
	if old != nil && old.Folder == b.Folder && e.mayBeUpToDate(old, now) && e.sameOutput(g.GuideID, old, fp) {
		return unchangedResult(b.Folder, g.GuideID, old, len(old.Files)+len(old.Private)), *old, nil
	}
	pace := pace(quick, old, fp, func() string { return render.Visibility(g, now) })
	switch pace {
	case write.Quick:
		defer e.way.changed.start()() // Finishing exports give way meanwhile
	case write.Finishing:
		release, ok := e.way.finishing()
		if !ok {
			return e.gaveWay(res, *old, now), *old, nil
		}
		defer release()
	}
	p, err := render.Guide(b, e.plan, now)
	if err != nil {
		return res, site.ManifestGuide{}, err
	}
	if err := e.w.Begin(); err != nil {
		return res, site.ManifestGuide{}, err
	}
	finished := false
	defer func() { e.w.End(finished) }()
	var prior ledger.Guide
	if old != nil {
		// Unreadable: no file is known, every one is checked the ordinary way.
		prior, _ = e.records.Ledger(g.GuideID)
	}
	out, err := e.w.Guide(ctx, b, p, old, prior, pace)
	res.addCounts(out.Counts)
	res.Revision, res.Changed = out.Revision, out.Changed
	if errors.Is(err, write.ErrGaveWay) {
		finished = true // what it wrote is whole; the record stays as it was
		return e.gaveWay(res, *old, now), *old, nil
	}
	if err != nil {
		return res, site.ManifestGuide{}, err
	}
	e.way.done(g.GuideID)
	res.Quick = len(out.Quick)
	res.Recompressed = old != nil && len(old.Quick) > 0 && old.Revision == out.Revision
	entry := site.ManifestGuide{Folder: b.Folder, Revision: res.Revision, Ids: p.IDs, Files: out.Public, Private: out.Private,
		Source: fp, Inputs: inputs, Views: res.Views, Ready: res.Ready, Quick: out.Quick, Visibility: p.Visibility}
	if !res.NextChange.IsZero() {
		next := res.NextChange
		entry.NextChange = &next
	}
	if err := e.records.Save(e.w.Public(), e.w.Private(), g.GuideID, &entry, &out, old != nil); err != nil {
		return res, site.ManifestGuide{}, err
	}
	finished = true
	if res.Quick > 0 {
		res.NextChange = now
	}
	return res, entry, nil
}

// gaveWay records that the Finishing export of res's guide did not start
// or stopped to give way (giveway.go) and returns res as old, the guide's
// record, still describes it: its quick siblings to be finished later.
func (e *Exporter) gaveWay(res GuideResult, old site.ManifestGuide, now time.Time) GuideResult {
	res.Revision, res.Quick, res.Recompressed = old.Revision, len(old.Quick), true
	if retry := now.Add(e.way.steppedAside(res.GuideID)); res.NextChange.IsZero() || retry.Before(res.NextChange) {
		res.NextChange = retry
	}
	return res
}

// pace returns the pace of an export (see write.Pace): Final unless quick;
// Finishing when the bundle is the one old was exported from (its
// fingerprint fp), its views show what they showed then (visibility, asked
// only then: a view that expired meanwhile is locked at once, not when
// uploads pause) and old has quick siblings: the export that replaces
// them, which gives way to the next upload's.
func pace(quick bool, old *site.ManifestGuide, fp string, visibility func() string) write.Pace {
	switch {
	case !quick:
		return write.Final
	case old != nil && len(old.Quick) > 0 && old.Source == fp && old.Visibility == visibility():
		return write.Finishing
	}
	return write.Quick
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
func (e *Exporter) upToDate(id string, mg *site.ManifestGuide, dir string, raw []byte, now time.Time) bool {
	if !e.mayBeUpToDate(mg, now) {
		return false
	}
	fp, err := e.fingerprint(dir, raw, mg.Inputs)
	return err == nil && e.sameOutput(id, mg, fp)
}

// mayBeUpToDate reports whether mg has a fingerprint and no view of it
// expired since it was exported, so that comparing fingerprints is worth
// it.
func (e *Exporter) mayBeUpToDate(mg *site.ManifestGuide, now time.Time) bool {
	return mg.Source != "" && (mg.NextChange == nil || now.Before(*mg.NextChange))
}

// sameOutput reports whether fp, the fingerprint of the bundle now, is
// mg's (the entry of guide id), mg has no quick siblings to finish and
// every file mg published is still as its ledger recorded it: from the
// ledger's seal in mg (write.Writer.Sealed), or from the ledger itself
// for a record without one (write.Writer.Intact).
func (e *Exporter) sameOutput(id string, mg *site.ManifestGuide, fp string) bool {
	if fp != mg.Source || len(mg.Quick) > 0 {
		return false
	}
	if mg.Seal != "" {
		return e.w.Sealed(mg)
	}
	l, err := e.records.Ledger(id)
	return err == nil && e.w.Intact(mg, l)
}

// unchangedResult is the result of a guide found up to date, whose entry
// (mg, its summary will do) lists files files.
func unchangedResult(folder, guideID string, mg *site.ManifestGuide, files int) GuideResult {
	r := GuideResult{Folder: folder, GuideID: guideID, Revision: mg.Revision, Ready: mg.Ready, Views: mg.Views,
		Unchanged: files}
	if mg.NextChange != nil {
		r.NextChange = *mg.NextChange
	}
	return r
}

// published records entry as the entry of g (nil: the export failed and
// the entry stays as it was) and releases g's claims. The record file was
// written before.
func (e *Exporter) published(g *bundle.Guide, entry *site.ManifestGuide) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if entry != nil {
		e.records.Set(g.GuideID, *entry)
	}
	e.claims.Release(claims.IDsOf(g))
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
	defer e.lockFolder(folder)()
	if err := ctx.Err(); err != nil {
		res.Err = err
		return res, err
	}
	if err := e.Loaded(); err != nil {
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
// its guideId changed, see claims.Claims.Claim), then its record, and drops it
// from the records, which frees its ids.
func (e *Exporter) unpublish(id string) (GuideResult, error) {
	mg, ok, err := e.entry(id)
	res := GuideResult{Folder: mg.Folder, GuideID: id}
	if err != nil {
		// Its files stay, and its record, until the record can be read.
		sum, _ := e.records.Summary(id)
		res.Folder = sum.Folder
		return res, fmt.Errorf("unpublish: %w", err)
	}
	if !ok {
		return res, nil
	}
	var c write.Counts
	// A public file under an id another guide publishes now stays: the
	// guide its folder holds now took the id over.
	err = e.w.Remove(&c, mg, func(p string) bool { return e.records.OwnedByOther(p, id) })
	res.addCounts(c)
	if err != nil {
		return res, err
	}
	if err := e.records.Delete(id); err != nil {
		return res, err
	}
	res.Changed = res.Deleted > 0
	e.unpublished(id)
	return res, nil
}

// unpublished drops guide id from the records in memory, which frees its
// ids.
func (e *Exporter) unpublished(id string) {
	e.way.done(id)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.records.Forget(id)
}

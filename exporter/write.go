package exporter

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/exporter/media"
	"github.com/guidepub/guidepub/site"
)

// outFile is one file the export of a guide publishes.
type outFile struct {
	private bool   // in the private tree, else the public one
	path    string // slash-separated, relative to the tree
	data    []byte // content, or nil for a copy of src
	src     string // bundle file to copy when data is nil
	doc     bool   // a document: written with compressed siblings
	// format, for a public image, is its format: it is stripped of
	// private metadata rather than copied (images.go).
	format media.Format
	width  int // a rendition of src this wide (images.go)
}

// plan is everything the export of one guide publishes.
type plan struct {
	files      []outFile // public media, documents, private media, event
	ids        []string
	ready      bool
	views      int
	nextChange time.Time
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
	var media, docs []outFile
	maxDoc := e.cfg.Limits.WithDefaults().DocumentBytes
	var tooLarge []bundle.Problem
	addView := func(folder string, vd viewDocs, withMedia bool) {
		for _, name := range site.Documents {
			if data, ok := vd.Docs[name]; ok {
				if len(data) > maxDoc {
					tooLarge = append(tooLarge, documentTooLarge(b.Folder, folder, name, len(data), maxDoc))
				}
				docs = append(docs, outFile{path: site.ViewFile(folder, name), data: data, doc: true})
			}
		}
		if withMedia {
			for _, m := range vd.Media {
				media = append(media, mediaFile(b, site.MediaFile(folder, m.Dst), m, false))
			}
		}
	}
	for i := range g.Views {
		v := &g.Views[i]
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
		if v.ExpiresAt != nil && !v.Locked && v.ExpiresAt.After(now) &&
			(p.nextChange.IsZero() || v.ExpiresAt.Before(p.nextChange)) {
			p.nextChange = *v.ExpiresAt
		}
	}
	if len(tooLarge) > 0 {
		return nil, &bundle.Error{Folder: b.Folder, Problems: tooLarge}
	}
	p.files = append(media, docs...)
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
	return p, nil
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
	if mg.Source == "" || (mg.NextChange != nil && !now.Before(*mg.NextChange)) {
		return false
	}
	fp, err := e.fingerprint(dir, raw, mg.Inputs)
	return err == nil && fp == mg.Source && e.allExist(mg) && (!e.verifying() || e.encodingsAgree(mg))
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
	for _, lang := range sortedKeys(g.Media.Documents) {
		d := g.Media.Documents[lang]
		out = append(out, d.Files()...)
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
	if old != nil && old.Folder == b.Folder && e.upToDate(old, b.Dir, b.Raw, now) {
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
	finished = true
	entry := site.ManifestGuide{Folder: b.Folder, Revision: res.Revision, Ids: p.ids, Files: w.public, Private: w.private,
		Source: fp, Inputs: inputs, Views: res.Views, Ready: res.Ready}
	if !res.NextChange.IsZero() {
		next := res.NextChange
		entry.NextChange = &next
	}
	return res, entry, nil
}

// pathSum is a published path with the hash of its content.
type pathSum struct {
	path string
	hash [sha256.Size]byte
}

// putAll publishes files, which b's bundle files are copied from, and
// records the paths they occupy and the hashes of their contents.
func (w *guideWriter) putAll(ctx context.Context, b *bundle.Bundle, files []outFile) error {
	docs := w.prepareDocs(files)
	for i, f := range files {
		if err := ctx.Err(); err != nil {
			return err
		}
		t, prefix := w.e.pub, "public/"
		if f.private {
			t, prefix = w.e.priv, "private/"
		}
		var (
			h       [sha256.Size]byte
			written []string
			err     error
		)
		if f.data == nil {
			// Media are streamed: see media.go.
			h, err = w.putMedia(t, b, f)
			written = []string{f.path}
		} else {
			h = sha256.Sum256(f.data)
			written, err = w.put(t, f, f.data, docs[i])
		}
		if err != nil {
			return err
		}
		w.sums = append(w.sums, pathSum{prefix + f.path, h})
		if f.private {
			w.private = append(w.private, written...)
		} else {
			w.public = append(w.public, written...)
		}
	}
	return nil
}

// revision returns the guide's revision: a hash of every published path
// with the hash of its content (compressed siblings are functions of the
// document and the encodings, which are part of the paths).
func (w *guideWriter) revision() string {
	slices.SortFunc(w.sums, func(a, b pathSum) int { return strings.Compare(a.path, b.path) })
	rh := sha256.New()
	for _, s := range w.sums {
		rh.Write([]byte(s.path))
		rh.Write([]byte{0})
		rh.Write(s.hash[:])
	}
	for _, enc := range w.e.cfg.Encodings {
		rh.Write([]byte(enc.Ext))
	}
	return hex.EncodeToString(rh.Sum(nil))
}

// putRecord publishes the private site.GuideRecord of g, with the
// revision already in the result.
func (w *guideWriter) putRecord(g *bundle.Guide, ready bool) error {
	webhooks := g.Webhooks
	if webhooks == nil {
		webhooks = []site.Webhook{}
	}
	viewIDs := make([]string, len(g.Views))
	for i, v := range g.Views {
		viewIDs[i] = v.ViewID
	}
	rec := site.GuideRecord{GuideID: g.GuideID, OwnerID: g.OwnerID, WorkOrderID: g.WorkOrderID, Alias: g.Alias,
		DefaultViewID: g.DefaultView().ViewID, ViewIDs: viewIDs, Revision: w.res.Revision, Ready: ready, Webhooks: webhooks}
	data, err := marshalJSON(rec)
	if err != nil {
		return err
	}
	f := outFile{private: true, path: site.RecordPath(g.GuideID), data: data}
	written, err := w.put(w.e.priv, f, data, docWrite{})
	if err != nil {
		return err
	}
	w.private = append(w.private, written...)
	return nil
}

// deleteStale deletes the files old published that are no longer among
// the (sorted) paths written.
func (w *guideWriter) deleteStale(old *site.ManifestGuide) error {
	if old == nil {
		return nil
	}
	for _, set := range []struct {
		t    tree
		old  []string
		now  []string
		keep map[string]bool
	}{{w.e.pub, old.Files, w.public, nil}, {w.e.priv, old.Private, w.private, privateKeep}} {
		for _, f := range set.old {
			if _, found := slices.BinarySearch(set.now, f); found {
				continue
			}
			if err := set.t.remove(f, set.keep); err != nil {
				return err
			}
			w.res.Deleted++
		}
	}
	return nil
}

// guideWriter writes the files of one guide and keeps what it wrote.
type guideWriter struct {
	e       *Exporter
	res     *GuideResult
	public  []string  // public paths occupied
	private []string  // private paths occupied
	sums    []pathSum // content hash of each file (not its siblings)
	images  *imageCache
}

// docWrite is what put writes of one document: its compressed siblings
// that are missing or out of date, by encoding name, and whether its
// identity file already holds it.
type docWrite struct {
	siblings map[string]*compression
	same     bool
}

// compression is one document compressed with one encoding.
type compression struct {
	enc  site.Encoding
	data []byte
	z    []byte
	err  error
}

// put publishes f with content data in tree t unless it is there already,
// and returns the paths it now occupies (a document's compressed siblings
// too). A document's siblings come from dw, and are written before the
// document, so a reader who sees the new document finds its new siblings.
func (w *guideWriter) put(t tree, f outFile, data []byte, dw docWrite) ([]string, error) {
	paths := []string{f.path}
	if !f.doc {
		return paths, w.write(t, f.path, data)
	}
	for _, enc := range w.e.cfg.Encodings {
		p := f.path + enc.Ext
		paths = append(paths, p)
		c, ok := dw.siblings[enc.Name]
		if !ok {
			w.res.Unchanged++
			continue
		}
		if c.err != nil {
			return nil, fmt.Errorf("compress %s: %w", f.path, c.err)
		}
		if err := w.write(t, p, c.z); err != nil {
			return nil, err
		}
	}
	if dw.same {
		w.res.Unchanged++
		return paths, nil
	}
	return paths, w.write(t, f.path, data)
}

// write writes data to p unless p already holds exactly data.
func (w *guideWriter) write(t tree, p string, data []byte) error {
	if t.same(p, data) {
		w.res.Unchanged++
		return nil
	}
	if err := t.write(p, data); err != nil {
		return err
	}
	w.res.Written++
	w.res.Bytes += int64(len(data))
	return nil
}

// prepareDocs returns, by index in files, what put writes of each
// document: a sibling is compressed unless the document and that sibling
// are already published. Each distinct document (the alias repeats the
// default view's) is compressed once per encoding, and the compressions
// run in parallel within the Jobs CPU slots, so that one guide's export (a
// watcher's re-export after an upload) uses every slot rather than one.
func (w *guideWriter) prepareDocs(files []outFile) map[int]docWrite {
	type key struct {
		sum [sha256.Size]byte
		enc string
	}
	jobs := map[key]*compression{}
	docs := map[int]docWrite{}
	for i, f := range files {
		if !f.doc {
			continue
		}
		t := w.e.pub
		if f.private {
			t = w.e.priv
		}
		dw := docWrite{siblings: map[string]*compression{}, same: t.same(f.path, f.data)}
		sum := sha256.Sum256(f.data)
		for _, enc := range w.e.cfg.Encodings {
			if dw.same && t.siblingAgrees(f.path, enc, f.data) {
				continue
			}
			k := key{sum, enc.Name}
			if jobs[k] == nil {
				jobs[k] = &compression{enc: enc, data: f.data}
			}
			dw.siblings[enc.Name] = jobs[k]
		}
		docs[i] = dw
	}
	var wg sync.WaitGroup
	for _, c := range jobs {
		wg.Go(func() {
			w.e.cpu <- struct{}{}
			c.z, c.err = w.e.comp.Compress(c.enc, c.data)
			<-w.e.cpu
		})
	}
	wg.Wait()
	return docs
}

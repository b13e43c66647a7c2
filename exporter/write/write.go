package write

import (
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/exporter/ledger"
	"github.com/guidepub/guidepub/exporter/render"
	"github.com/guidepub/guidepub/site"
)

// pathSum is a published path with the hash of its content.
type pathSum struct {
	path string
	hash [sha256.Size]byte
}

// putAll publishes files, which b's bundle files are copied from, and
// records the paths they occupy and the hashes of their contents (sums). Files
// are written in the order of their groups: the plan's stages (a view's
// media, documents and pages, then its status; see render.Plan.Files),
// and within a stage its media, then its documents and pages, so that
// nothing names a file before it is there. The files of one group are
// written writeParallel at a time: each write is flushed to disk before
// it gets its name (durable.go), and flushes made together cost little
// more than one. Renditions are handed out by source: one task writes
// every rendition of a source through its own image cache, so that the
// source is decoded once for all its widths (imagewrite.go), and the
// sources of a guide are decoded in parallel (within the Jobs CPU slots).
func (w *guideWriter) putAll(ctx context.Context, b *bundle.Bundle, files []render.File, old *site.ManifestGuide) error {
	results := make([]putResult, len(files))
	share := &productShare{}
	var wasQuick map[string]bool // the siblings old lists as quick
	if old != nil {
		wasQuick = make(map[string]bool, len(old.Quick))
		for _, p := range old.Quick {
			wasQuick[p] = true
		}
	}
	type groupKey struct {
		stage               int
		private, doc, media bool
	}
	group := func(f render.File) groupKey { return groupKey{f.Stage, f.Private, f.Doc, f.Data == nil} }
	// What was written is counted even when a group fails or the context
	// ends: the result's changes must list every file that changed, or a
	// live publisher would leave the old version in the bucket.
	defer func() {
		for i, f := range files {
			if results[i].ran {
				w.add(f, &results[i])
			}
		}
	}()
	for start := 0; start < len(files); {
		end := start + 1
		for end < len(files) && group(files[end]) == group(files[start]) {
			end++
		}
		// A stage's documents are compressed when its turn comes, so that
		// an early stage (the default view's) does not wait for the
		// compression of the later ones.
		if err := w.giveWay(); err != nil {
			return err
		}
		docs, err := w.prepareDocs(files[start:end], wasQuick, w.pace)
		if err != nil {
			return err
		}
		put := func(i int, images *imageCache) {
			r := &results[i]
			// Its own writer, so the counts need no lock.
			fw := &guideWriter{e: w.e, res: &r.res, images: images, share: share, prior: w.prior}
			r.put(fw, b, files[i], docs[i-start])
		}
		err = runTasks(ctx, w.giveWay, tasksOf(files, start, end), put)
		if err != nil {
			return err
		}
		for i := start; i < end; i++ {
			if err := results[i].err; err != nil {
				return err
			}
		}
		start = end
	}
	return nil
}

// putResult is what putting one file did.
type putResult struct {
	h       [sha256.Size]byte
	written []string
	digests map[string]Digest // of the public files written
	// privDigests are those of the private files written.
	privDigests map[string]Digest
	sources     map[string]ledger.Source
	res         Counts // the counts and changes of this file's writes
	err         error
	ran         bool // put was called
}

// put publishes f through fw (a writer of its own) and keeps the outcome.
func (r *putResult) put(fw *guideWriter, b *bundle.Bundle, f render.File, dw docWrite) {
	r.ran = true
	t := fw.e.pub
	if f.Private {
		t = fw.e.priv
	}
	if f.Data == nil {
		// Media are streamed: see media.go.
		r.h, r.err = fw.putMedia(t, b, f)
		r.written = []string{f.Path}
	} else {
		r.h = sha256.Sum256(f.Data)
		r.written, r.err = fw.put(t, f, f.Data, dw)
	}
	r.digests, r.privDigests = fw.digests, fw.privDigests
	if r.err != nil {
		r.written = nil // what a failed put left is not its new version
	} else {
		r.sources = fw.sources
	}
}

// add adds what putting f did (r) to w's counts, sums, digests and paths.
func (w *guideWriter) add(f render.File, r *putResult) {
	w.res.Written += r.res.Written
	w.res.Unchanged += r.res.Unchanged
	w.res.Bytes += r.res.Bytes
	w.res.Changes = append(w.res.Changes, r.res.Changes...)
	prefix := "public/"
	if f.Private {
		prefix = "private/"
	}
	w.sums = append(w.sums, pathSum{prefix + f.Path, r.h})
	for p, d := range r.digests {
		addDigest(&w.digests, p, d)
	}
	for p, d := range r.privDigests {
		addDigest(&w.privDigests, p, d)
	}
	sources := &w.pubSources
	if f.Private {
		w.private = append(w.private, r.written...)
		sources = &w.privSources
	} else {
		w.public = append(w.public, r.written...)
	}
	for p, src := range r.sources {
		if *sources == nil {
			*sources = map[string]ledger.Source{}
		}
		(*sources)[p] = src
	}
}

// tasksOf returns the files of one group, files[start:end], as tasks of
// indexes run one after the other: one file a task, except renditions,
// whose task is every rendition of one source, in order.
func tasksOf(files []render.File, start, end int) [][]int {
	var tasks [][]int
	bySrc := map[string]int{}
	for i := start; i < end; i++ {
		if files[i].Width == 0 {
			tasks = append(tasks, []int{i})
			continue
		}
		n, ok := bySrc[files[i].Src]
		if !ok {
			n = len(tasks)
			bySrc[files[i].Src] = n
			tasks = append(tasks, nil)
		}
		tasks[n] = append(tasks[n], i)
	}
	return tasks
}

// runTasks runs the tasks writeParallel at a time, each task's files one
// after the other through put with an image cache of the task's own,
// calling before ahead of each task. It returns ctx's error, or before's,
// once the tasks started are done, when ctx ends or before fails before
// every task started.
func runTasks(ctx context.Context, before func() error, tasks [][]int, put func(i int, images *imageCache)) error {
	sem := make(chan struct{}, writeParallel)
	var wg sync.WaitGroup
	defer wg.Wait()
	for _, task := range tasks {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := before(); err != nil {
			return err
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			images := &imageCache{published: map[string]string{}}
			for _, i := range task {
				put(i, images)
			}
		})
	}
	return nil
}

// writeParallel is how many files of one guide are written at once.
const writeParallel = 16

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
	for _, enc := range w.e.encodings {
		rh.Write([]byte(enc.Ext))
	}
	return hex.EncodeToString(rh.Sum(nil))
}

// putRecord publishes the private site.GuideRecord of g at revision.
func (w *guideWriter) putRecord(g *bundle.Guide, revision string, ready bool) error {
	data, err := render.MarshalJSON(render.Record(g, revision, ready))
	if err != nil {
		return err
	}
	f := render.File{Private: true, Path: site.RecordPath(g.GuideID), Data: data}
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
	return errors.Join(w.removeAllBut(w.e.pub, old.Files, w.public, nil),
		w.removeAllBut(w.e.priv, old.Private, w.private, privateKeep))
}

// withdraw deletes the public files old published that this export did
// not put in place (w.public: written, or found holding their new bytes).
// An export that changes what the guide's views show (render.Visibility)
// calls it when it stops half-way: a file it did not reach would keep
// what a view now hides, in the tree and, through the result's changes,
// in the bucket. The guide shows less until an export of it finishes.
func (w *guideWriter) withdraw(old *site.ManifestGuide) error {
	return w.removeAllBut(w.e.pub, old.Files, slices.Sorted(slices.Values(w.public)), nil)
}

// removeAllBut deletes from t the files of olds that are not among now
// (sorted), and the folders they leave empty except keep (removeFile). It
// tries every file and returns the errors of those it could not delete.
func (w *guideWriter) removeAllBut(t Tree, olds, now []string, keep map[string]bool) error {
	var errs []error
	for _, f := range olds {
		if _, found := slices.BinarySearch(now, f); found {
			continue
		}
		if err := removeFile(w.res, t, f, keep, t.Root == w.e.pub.Root); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// removeFile deletes p from t (a missing file is not an error) and the
// folders it leaves empty, except keep, and counts it in res: the one
// place a published file's removal is counted.
func removeFile(res *Counts, t Tree, p string, keep map[string]bool, public bool) error {
	if err := t.Remove(p, keep); err != nil {
		return err
	}
	res.Deleted++
	if public {
		res.Changes = append(res.Changes, FileChange{Path: p, Removed: true})
	}
	return nil
}

// guideWriter writes the files of one guide and keeps what it wrote.
type guideWriter struct {
	e       *Writer
	res     *Counts
	public  []string  // public paths occupied
	private []string  // private paths occupied
	sums    []pathSum // content hash of each file (not its siblings)
	// digests and privDigests are those of the public and private files
	// written, by path; the zero Digest when unknown (see addDigest).
	digests, privDigests map[string]Digest
	images               *imageCache
	share                *productShare // the media products of this export (mediaonce.go)
	srcMade              ledger.Stamp  // the source stamp of the media file last made (putSource)
	prior                ledger.Guide  // the guide's ledger as last recorded (Writer.Guide)
	// sources are what the media files put by this writer are made from,
	// by path (madeFrom); pubSources and privSources gather them by tree.
	sources                 map[string]ledger.Source
	pubSources, privSources map[string]ledger.Source
	quick                   []string // public siblings compressed with quick settings (prepareDocs)
	pace                    Pace     // of the whole export (Writer.Guide)
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
	enc   site.Encoding
	data  []byte
	quick bool // compressed with quick settings (site.Encoding.EncodeQuick)
	z     []byte
	err   error
}

// put publishes f with content data in tree t unless it is there already,
// and returns the paths it now occupies (a document's compressed siblings
// too). A document's siblings come from dw, and are written before the
// document, so a reader who sees the new document finds its new siblings.
func (w *guideWriter) put(t Tree, f render.File, data []byte, dw docWrite) ([]string, error) {
	paths := []string{f.Path}
	if !f.Doc {
		return paths, w.write(t, f.Path, data)
	}
	for _, enc := range w.e.encodings {
		p := f.Path + enc.Ext
		paths = append(paths, p)
		c, ok := dw.siblings[enc.Name]
		if !ok {
			w.res.Unchanged++
			continue
		}
		if c.err != nil {
			return nil, fmt.Errorf("compress %s: %w", f.Path, c.err)
		}
		if err := w.write(t, p, c.z); err != nil {
			return nil, err
		}
	}
	if dw.same {
		w.res.Unchanged++
		return paths, nil
	}
	return paths, w.write(t, f.Path, data)
}

// write writes data to p unless p already holds exactly data. It is the
// one place a document, a compressed sibling or a private file is written
// (media: see media.go and imagewrite.go).
func (w *guideWriter) write(t Tree, p string, data []byte) error {
	if t.same(p, data) {
		w.res.Unchanged++
		return nil
	}
	if err := t.Write(p, data); err != nil {
		return err
	}
	d := Digest{SHA256: sha256.Sum256(data)}
	if w.isPublic(t) {
		d.MD5 = md5.Sum(data)
	}
	w.written(t, p, int64(len(data)), d)
	return nil
}

// isPublic reports whether t is the public tree, whose files the record
// describes (with their MD5 too).
func (w *guideWriter) isPublic(t Tree) bool { return t.Root == w.e.pub.Root }

// Digest is the SHA-256 and MD5 of a file's content, taken as it is
// written (the MD5 of a public file only): the per-guide record keeps
// both (PublicFile), and describe takes them from here rather than
// reading the file again.
type Digest struct {
	SHA256 [sha256.Size]byte
	MD5    [md5.Size]byte
}

// written counts a file written to p of t, n bytes with Digest d: the one
// place every written file (document, sibling, media copy, stripped image,
// rendition, private file) is counted, and a public one listed in the
// result's Changes and its Digest kept for the record.
func (w *guideWriter) written(t Tree, p string, n int64, d Digest) {
	w.res.Written++
	w.res.Bytes += n
	if !w.isPublic(t) {
		addDigest(&w.privDigests, p, d)
		return
	}
	w.res.Changes = append(w.res.Changes, FileChange{Path: p, SHA256: hex.EncodeToString(d.SHA256[:])})
	addDigest(&w.digests, p, d)
}

// addDigest keeps d in *m as the Digest of the file p written. A path
// written twice with different contents keeps none (which write came last
// is not known when they ran in parallel): the record reads that file.
func addDigest(m *map[string]Digest, p string, d Digest) {
	if *m == nil {
		*m = map[string]Digest{}
	}
	if prev, ok := (*m)[p]; ok && prev != d {
		d = Digest{}
	}
	(*m)[p] = d
}

// prepareDocs returns, by index in files, what put writes of each
// document: a sibling is compressed unless the document and that sibling
// are already published (a sibling wasQuick holds, one the previous
// export listed as quick, is not: it is compressed again, finally). At a
// pace other than Final (w's, or Final for the shared files), the siblings of a public document that changed
// are compressed with quick settings and listed in w.quick, and the final
// compressions (of unchanged documents: the finishing of an earlier quick
// export) run one at a time, leaving the other CPU slots to the next
// upload; in a Finishing export each asks first whether to give way (a
// group of which one gave way is not written: ErrGaveWay). Each
// distinct document (the alias repeats the default view's) is compressed
// once per encoding and effort, and the compressions run in parallel
// within the Jobs CPU slots, so that one guide's export (a watcher's
// re-export after an upload) uses every slot rather than one.
func (w *guideWriter) prepareDocs(files []render.File, wasQuick map[string]bool, pace Pace) (map[int]docWrite, error) {
	quick := pace != Final
	type key struct {
		sum   [sha256.Size]byte
		enc   string
		quick bool
	}
	jobs := map[key]*compression{}
	docs := map[int]docWrite{}
	for i, f := range files {
		if !f.Doc {
			continue
		}
		t := w.e.pub
		if f.Private {
			t = w.e.priv
		}
		dw := docWrite{siblings: map[string]*compression{}, same: t.same(f.Path, f.Data)}
		fast := quick && !f.Private && !dw.same
		sum := sha256.Sum256(f.Data)
		for _, enc := range w.e.encodings {
			sib := f.Path + enc.Ext
			if dw.same && !(wasQuick[sib] && !f.Private) && t.siblingAgrees(f.Path, enc, f.Data) {
				continue
			}
			k := key{sum, enc.Name, fast}
			if jobs[k] == nil {
				jobs[k] = &compression{enc: enc, data: f.Data, quick: fast}
			}
			dw.siblings[enc.Name] = jobs[k]
			if fast {
				w.quick = append(w.quick, sib)
			}
		}
		docs[i] = dw
	}
	var wg sync.WaitGroup
	var gaveWay atomic.Bool
	for _, c := range jobs {
		wg.Go(func() {
			if quick && !c.quick {
				w.e.finishing <- struct{}{}
				defer func() { <-w.e.finishing }()
				if gaveWay.Load() || w.giveWay() != nil {
					gaveWay.Store(true)
					return
				}
			}
			w.e.cpu <- struct{}{}
			c.z, c.err = w.e.comp.Compress(c.enc, c.data, c.quick)
			<-w.e.cpu
		})
	}
	wg.Wait()
	if gaveWay.Load() {
		return nil, ErrGaveWay
	}
	return docs, nil
}

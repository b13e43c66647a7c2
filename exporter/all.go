package exporter

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/exporter/claims"
	"github.com/guidepub/guidepub/site"
	"github.com/guidepub/guidepub/site/fswatch"
)

// Folders returns the bundle folders under SrcDir in name order: every
// folder (or symbolic link, which its export rejects) whose name is not a
// temporary or staging name (a dot name, or "x.partial", see
// fswatch.Temporary) and that belongs to the configured shard. It returns an
// error when SrcDir cannot be listed.
func (e *Exporter) Folders() ([]string, error) {
	entries, err := afero.ReadDir(e.cfg.Src, e.cfg.SrcDir)
	if err != nil {
		return nil, fmt.Errorf("list bundles: %w", err)
	}
	var out []string
	for _, fi := range entries {
		// A symbolic link is listed so that its export says what is wrong
		// (see docs/robustness.md).
		isLink := fi.Mode()&fs.ModeSymlink != 0
		if (fi.IsDir() || isLink) && !fswatch.Temporary(fi.Name()) && ShardOf(fi.Name(), e.cfg.Shards) == e.cfg.Shard {
			out = append(out, fi.Name())
		}
	}
	slices.Sort(out)
	return out, nil
}

// ExportAll exports every bundle under SrcDir and unpublishes the guides
// whose folder vanished. Bundles are loaded and exported Jobs at a time;
// ids are claimed in folder name order, so between two new bundles
// claiming the same id the first by name wins (a published one always
// wins). Rejected bundles are in the report with a *bundle.Error and keep
// what they published before; the error is non-nil only for I/O failures
// (listing SrcDir, writing or deleting files or records), joined
// when several guides fail, and the report is returned with it. The
// report keeps every guide's Changes, so its memory grows with the files
// written: ExportAllEach hands them out instead.
func (e *Exporter) ExportAll(ctx context.Context) (*Report, error) {
	return e.ExportAllEach(ctx, nil)
}

// ExportAllEach is ExportAll, calling each (when not nil) with the result
// of every guide unpublished or exported, Changes included, as soon as
// that guide is done, one call at a time: the report then keeps the
// results without their Changes, so that its memory does not grow with
// the files written (see docs/benchmarks.md).
func (e *Exporter) ExportAllEach(ctx context.Context, each func(GuideResult)) (*Report, error) {
	// Uploads in progress go first (giveWay), and are found up to date.
	if err := e.way.uploads.wait(ctx); err != nil {
		return &Report{}, err
	}
	start := time.Now()
	done := handOut(each)
	rep := &Report{}
	if err := e.Loaded(); err != nil {
		return rep, err
	}
	e.removeStaleTempsLogged()
	folders, err := e.Folders()
	if err != nil {
		return rep, err
	}
	// Folders are locked one at a time, while each is unpublished or
	// published, not for the whole run: a watcher exports uploads
	// meanwhile (see docs/watching.md).
	s := e.scan(folders)
	// Guides whose folder vanished, or now holds another guide, go before
	// new claims are checked.
	ioErrs := e.unpublishGone(s, rep, done)
	results := e.claimAll(s)
	e.publishAll(ctx, s, results, done)
	for _, r := range results {
		e.logResult(r)
		var be *bundle.Error
		if r.Err != nil && !errors.As(r.Err, &be) {
			ioErrs = append(ioErrs, r.Err)
		}
		rep.add(r)
	}
	if len(ioErrs) == 0 {
		e.w.Verified()
	}
	rep.Duration = time.Since(start)
	return rep, errors.Join(ioErrs...)
}

// handOut returns what ExportAllEach does with each finished result: none
// when each is nil, else a call of each, one at a time, after which the
// result's Changes are dropped.
func handOut(each func(GuideResult)) func(*GuideResult) {
	if each == nil {
		return func(*GuideResult) {}
	}
	var mu sync.Mutex
	return func(r *GuideResult) {
		mu.Lock()
		defer mu.Unlock()
		each(*r)
		r.Changes = nil
	}
}

// removeStaleTempsLogged removes the temporary files a killed export left
// (see docs/robustness.md) and logs what it did.
func (e *Exporter) removeStaleTempsLogged() {
	if n, err := e.w.RemoveStaleTemps(e.w.Verifying()); err != nil {
		e.cfg.Logger.Warn("removing stale temporary files", "removed", n, "err", err)
	} else if n > 0 {
		e.cfg.Logger.Info("removed stale temporary files of an interrupted export", "removed", n)
	}
}

// scanned is what ExportAll knows of each bundle folder before it claims
// ids: whether its published guide is up to date, else the ids of the
// bundle it holds now or why that does not load. Only the ids of loaded
// bundles are kept until they are published (and loaded again), so memory
// does not grow with the number of bundles.
type scanned struct {
	folders   []string
	index     map[string]int                // folder -> index in folders
	published map[string]site.ManifestGuide // summaries by guide id, as the run started
	current   []string                      // guide id of an up-to-date folder, else ""
	files     []int                         // files the up-to-date guide published
	heads     []*claims.IDs                 // ids of the bundle loaded, or nil
	loadErr   []error                       // why the bundle did not load
	claimed   []bool                        // ids claimed: to publish
}

// scan loads every bundle in folders (parsing and file checks), Jobs at a
// time, except those whose published guide is up to date: unchanged
// guide.json and files, no expiry since, every published file still there.
func (e *Exporter) scan(folders []string) *scanned {
	s := &scanned{folders: folders, index: map[string]int{}, published: e.records.Summaries(),
		current: make([]string, len(folders)), files: make([]int, len(folders)), heads: make([]*claims.IDs, len(folders)), loadErr: make([]error, len(folders)),
		claimed: make([]bool, len(folders))}
	for i, f := range folders {
		s.index[f] = i
	}
	byFolder := map[string]string{} // folder -> guide id it published
	for id, mg := range s.published {
		byFolder[mg.Folder] = id
	}
	now := e.cfg.Clock.Now()
	e.parallel(len(folders), func(i int) {
		f := folders[i]
		if id, ok := byFolder[f]; ok && e.mayBeUpToDate(ptr(s.published[id]), now) {
			mg, _, err := e.entry(id) // the whole entry: its files are checked
			dir := filepath.Join(e.cfg.SrcDir, f)
			var raw []byte
			if err == nil {
				raw, err = afero.ReadFile(e.cfg.Src, filepath.Join(dir, bundle.FileName))
			}
			if err == nil && e.upToDate(id, &mg, dir, raw, now) {
				s.current[i], s.files[i] = id, len(mg.Files)+len(mg.Private)
				return
			}
		}
		b, err := e.load(f)
		s.loadErr[i] = err
		if b != nil {
			s.heads[i] = ptr(claims.IDsOf(&b.Guide))
		}
	})
	return s
}

// alive reports whether folder, as scanned, still holds guide guideID, or
// a bundle that does not load (whose earlier publication stays).
func (s *scanned) alive(folder, guideID string) bool {
	i, ok := s.index[folder]
	switch {
	case !ok:
		return false
	case s.current[i] != "":
		return s.current[i] == guideID
	}
	return s.heads[i] == nil || s.heads[i].Guide == guideID
}

// unpublishGone unpublishes the guides whose folder no longer holds them
// and that no other folder holds (a moved guide stays published while it is
// exported from its new folder), gives their results to done, adds them
// to rep and returns the I/O errors.
func (e *Exporter) unpublishGone(s *scanned, rep *Report, done func(*GuideResult)) []error {
	var gone []string
	moved := map[string]bool{}
	for i, g := range s.heads {
		if g != nil && s.published[g.Guide].Folder != s.folders[i] {
			moved[g.Guide] = true
		}
	}
	for id, mg := range s.published {
		if !s.alive(mg.Folder, id) && !moved[id] {
			gone = append(gone, id)
		}
	}
	slices.Sort(gone)
	var ioErrs []error
	for _, id := range gone {
		r, unpublished, err := e.unpublishGoneGuide(id, s.published[id].Folder)
		if !unpublished {
			continue
		}
		if err != nil {
			r.Err = err
			ioErrs = append(ioErrs, err)
		}
		e.logResult(r)
		done(&r)
		rep.add(r)
	}
	return ioErrs
}

// unpublishGoneGuide unpublishes guide id, which the scan found gone from
// folder, unless it changed since: exported from another folder, or back
// in folder (a watcher may have exported it meanwhile); done is false
// then.
func (e *Exporter) unpublishGoneGuide(id, folder string) (res GuideResult, done bool, err error) {
	defer e.lockFolder(folder)()
	if mg, ok := e.records.Summary(id); !ok || mg.Folder != folder || e.aliveOnDisk(folder, id) {
		return res, false, nil
	}
	res, err = e.unpublish(id)
	return res, true, err
}

// claimAll claims the ids of every loaded bundle in folder name order and
// returns one result per folder: final for up-to-date, unloadable and
// rejected bundles, with a GuideID and no error for those to publish.
func (e *Exporter) claimAll(s *scanned) []GuideResult {
	results := make([]GuideResult, len(s.folders))
	for i, f := range s.folders {
		results[i] = GuideResult{Folder: f, Err: s.loadErr[i]}
		if id := s.current[i]; id != "" {
			mg := s.published[id]
			results[i] = unchangedResult(f, id, &mg, s.files[i])
			continue
		}
		g := s.heads[i]
		if g == nil {
			continue
		}
		results[i].GuideID = g.Guide
		if err := e.claim(f, *g, s.alive); err != nil {
			results[i].Err = err
			continue
		}
		s.claimed[i] = true
	}
	return results
}

// publishAll publishes the claimed bundles, Jobs at a time, into results,
// giving each result to done.
func (e *Exporter) publishAll(ctx context.Context, s *scanned, results []GuideResult, done func(*GuideResult)) {
	var bar *progressbar.ProgressBar
	if e.cfg.Progress != nil {
		bar = progressbar.NewOptions(len(s.folders), progressbar.OptionSetWriter(e.cfg.Progress),
			progressbar.OptionSetDescription("exporting"), progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(true), progressbar.OptionClearOnFinish())
	}
	e.parallel(len(s.folders), func(i int) {
		if s.claimed[i] {
			results[i] = e.publishLoaded(ctx, s.folders[i], *s.heads[i])
			done(&results[i])
		}
		if bar != nil {
			_ = bar.Add(1)
		}
	})
	if bar != nil {
		_ = bar.Finish()
	}
}

// publishLoaded loads the bundle in folder again and publishes it; head
// holds the ids claimed for it. Should the bundle have changed its ids
// since (an upload in between), they are claimed again first.
func (e *Exporter) publishLoaded(ctx context.Context, folder string, head claims.IDs) GuideResult {
	defer e.lockFolder(folder)()
	fail := func(err error) GuideResult {
		e.release(head)
		return GuideResult{Folder: folder, GuideID: head.Guide, Err: err}
	}
	if err := ctx.Err(); err != nil {
		return fail(err)
	}
	b, err := e.load(folder)
	if err != nil {
		return fail(err)
	}
	if ids := claims.IDsOf(&b.Guide); !ids.Same(head) {
		e.release(head)
		if err := e.claim(folder, ids, e.aliveOnDisk); err != nil {
			return GuideResult{Folder: folder, GuideID: b.Guide.GuideID, Err: err}
		}
	}
	return e.publishClaimed(ctx, b, false)
}

// ptr returns a pointer to a copy of v.
func ptr[T any](v T) *T { return &v }

// parallel calls fn(0..n-1), up to 2*Jobs calls at a time: while some
// wait for the disk, others keep the Jobs compression slots (the CPU-bound
// part, see Exporter.compress) busy. Each call waits first while an
// upload is exported (giveWay).
func (e *Exporter) parallel(n int, fn func(i int)) {
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(2*e.cfg.Jobs, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				// Not cut short: fn looks at its context itself.
				_ = e.way.uploads.wait(context.Background())
				fn(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

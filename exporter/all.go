package exporter

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/site"
)

// Folders returns the bundle folders under SrcDir in name order: every
// folder whose name does not start with a dot and that belongs to the
// configured shard. It returns an error when SrcDir cannot be listed.
func (e *Exporter) Folders() ([]string, error) {
	entries, err := afero.ReadDir(e.cfg.Src, e.cfg.SrcDir)
	if err != nil {
		return nil, fmt.Errorf("list bundles: %w", err)
	}
	var out []string
	for _, fi := range entries {
		if fi.IsDir() && !strings.HasPrefix(fi.Name(), ".") && ShardOf(fi.Name(), e.cfg.Shards) == e.cfg.Shard {
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
// (listing SrcDir, writing or deleting files, saving the manifest), joined
// when several guides fail, and the report is returned with it.
func (e *Exporter) ExportAll(ctx context.Context) (*Report, error) {
	start := time.Now()
	rep := &Report{}
	folders, err := e.Folders()
	if err != nil {
		return rep, err
	}
	for _, f := range folders {
		e.folderLock(f).Lock()
	}
	upToDateID := map[string]string{} // folder -> guide id it published
	defer func() {
		for _, f := range folders {
			e.folderLock(f).Unlock()
		}
	}()

	var bar *progressbar.ProgressBar
	if e.cfg.Progress != nil {
		bar = progressbar.NewOptions(len(folders), progressbar.OptionSetWriter(e.cfg.Progress),
			progressbar.OptionSetDescription("exporting"), progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(true), progressbar.OptionClearOnFinish())
	}

	// Load every bundle (parsing and file checks), Jobs at a time, except
	// those whose published guide is up to date: unchanged guide.json and
	// files, no expiry since, every published file still there.
	e.mu.Lock()
	published := map[string]site.ManifestGuide{} // by folder
	for id, mg := range e.manifest.Guides {
		published[mg.Folder] = mg
		upToDateID[mg.Folder] = id
	}
	e.mu.Unlock()
	now := e.cfg.Clock.Now()
	// Only the ids of loaded bundles are kept until they are published
	// (and loaded again), so memory does not grow with the number of
	// bundles.
	heads := make([]*bundle.Guide, len(folders))
	loadErr := make([]error, len(folders))
	current := make([]string, len(folders)) // guide id of an up-to-date folder
	e.parallel(len(folders), func(i int) {
		f := folders[i]
		if mg, ok := published[f]; ok {
			dir := filepath.Join(e.cfg.SrcDir, f)
			raw, err := afero.ReadFile(e.cfg.Src, filepath.Join(dir, bundle.FileName))
			if err == nil && e.upToDate(&mg, dir, raw, now) {
				current[i] = upToDateID[f]
				return
			}
		}
		b, err := e.load(f)
		loadErr[i] = err
		if b != nil {
			heads[i] = idsOnly(&b.Guide)
		}
	})

	// Unpublish guides whose folder vanished, or whose folder now holds
	// another guide, before new claims are checked.
	byFolder := map[string]int{}
	for i, f := range folders {
		byFolder[f] = i
	}
	alive := func(folder, guideID string) bool {
		i, ok := byFolder[folder]
		switch {
		case !ok:
			return false
		case current[i] != "":
			return current[i] == guideID
		}
		return heads[i] == nil || heads[i].GuideID == guideID
	}
	var ioErrs []error
	e.mu.Lock()
	var gone []string
	for id, mg := range e.manifest.Guides {
		if !alive(mg.Folder, id) {
			gone = append(gone, id)
		}
	}
	e.mu.Unlock()
	slices.Sort(gone)
	for _, id := range gone {
		r, err := e.unpublish(id)
		if err != nil {
			r.Err = err
			ioErrs = append(ioErrs, err)
		}
		e.logResult(r)
		rep.add(r)
	}

	// Claim ids in folder name order.
	results := make([]GuideResult, len(folders))
	claimed := make([]bool, len(folders))
	e.mu.Lock()
	for i, g := range heads {
		results[i] = GuideResult{Folder: folders[i], Err: loadErr[i]}
		if id := current[i]; id != "" {
			mg := published[folders[i]]
			results[i] = unchangedResult(folders[i], id, &mg)
			continue
		}
		if g == nil {
			continue
		}
		results[i].GuideID = g.GuideID
		if problems := e.claim(folders[i], g, alive); len(problems) > 0 {
			results[i].Err = &bundle.Error{Folder: folders[i], Problems: problems}
			continue
		}
		claimed[i] = true
	}
	e.mu.Unlock()

	// Publish, Jobs at a time.
	e.parallel(len(folders), func(i int) {
		if claimed[i] {
			results[i] = e.publishLoaded(ctx, folders[i], heads[i])
		}
		if bar != nil {
			_ = bar.Add(1)
		}
	})
	if bar != nil {
		_ = bar.Finish()
	}
	for _, r := range results {
		e.logResult(r)
		var be *bundle.Error
		if r.Err != nil && !errors.As(r.Err, &be) {
			ioErrs = append(ioErrs, r.Err)
		}
		rep.add(r)
	}
	e.mu.Lock()
	if err := e.saveManifest(); err != nil {
		ioErrs = append(ioErrs, err)
	}
	e.mu.Unlock()
	rep.Duration = time.Since(start)
	return rep, errors.Join(ioErrs...)
}

// publishLoaded loads the bundle in folder again and publishes it; head
// holds the ids claimed for it. Should the bundle have changed its ids
// since (an upload in between), they are claimed again first.
func (e *Exporter) publishLoaded(ctx context.Context, folder string, head *bundle.Guide) GuideResult {
	fail := func(err error) GuideResult {
		e.mu.Lock()
		e.release(head)
		e.mu.Unlock()
		return GuideResult{Folder: folder, GuideID: head.GuideID, Err: err}
	}
	if err := ctx.Err(); err != nil {
		return fail(err)
	}
	b, err := e.load(folder)
	if err != nil {
		return fail(err)
	}
	if !sameIDs(&b.Guide, head) {
		e.mu.Lock()
		e.release(head)
		problems := e.claim(folder, &b.Guide, e.aliveOnDisk)
		e.mu.Unlock()
		if len(problems) > 0 {
			return GuideResult{Folder: folder, GuideID: b.Guide.GuideID, Err: &bundle.Error{Folder: folder, Problems: problems}}
		}
	}
	return e.publishClaimed(ctx, b)
}

// parallel calls fn(0..n-1), up to 2*Jobs calls at a time: while some
// wait for the disk, others keep the Jobs compression slots (the CPU-bound
// part, see Exporter.compress) busy.
func (e *Exporter) parallel(n int, fn func(i int)) {
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(2*e.cfg.Jobs, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
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

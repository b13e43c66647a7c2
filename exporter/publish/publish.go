package publish

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/guidepub/guidepub/site"
	"github.com/guidepub/guidepub/site/bucket"
)

// Defaults of Config.
const (
	DefaultJobs       = 8
	DefaultMaxDeletes = 1000
)

// MaxPlanned caps Report.Planned: a first upload of a large tree plans
// millions of changes, which Config.Plan receives one by one instead.
const MaxPlanned = 10000

// MetadataHash is the object metadata key holding the hex SHA-256 of the
// uploaded bytes; it tells an unchanged object where the listing has no
// MD5, and it is guidepub's mark on every object it writes (see Owned).
const MetadataHash = bucket.MetadataHash

// Owned reports whether an object whose metadata is md was written by
// guidepub: it carries MetadataHash with a hex SHA-256. It is the one rule
// by which publish and live publishing decide that a stale object is
// theirs to delete; another writer's objects under the prefix stay
// (Config.DeleteForeign deletes those too).
func Owned(md map[string]string) bool {
	v := md[MetadataHash]
	if len(v) != 2*sha256.Size {
		return false
	}
	_, err := hex.DecodeString(v)
	return err == nil
}

// Identity is the Encoding value that uploads documents uncompressed.
var Identity = site.Identity

// Encodings are the values --encoding takes: Identity, site.Gzip and
// site.Brotli (docs/hosting.md weighs them).
var Encodings = []site.Encoding{Identity, site.Gzip, site.Brotli}

// ParseEncoding parses the --encoding value: one of Encodings by its
// Content-Encoding token, or "" for Identity. It returns an error for
// anything else.
func ParseEncoding(s string) (site.Encoding, error) {
	if s == "" {
		return Identity, nil
	}
	return site.ParseEncoding(s, Encodings...)
}

// OpenBucket opens the bucket URL (s3://, gs://, azblob://, file://,
// mem://; see gocloud.dev/blob). It returns an error for an unknown scheme
// or bad options.
func OpenBucket(ctx context.Context, url string) (*blob.Bucket, error) {
	return bucket.Open(ctx, url)
}

// Change is one planned change of the bucket.
type Change struct {
	Op  string // "upload", "delete", or "keep" (a stale object Publish leaves)
	Key string
	// Reason: "new", "changed" or "forced" for an upload; "stale" (only
	// absent from the tree) or "withdrawn" (the records say so, see
	// Config.Withdrawn) for a deletion; "foreign" (guidepub did not write
	// it) or "unrecorded" (Config.KeepUnrecorded) for a kept object.
	Reason string
}

// String returns the change as a plan line: "upload site/v1/data/status (changed)".
func (c Change) String() string { return fmt.Sprintf("%s %s (%s)", c.Op, c.Key, c.Reason) }

// Report tells what Publish did (or, in a dry run, would do).
type Report struct {
	// Planned holds the first MaxPlanned uploads and deletions, in the
	// order they run; ToUpload and ToDelete count them all.
	Planned            []Change
	ToUpload, ToDelete int
	Uploaded           int
	Unchanged          int
	Deleted            int
	// Withdrawn counts the deletions among ToDelete that Config.Withdrawn
	// names: recorded intent, not bounded by Config.MaxDeletes.
	Withdrawn int
	// Kept counts the stale objects kept because nothing recorded their
	// removal (Config.KeepUnrecorded).
	Kept int
	// Foreign counts the stale objects kept because guidepub did not
	// write them (see Owned and Config.DeleteForeign).
	Foreign  int
	Bytes    int64 // bytes uploaded
	Listed   int   // objects listed under the prefix
	DryRun   bool
	Duration time.Duration
}

// Summary returns the report on one line.
func (r *Report) Summary() string {
	var kept string
	if r.Withdrawn > 0 {
		kept = fmt.Sprintf(" (%d withdrawn by the records)", r.Withdrawn)
	}
	if r.Foreign > 0 {
		kept += fmt.Sprintf(", %d not written by guidepub kept (--delete-foreign deletes them)", r.Foreign)
	}
	if r.Kept > 0 {
		kept += fmt.Sprintf(", %d stale objects no record names kept", r.Kept)
	}
	if r.DryRun {
		return fmt.Sprintf("dry run: %d to upload, %d unchanged, %d to delete%s", r.ToUpload, r.Unchanged, r.ToDelete, kept)
	}
	return fmt.Sprintf("published: %d uploaded (%d bytes), %d unchanged, %d deleted%s in %.1fs",
		r.Uploaded, r.Bytes, r.Unchanged, r.Deleted, kept, r.Duration.Seconds())
}

// ErrTooManyDeletes is wrapped by the error of a Publish that would delete
// more than Config.MaxDeletes objects that nothing recorded (and so
// changed nothing).
var ErrTooManyDeletes = errors.New("too many deletions")

// compareBatch is how many local files are compared with their objects at
// once (in parallel, Jobs at a time): the most a reconcile holds.
const compareBatch = 512

// Publish makes the bucket match the tree cfg.FromDir: it uploads what is
// new or changed and deletes stale objects under the prefix (at most
// cfg.MaxDeletes of those cfg.Withdrawn does not name). The local
// walk and the bucket listing are both read in key order and merged, so
// memory does not grow with the tree; the planned changes wait in
// temporary files. It returns a report of what was done, and an error when
// the tree cannot be read, the bucket fails, too many objects would be
// deleted, or ctx ends; then the bucket may hold some of the new objects
// (never a status before its companions) and a later run completes it.
func Publish(ctx context.Context, cfg Config) (*Report, error) {
	start := time.Now()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("publish: %w", err)
	}
	// Validate accepted the name: this is the value with its codec, ""
	// giving Identity.
	cfg.Encoding, _ = ParseEncoding(cfg.Encoding.Name)
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	d := newDescriber(cfg)
	pl, err := newPlan()
	if err != nil {
		return nil, fmt.Errorf("publish: %w", err)
	}
	defer pl.close()
	rep := &Report{DryRun: cfg.DryRun}
	if err := d.plan(ctx, pl, rep); err != nil {
		return rep, fmt.Errorf("publish: %w", err)
	}
	if unrecorded := rep.ToDelete - rep.Withdrawn; unrecorded > cfg.MaxDeletes {
		return rep, fmt.Errorf("publish: %d stale objects under %q that no record names exceed the limit of %d deletions; nothing was changed (raise --max-deletes if this is intended): %w", unrecorded, d.keys.prefix, cfg.MaxDeletes, ErrTooManyDeletes)
	}
	if err := pl.each(func(c Change) error {
		if len(rep.Planned) < MaxPlanned && c.Op != "keep" {
			rep.Planned = append(rep.Planned, c)
		}
		if cfg.Plan != nil {
			_, err := fmt.Fprintln(cfg.Plan, c.String())
			return err
		}
		return nil
	}); err != nil {
		return rep, fmt.Errorf("publish: %w", err)
	}
	if cfg.DryRun {
		rep.Duration = time.Since(start)
		return rep, nil
	}
	err = d.apply(ctx, pl, rep)
	rep.Duration = time.Since(start)
	if err != nil {
		return rep, fmt.Errorf("publish: %w", err)
	}
	return rep, nil
}

// plan merges the local walk with the listing and records each change in
// pl, counting the unchanged objects in rep.
func (d *describer) plan(ctx context.Context, pl *plan, rep *Report) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	listed := d.listAhead(ctx)
	var (
		cur      *remoteObject
		lastKey  string
		listDone bool
	)
	advance := func() error {
		cur = nil
		if listDone {
			return nil
		}
		r, ok := <-listed
		switch {
		case !ok:
			listDone = true
			return nil
		case r.err != nil:
			listDone = true
			return r.err
		}
		rep.Listed++
		if r.obj.key < lastKey {
			// Some listings (gocloud's file://) are not in key order:
			// uploads planned as new are checked before they run.
			pl.unordered = true
		}
		lastKey = r.obj.key
		cur = &r.obj
		return nil
	}
	// stale reports whether r, listed with no file, may be deleted: whether
	// guidepub wrote it is asked when it is compared (see compare).
	stale := func(r *remoteObject) (bool, error) {
		if (d.cfg.KeepUnrecorded && d.cfg.Withdrawn == nil) || site.IsHidden(strings.TrimPrefix(r.key, d.keys.prefix)) {
			return false, nil // dot-files (a live publisher's lease) are not publish's
		}
		if pl.unordered {
			// A late key may name a file the merge has passed.
			if has, err := d.localHas(r.key); err != nil || has {
				return false, err
			}
		}
		return true, nil
	}
	if err := advance(); err != nil {
		return err
	}
	// Batches are compared (files read, objects asked) on one goroutine
	// while the merge goes on, at most eight batches ahead.
	batches := make(chan []pair, 8)
	compared := make(chan error, 1)
	go func() {
		var err error
		for batch := range batches {
			if err == nil {
				if err = d.compare(ctx, batch, pl, rep); err != nil {
					cancel(err)
				}
			}
		}
		compared <- err
	}()
	err := d.merge(ctx, advance, stale, func() *remoteObject { return cur }, batches)
	close(batches)
	if cerr := <-compared; cerr != nil {
		return cerr
	}
	return err
}

// merge walks the tree, pairs each file with its listed object (advance
// moves cur along the listing) and sends the pairs to batches in batches
// of compareBatch; listed objects no file has are sent as stale pairs
// when stale says they may be deleted.
func (d *describer) merge(ctx context.Context, advance func() error, stale func(*remoteObject) (bool, error), current func() *remoteObject, batches chan<- []pair) error {
	var batch []pair
	send := func(p pair) {
		if batch = append(batch, p); len(batch) == compareBatch {
			batches <- batch
			batch = make([]pair, 0, compareBatch)
		}
	}
	// passStale sends the listed objects before key (all: "") as stale.
	passStale := func(key string, all bool) error {
		for cur := current(); cur != nil && (all || cur.key < key); cur = current() {
			if ok, err := stale(cur); err != nil {
				return err
			} else if ok {
				send(pair{remote: cur, stale: true})
			}
			if err := advance(); err != nil {
				return err
			}
		}
		return nil
	}
	for lf, err := range localFiles(d.cfg.From, d.cfg.FromDir, d.keys) {
		if err != nil {
			return fmt.Errorf("read %s: %w", d.cfg.FromDir, err)
		}
		if err := ctx.Err(); err != nil {
			return context.Cause(ctx)
		}
		if err := passStale(lf.key, false); err != nil {
			return err
		}
		p := pair{file: lf}
		if cur := current(); cur != nil && cur.key == lf.key {
			p.remote = cur
			if err := advance(); err != nil {
				return err
			}
		}
		send(p)
	}
	if err := passStale("", true); err != nil {
		return err
	}
	batches <- batch
	return nil
}

// listed is one object of the listing, or the error that ended it.
type listed struct {
	obj remoteObject
	err error
}

// listAhead reads the listing under the prefix on its own goroutine, a
// few pages ahead of the merge, until ctx ends.
func (d *describer) listAhead(ctx context.Context) <-chan listed {
	out := make(chan listed, 2048)
	go func() {
		defer close(out)
		it := d.cfg.Bucket.List(&blob.ListOptions{Prefix: d.keys.prefix})
		for {
			obj, err := it.Next(ctx)
			if err == io.EOF {
				return
			}
			var l listed
			switch {
			case err != nil:
				l.err = fmt.Errorf("list %q: %w", d.keys.prefix, err)
			case obj.IsDir:
				continue
			default:
				l.obj = remoteObject{obj.Key, obj.Size, obj.MD5}
			}
			select {
			case out <- l:
			case <-ctx.Done():
				return
			}
			if l.err != nil {
				return
			}
		}
	}()
	return out
}

// pair is a local file and its listed object (nil: none listed), or, when
// stale, a listed object no file has.
type pair struct {
	file   localFile
	remote *remoteObject
	stale  bool
}

// compare decides, in parallel, which files of batch to upload and which
// stale objects to delete, and records them in pl in batch order.
func (d *describer) compare(ctx context.Context, batch []pair, pl *plan, rep *Report) error {
	reasons := make([]string, len(batch))
	locals := make([]*local, len(batch))
	err := parallel(ctx, d.cfg.Jobs, len(batch), func(ctx context.Context, i int) error {
		p := batch[i]
		if p.stale {
			var err error
			reasons[i], err = d.staleReason(ctx, p.remote.key)
			return err
		}
		o, err := d.describe(p.file.rel, p.file.info)
		if err != nil {
			return err
		}
		locals[i] = o
		switch {
		case p.remote == nil:
			reasons[i] = "new"
		case d.cfg.Force:
			reasons[i] = "forced"
		default:
			same, err := d.sameAsRemote(ctx, o, p.remote)
			if err != nil {
				return err
			}
			if !same {
				reasons[i] = "changed"
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i, o := range locals {
		switch {
		case batch[i].stale:
			if err := d.planStale(pl, rep, batch[i].remote.key, reasons[i]); err != nil {
				return err
			}
			continue
		case reasons[i] == "":
			rep.Unchanged++
			continue
		}
		rep.ToUpload++
		if err := pl.add(Change{"upload", o.key, reasons[i]}, o.rel, o.phase); err != nil {
			return err
		}
	}
	return nil
}

// staleReason returns "withdrawn" or "stale" when the stale object key is
// to be deleted: guidepub wrote it (Owned), or Config.DeleteForeign is
// set; "withdrawn" when guidepub wrote it and Config.Withdrawn names it
// (another writer's object is never recorded intent). It returns
// "foreign" when another writer's object stays, "" when it is gone
// already.
func (d *describer) staleReason(ctx context.Context, key string) (string, error) {
	if d.cfg.DeleteForeign && d.cfg.Withdrawn == nil {
		return "stale", nil
	}
	a, err := d.cfg.Bucket.Attributes(ctx, key)
	switch {
	case isNotFound(err):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("attributes of %s: %w", key, err)
	case !Owned(a.Metadata) && d.cfg.DeleteForeign:
		return "stale", nil
	case !Owned(a.Metadata):
		return "foreign", nil
	}
	if rel, ok := d.keys.rel(key); ok && d.cfg.Withdrawn != nil {
		withdrawn, err := d.cfg.Withdrawn(rel)
		if err != nil {
			return "", fmt.Errorf("records of %s: %w", rel, err)
		}
		if withdrawn {
			return "withdrawn", nil
		}
	}
	return "stale", nil
}

// planStale records the stale object key in pl: a deletion, or a kept
// object (printed by a dry run, never run) for another writer's, or one
// nothing recorded with Config.KeepUnrecorded.
func (d *describer) planStale(pl *plan, rep *Report, key, reason string) error {
	switch {
	case reason == "stale" && d.cfg.KeepUnrecorded:
		rep.Kept++
		return pl.add(Change{"keep", key, "unrecorded"}, "", numPhases)
	case reason == "withdrawn":
		rep.Withdrawn++
		fallthrough
	case reason == "stale":
		rep.ToDelete++
		return pl.add(Change{"delete", key, reason}, "", numPhases)
	case reason == "foreign":
		rep.Foreign++
		return pl.add(Change{"keep", key, reason}, "", numPhases)
	}
	return nil
}

// localHas reports whether the tree holds the file of key.
func (d *describer) localHas(key string) (bool, error) {
	rel, ok := strings.CutPrefix(key, d.keys.prefix)
	if !ok {
		return false, nil
	}
	candidates := []string{rel}
	if d.keys.pagesAsObjects {
		candidates = append(candidates, rel+"/"+site.PageFile)
	}
	for _, c := range candidates {
		if d.keys.key(c) != key || site.IsHidden(c) || c == "" {
			continue
		}
		if _, _, sib := site.SplitEncoded(c); sib {
			continue
		}
		fi, err := lstat(d.cfg.From, filepath.Join(d.cfg.FromDir, filepath.FromSlash(c)))
		if err == nil && fi.Mode().IsRegular() {
			return true, nil
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscallNotDir) {
			return false, err
		}
	}
	return false, nil
}

// apply uploads the planned objects phase by phase, then deletes the
// stale keys, counting both in rep. It returns the first error; the
// objects of later phases are then not uploaded.
func (d *describer) apply(ctx context.Context, pl *plan, rep *Report) error {
	cfg := d.cfg
	var bar *progressbar.ProgressBar
	if total := rep.ToUpload + rep.ToDelete; cfg.Progress != nil && total > 0 {
		bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(cfg.Progress),
			progressbar.OptionSetDescription("publishing"), progressbar.OptionShowCount(),
			progressbar.OptionClearOnFinish())
		defer bar.Finish()
	}
	var mu sync.Mutex
	for phase := range numPhases + 1 {
		err := pl.chunks(phase, compareBatch, func(items []planned) error {
			return parallel(ctx, cfg.Jobs, len(items), func(ctx context.Context, i int) error {
				it := items[i]
				if it.change.Op == "keep" {
					return nil
				}
				if it.change.Op == "delete" {
					if err := cfg.Bucket.Delete(ctx, it.change.Key); err != nil && !isNotFound(err) {
						return fmt.Errorf("delete %s: %w", it.change.Key, err)
					}
					mu.Lock()
					rep.Deleted++
					mu.Unlock()
				} else {
					o, err := d.describe(it.rel, nil)
					if errors.Is(err, fs.ErrNotExist) {
						cfg.Logger.Warn("file removed while publishing; run publish again to delete its object", "file", it.rel)
						return nil
					}
					if err != nil {
						return err
					}
					if pl.unordered && it.change.Reason == "new" {
						if same, err := d.sameAsRemote(ctx, o, nil); err != nil || same {
							if same {
								mu.Lock()
								rep.Unchanged++
								mu.Unlock()
							}
							return err
						}
					}
					n, err := upload(ctx, cfg, o)
					if err != nil {
						return err
					}
					mu.Lock()
					rep.Uploaded++
					rep.Bytes += n
					mu.Unlock()
					if cfg.OnUpload != nil {
						cfg.OnUpload(o.key)
					}
				}
				if bar != nil {
					bar.Add(1)
				}
				return nil
			})
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// isNotFound reports whether err says an object does not exist.
func isNotFound(err error) bool { return gcerrors.Code(err) == gcerrors.NotFound }

// plan keeps the planned changes in one temporary file per phase (the
// last one for deletions), so that a plan of any size costs no memory.
type plan struct {
	dir       string
	files     [numPhases + 1]*os.File
	writers   [numPhases + 1]*bufio.Writer
	unordered bool // the listing was not in key order
}

// planned is one line of a plan file.
type planned struct {
	change Change
	rel    string
}

func newPlan() (*plan, error) {
	dir, err := os.MkdirTemp("", "guidepub-publish-")
	if err != nil {
		return nil, err
	}
	pl := &plan{dir: dir}
	for i := range pl.files {
		f, err := os.Create(filepath.Join(dir, fmt.Sprint(i)))
		if err != nil {
			pl.close()
			return nil, err
		}
		pl.files[i], pl.writers[i] = f, bufio.NewWriter(f)
	}
	return pl, nil
}

// add records c (of the file rel) in its phase.
func (pl *plan) add(c Change, rel string, phase int) error {
	_, err := fmt.Fprintf(pl.writers[phase], "%s\t%s\t%s\t%s\n", c.Op, c.Reason, c.Key, rel)
	return err
}

// chunks calls fn with the changes of phase, n at a time, in order.
func (pl *plan) chunks(phase, n int, fn func([]planned) error) error {
	if err := pl.writers[phase].Flush(); err != nil {
		return err
	}
	f := pl.files[phase]
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	items := make([]planned, 0, n)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), "\t", 4)
		if len(parts) != 4 {
			return fmt.Errorf("plan file %s: bad line %q", f.Name(), sc.Text())
		}
		items = append(items, planned{Change{parts[0], parts[2], parts[1]}, parts[3]})
		if len(items) == n {
			if err := fn(items); err != nil {
				return err
			}
			items = items[:0]
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if len(items) == 0 {
		return nil
	}
	return fn(items)
}

// each calls fn with every change, in the order they run.
func (pl *plan) each(fn func(Change) error) error {
	for phase := range pl.files {
		err := pl.chunks(phase, compareBatch, func(items []planned) error {
			for _, it := range items {
				if err := fn(it.change); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// close removes the plan's files.
func (pl *plan) close() {
	for _, f := range pl.files {
		if f != nil {
			f.Close()
		}
	}
	os.RemoveAll(pl.dir)
}

// parallel runs fn(ctx, i) for i in [0, n) on up to jobs goroutines. The
// first error cancels the others' context and is returned; so is ctx's
// error when it ends first.
func parallel(ctx context.Context, jobs, n int, fn func(ctx context.Context, i int) error) error {
	if n == 0 {
		return ctx.Err()
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(jobs, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := fn(ctx, i); err != nil {
					cancel(err)
				}
			}
		}()
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return err
	}
	return nil
}

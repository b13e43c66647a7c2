package publish

import (
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/afero"
	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/guidepub/guidepub/exporter"
	"github.com/guidepub/guidepub/site"

	// Bucket URL schemes publish understands.
	_ "gocloud.dev/blob/azureblob"
	_ "gocloud.dev/blob/fileblob"
	_ "gocloud.dev/blob/gcsblob"
	_ "gocloud.dev/blob/memblob"
	_ "gocloud.dev/blob/s3blob"
)

// Defaults of Config.
const (
	DefaultJobs       = 8
	DefaultMaxDeletes = 1000
)

// MetadataHash is the object metadata key holding the hex SHA-256 of the
// uploaded bytes; it tells an unchanged object where the listing has no
// MD5.
const MetadataHash = "guidepub-sha256"

// Identity is the Encoding value that uploads documents uncompressed.
var Identity = site.Encoding{Name: "identity"}

// ParseEncoding parses the --encoding value: identity, gzip or br. It
// returns an error for anything else.
func ParseEncoding(s string) (site.Encoding, error) {
	switch s {
	case "", Identity.Name:
		return Identity, nil
	case site.Gzip.Name:
		return site.Gzip, nil
	case site.Brotli.Name:
		return site.Brotli, nil
	}
	return site.Encoding{}, fmt.Errorf("unknown encoding %q: use identity, gzip or br", s)
}

// OpenBucket opens the bucket URL (s3://, gs://, azblob://, file://,
// mem://; see gocloud.dev/blob). It returns an error for an unknown scheme
// or bad options.
func OpenBucket(ctx context.Context, url string) (*blob.Bucket, error) {
	return blob.OpenBucket(ctx, url)
}

// Change is one planned change of the bucket.
type Change struct {
	Op     string // "upload" or "delete"
	Key    string
	Reason string // "new", "changed", "forced" or "stale"
}

// String returns the change as a plan line: "upload site/v1/data/status (changed)".
func (c Change) String() string { return fmt.Sprintf("%s %s (%s)", c.Op, c.Key, c.Reason) }

// Report tells what Publish did (or, in a dry run, would do).
type Report struct {
	Planned   []Change // every upload and deletion, in the order they run
	Uploaded  int
	Unchanged int
	Deleted   int
	Bytes     int64 // bytes uploaded
	DryRun    bool
	Duration  time.Duration
}

// Summary returns the report on one line.
func (r *Report) Summary() string {
	if r.DryRun {
		up := 0
		for _, c := range r.Planned {
			if c.Op == "upload" {
				up++
			}
		}
		return fmt.Sprintf("dry run: %d to upload, %d unchanged, %d to delete", up, r.Unchanged, len(r.Planned)-up)
	}
	return fmt.Sprintf("published: %d uploaded (%d bytes), %d unchanged, %d deleted in %.1fs",
		r.Uploaded, r.Bytes, r.Unchanged, r.Deleted, r.Duration.Seconds())
}

// Upload phases: a reader of the bucket may look at any moment, so what
// others point at goes first.
const (
	phaseMedia   = iota // media and any other plain file
	phaseContent        // data/summary and reso/autofill
	phaseStatus         // data/status: says "ready" only once the rest is there
	numPhases
)

// local is one object to upload.
type local struct {
	rel      string // path in the tree
	key      string
	phase    int
	document bool
	size     int64
	md5      []byte
	sha256   string
	src      string // path in the tree of the file whose bytes are uploaded (a sibling, say)
	data     []byte // the bytes to upload when no file holds them (compressed here)
	attrs    blob.WriterOptions
}

// Publish uploads the tree cfg.FromDir to cfg.Bucket and deletes stale
// objects. It returns a report of what was done, and an error when the
// tree cannot be read, the bucket fails, too many objects would be
// deleted, or ctx ends; then the bucket may hold some of the new objects
// (never a status before its companions) and a later run completes it.
func Publish(ctx context.Context, cfg Config) (*Report, error) {
	start := time.Now()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("publish: %w", err)
	}
	if cfg.Encoding.Name == "" {
		cfg.Encoding = Identity
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	prefix := cfg.Prefix
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}

	locals, err := scan(cfg, prefix)
	if err != nil {
		return nil, err
	}
	remote, err := listRemote(ctx, cfg.Bucket, prefix)
	if err != nil {
		return nil, err
	}
	rep := &Report{DryRun: cfg.DryRun}
	var uploads [numPhases][]*local
	if err := planUploads(ctx, cfg, locals, remote, rep, &uploads); err != nil {
		return rep, err
	}
	stale := staleKeys(remote, locals)
	if len(stale) > cfg.MaxDeletes {
		return rep, fmt.Errorf("publish: %d stale objects under %q exceed the limit of %d deletions; nothing was changed (raise --max-deletes if this is intended)", len(stale), prefix, cfg.MaxDeletes)
	}
	for _, key := range stale {
		rep.Planned = append(rep.Planned, Change{"delete", key, "stale"})
	}
	if cfg.Plan != nil {
		for _, c := range rep.Planned {
			fmt.Fprintln(cfg.Plan, c.String())
		}
	}
	if cfg.DryRun {
		rep.Duration = time.Since(start)
		return rep, nil
	}

	err = apply(ctx, cfg, &uploads, stale, rep)
	rep.Duration = time.Since(start)
	return rep, err
}

// staleKeys returns the keys of remote that no local object has, sorted.
func staleKeys[V, W any](remote map[string]V, locals map[string]W) []string {
	var stale []string
	for key := range remote {
		if _, ok := locals[key]; !ok {
			stale = append(stale, key)
		}
	}
	slices.Sort(stale)
	return stale
}

// apply uploads the planned objects phase by phase, then deletes the
// stale keys, counting both in rep. It returns the first error; the
// objects of later phases are then not uploaded.
func apply(ctx context.Context, cfg Config, uploads *[numPhases][]*local, stale []string, rep *Report) error {
	var bar *progressbar.ProgressBar
	if cfg.Progress != nil && len(rep.Planned) > 0 {
		bar = progressbar.NewOptions(len(rep.Planned), progressbar.OptionSetWriter(cfg.Progress),
			progressbar.OptionSetDescription("publishing"), progressbar.OptionShowCount(),
			progressbar.OptionClearOnFinish())
		defer bar.Finish()
	}
	var mu sync.Mutex
	for phase := range uploads {
		err := parallel(ctx, cfg.Jobs, len(uploads[phase]), func(ctx context.Context, i int) error {
			o := uploads[phase][i]
			n, err := upload(ctx, cfg, o)
			if err != nil {
				return err
			}
			mu.Lock()
			rep.Uploaded++
			rep.Bytes += n
			mu.Unlock()
			if bar != nil {
				bar.Add(1)
			}
			if cfg.OnUpload != nil {
				cfg.OnUpload(o.key)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return parallel(ctx, cfg.Jobs, len(stale), func(ctx context.Context, i int) error {
		if err := cfg.Bucket.Delete(ctx, stale[i]); err != nil && gcerrors.Code(err) != gcerrors.NotFound {
			return fmt.Errorf("publish: delete %s: %w", stale[i], err)
		}
		mu.Lock()
		rep.Deleted++
		mu.Unlock()
		if bar != nil {
			bar.Add(1)
		}
		return nil
	})
}

// scan reads the tree and returns the objects to upload by key. Hidden
// files, symbolic links and compressed siblings are left out; a document's
// bytes are its sibling for cfg.Encoding (compressed here when the export
// wrote none).
func scan(cfg Config, prefix string) (map[string]*local, error) {
	out := map[string]*local{}
	var comp *exporter.Compressor
	err := site.WalkFiles(cfg.From, cfg.FromDir, func(rel string, info fs.FileInfo) error {
		p := filepath.Join(cfg.FromDir, filepath.FromSlash(rel))
		if _, _, ok := site.SplitEncoded(rel); ok {
			return nil
		}
		o := &local{rel: rel, key: prefix + rel, phase: phaseMedia}
		if _, page := site.PageKindOf(rel); page && !cfg.PagesAsIndex {
			// An object store has no folders: the page of /vKT301A is the
			// object "vKT301A" itself (see docs/pages.md).
			o.key = prefix + strings.TrimSuffix(rel, "/"+site.PageFile)
		}
		o.attrs = blob.WriterOptions{
			ContentType:  site.ContentType(rel),
			CacheControl: site.CacheControl(rel),
		}
		if site.IsDocument(rel) {
			o.document = true
			o.phase = phaseContent
			if strings.HasSuffix(rel, "/"+site.StatusFile) {
				o.phase = phaseStatus
			}
			if cfg.Encoding != Identity {
				o.attrs.ContentEncoding = cfg.Encoding.Name
				sib, err := lstat(cfg.From, p+cfg.Encoding.Ext)
				if err == nil && !sib.Mode().IsRegular() {
					return fmt.Errorf("publish: %s is not a regular file", rel+cfg.Encoding.Ext)
				}
				switch {
				case err == nil:
					o.src = rel + cfg.Encoding.Ext
				case errors.Is(err, fs.ErrNotExist):
					// The export wrote no such sibling: compress here,
					// with the exporter's settings.
					data, err := afero.ReadFile(cfg.From, p)
					if err != nil {
						return fmt.Errorf("publish: read %s: %w", rel, err)
					}
					if comp == nil {
						if comp, err = exporter.NewCompressor(); err != nil {
							return err
						}
					}
					if o.data, err = comp.Compress(cfg.Encoding, data); err != nil {
						return fmt.Errorf("publish: compress %s: %w", rel, err)
					}
					o.size = int64(len(o.data))
					m, s := md5.Sum(o.data), sha256.Sum256(o.data)
					o.md5, o.sha256 = m[:], hex.EncodeToString(s[:])
				default:
					return fmt.Errorf("publish: read %s: %w", rel+cfg.Encoding.Ext, err)
				}
			}
		}
		if o.data == nil {
			if o.src == "" {
				o.src = rel
			}
			if err := hashFile(cfg.From, filepath.Join(cfg.FromDir, filepath.FromSlash(o.src)), o); err != nil {
				return err
			}
		}
		o.attrs.Metadata = map[string]string{MetadataHash: o.sha256}
		out[o.key] = o
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("publish: read %s: %w", cfg.FromDir, err)
	}
	return out, nil
}

// lstat returns the FileInfo of p without following a symbolic link where
// the file system can tell.
func lstat(fsys afero.Fs, p string) (fs.FileInfo, error) {
	if l, ok := fsys.(afero.Lstater); ok {
		fi, _, err := l.LstatIfPossible(p)
		return fi, err
	}
	return fsys.Stat(p)
}

// hashFile sets the size and hashes of o from the file p.
func hashFile(fsys afero.Fs, p string, o *local) error {
	f, err := fsys.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	m, s := md5.New(), sha256.New()
	n, err := io.Copy(io.MultiWriter(m, s), f)
	if err != nil {
		return fmt.Errorf("read %s: %w", o.src, err)
	}
	o.size, o.md5, o.sha256 = n, m.Sum(nil), hex.EncodeToString(s.Sum(nil))
	return nil
}

// remoteObject is what the listing tells of an object.
type remoteObject struct {
	size int64
	md5  []byte
}

// listRemote lists every object under prefix.
func listRemote(ctx context.Context, b *blob.Bucket, prefix string) (map[string]remoteObject, error) {
	out := map[string]remoteObject{}
	it := b.List(&blob.ListOptions{Prefix: prefix})
	for {
		obj, err := it.Next(ctx)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("publish: list %q: %w", prefix, err)
		}
		if !obj.IsDir {
			out[obj.Key] = remoteObject{obj.Size, obj.MD5}
		}
	}
}

// planUploads decides which objects to upload, in phase order, and counts
// the unchanged ones. Where the listing gives an MD5, it is compared with
// the local bytes; else the object's attributes are read and its
// MetadataHash and headers compared.
func planUploads(ctx context.Context, cfg Config, locals map[string]*local, remote map[string]remoteObject, rep *Report, uploads *[numPhases][]*local) error {
	keys := make([]string, 0, len(locals))
	for k := range locals {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	reasons := make([]string, len(keys))
	err := parallel(ctx, cfg.Jobs, len(keys), func(ctx context.Context, i int) error {
		o := locals[keys[i]]
		r, exists := remote[o.key]
		switch {
		case !exists:
			reasons[i] = "new"
		case cfg.Force:
			reasons[i] = "forced"
		case r.md5 != nil:
			if r.size != o.size || !equalBytes(r.md5, o.md5) {
				reasons[i] = "changed"
			}
		default:
			a, err := cfg.Bucket.Attributes(ctx, o.key)
			if err != nil {
				if gcerrors.Code(err) == gcerrors.NotFound {
					reasons[i] = "new"
					return nil
				}
				return fmt.Errorf("publish: attributes of %s: %w", o.key, err)
			}
			if a.Size != o.size || a.Metadata[MetadataHash] != o.sha256 || a.ContentType != o.attrs.ContentType ||
				a.ContentEncoding != o.attrs.ContentEncoding || a.CacheControl != o.attrs.CacheControl {
				reasons[i] = "changed"
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i, k := range keys {
		if reasons[i] == "" {
			rep.Unchanged++
			continue
		}
		o := locals[k]
		uploads[o.phase] = append(uploads[o.phase], o)
	}
	for phase := range uploads {
		for _, o := range uploads[phase] {
			i, _ := slices.BinarySearch(keys, o.key)
			rep.Planned = append(rep.Planned, Change{"upload", o.key, reasons[i]})
		}
	}
	return nil
}

func equalBytes(a, b []byte) bool { return string(a) == string(b) }

// upload writes one object and returns the bytes written. A file whose
// bytes changed since it was hashed fails the upload: its metadata would
// lie.
func upload(ctx context.Context, cfg Config, o *local) (int64, error) {
	opts := o.attrs
	if o.data != nil {
		if err := cfg.Bucket.WriteAll(ctx, o.key, o.data, &opts); err != nil {
			return 0, fmt.Errorf("publish: upload %s: %w", o.key, err)
		}
		return o.size, nil
	}
	f, err := cfg.From.Open(filepath.Join(cfg.FromDir, filepath.FromSlash(o.src)))
	if err != nil {
		return 0, fmt.Errorf("publish: open %s: %w", o.src, err)
	}
	defer f.Close()
	wctx, cancel := context.WithCancel(ctx)
	defer cancel() // an abandoned blob.Writer discards what it wrote
	w, err := cfg.Bucket.NewWriter(wctx, o.key, &opts)
	if err != nil {
		return 0, fmt.Errorf("publish: upload %s: %w", o.key, err)
	}
	var h hash.Hash = sha256.New()
	n, err := io.Copy(w, io.TeeReader(f, h))
	if err == nil && hex.EncodeToString(h.Sum(nil)) != o.sha256 {
		err = fmt.Errorf("%s changed while publishing; run publish again", o.src)
	}
	if err != nil {
		cancel()
		w.Close()
		return 0, fmt.Errorf("publish: upload %s: %w", o.key, err)
	}
	if err := w.Close(); err != nil {
		return 0, fmt.Errorf("publish: upload %s: %w", o.key, err)
	}
	return n, nil
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

// Package privatebucket keeps the private tree in a bucket: the exporter
// writes its private tree into a local folder, a cache, and a Mirror makes
// the bucket hold the same files, guide by guide, for sidecars that read
// it (records, ready events, private documents) and for the next exporter
// that starts on an empty folder (the exporter's records).
//
// Reader-safe order: a guide's private documents go up first, then its
// record.json, then its ready event; removals go the other way (the event
// first, so no event ever names a document that is gone). The exporter's
// record of the guide goes last of all: a record in the bucket says that
// everything it lists reached both buckets, so an exporter that starts
// from the bucket's records on an empty folder (Start) knows what is
// published. Each object carries the SHA-256 of its bytes as metadata
// (bucket.MetadataHash): the sidecar's ETag of a private document.
//
// The marks of the public ids a guide stopped publishing (records'
// removed marks, removed/<id> in the records folder) go up before the
// record that no longer lists them, and a mark is deleted from the bucket
// after the record that lists its id again, as the records write and
// delete them in the cache; Start and Pull bring them down with the
// records, so that a publisher on another machine knows what was
// withdrawn.
//
// Nothing here needs its own journal: Start compares the records folder
// of the cache with the bucket's, so a guide exported but not mirrored
// when the process stopped (its record differs) is mirrored again.
package privatebucket

import (
	"bytes"
	"context"
	"crypto/md5"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/afero"
	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/guidepub/guidepub/exporter/durable"
	"github.com/guidepub/guidepub/exporter/records"
	"github.com/guidepub/guidepub/site"
	"github.com/guidepub/guidepub/site/bucket"
)

// Config is where a Mirror copies from and to.
type Config struct {
	Bucket *blob.Bucket
	// Local and LocalDir are the private tree in a folder: the cache.
	Local    afero.Fs
	LocalDir string
	// RecordsDir is the folder of the exporter's records in the tree
	// ("exported", or "exported-i-of-n" for shard i of n).
	RecordsDir string
	Logger     *slog.Logger // nil: discard
}

// Mirror copies guides of the local private tree to the bucket. It is safe
// for concurrent use; one guide is mirrored at a time.
type Mirror struct {
	cfg Config
	log *slog.Logger

	syncing sync.Mutex // held by Sync: one guide at a time
	mu      sync.Mutex
	dirty   map[string]uint64 // guides whose bucket copy may differ from the cache, by the count of their marks
	marks   uint64            // marks made so far: the number of the latest

	Uploads, Deletes int // counted for reports and tests; read after the work
}

// New returns a Mirror for cfg.
func New(cfg Config) *Mirror {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Mirror{cfg: cfg, log: cfg.Logger, dirty: map[string]uint64{}}
}

// Start compares the records folder of the cache with the bucket's, before
// the exporter opens the records: a record the bucket has and the cache
// lacks is downloaded (a new machine, an emptied folder: the exporter then
// knows what is published and removes what a removed bundle left), and a
// guide whose record differs or exists only in the cache is due (Dirty):
// exported here and not mirrored yet. It returns how many records it
// downloaded; when any, the ids index of the cache is dropped, to be
// rebuilt from the records by the exporter.
func (m *Mirror) Start(ctx context.Context) (downloaded int, err error) {
	remote, local, err := m.bothRecords(ctx)
	if err != nil {
		return 0, err
	}
	for id, sum := range local {
		r, ok := remote[id]
		if ok && bytes.Equal(r, sum) {
			continue
		}
		if ok {
			same, err := m.sameRecord(ctx, id)
			if err != nil {
				return 0, err
			}
			if same {
				continue
			}
		}
		m.MarkDirty(id)
	}
	for id := range remote {
		if _, ok := local[id]; ok {
			continue
		}
		if err := m.download(ctx, m.recordKey(id)); err != nil {
			return downloaded, err
		}
		downloaded++
	}
	if downloaded > 0 {
		m.dropIDsIndex()
	}
	if _, err := m.pullMarks(ctx, false); err != nil {
		return downloaded, err
	}
	return downloaded, nil
}

// marksDir is the folder of the removed marks in the records folder.
func (m *Mirror) marksDir() string { return m.cfg.RecordsDir + "/" + records.RemovedDir + "/" }

// pullMarks downloads the removed marks the cache lacks or holds other
// bytes of; with exact, it also deletes the cache's marks the bucket does
// not have. It returns how many marks it downloaded.
func (m *Mirror) pullMarks(ctx context.Context, exact bool) (int, error) {
	remote, err := m.list(ctx, m.marksDir(), "/")
	if err != nil {
		return 0, err
	}
	local, err := m.localFiles(m.marksDir())
	if err != nil {
		return 0, err
	}
	n := 0
	for key, o := range remote {
		if !site.ValidID.MatchString(path.Base(key)) {
			continue
		}
		if slices.Contains(local, key) && (o.md5 == nil || m.localMD5(key) == string(o.md5)) {
			continue
		}
		if err := m.download(ctx, key); err != nil {
			return n, err
		}
		n++
	}
	if exact {
		for _, key := range local {
			if _, ok := remote[key]; !ok {
				if err := m.cfg.Local.Remove(m.localPath(key)); err != nil && !errors.Is(err, os.ErrNotExist) {
					return n, fmt.Errorf("mirror: %w", err)
				}
			}
		}
	}
	return n, nil
}

// localMD5 returns the MD5 of the cache's file key, "" when it cannot be
// read.
func (m *Mirror) localMD5(key string) string {
	b, err := afero.ReadFile(m.cfg.Local, m.localPath(key))
	if err != nil {
		return ""
	}
	h := md5.Sum(b)
	return string(h[:])
}

// Pull makes the cache's records folder a copy of the bucket's, for a
// process that reads the records and writes none (publish): records
// missing or different are downloaded, records the bucket no longer has
// are removed. Never Pull into an exporter's cache: its records may be
// newer than the bucket's. It returns how many records it downloaded.
func (m *Mirror) Pull(ctx context.Context) (int, error) {
	remote, local, err := m.bothRecords(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for id, sum := range remote {
		if l, ok := local[id]; ok && sum != nil && bytes.Equal(l, sum) {
			continue
		}
		if err := m.download(ctx, m.recordKey(id)); err != nil {
			return n, err
		}
		n++
	}
	gone := 0
	for id := range local {
		if _, ok := remote[id]; !ok {
			if err := m.cfg.Local.Remove(m.localPath(m.recordKey(id))); err != nil && !errors.Is(err, os.ErrNotExist) {
				return n, fmt.Errorf("mirror: %w", err)
			}
			gone++
		}
	}
	if n+gone > 0 {
		m.dropIDsIndex()
	}
	if _, err := m.pullMarks(ctx, true); err != nil {
		return n, err
	}
	return n, nil
}

// MarkDirty says that guideID's private files changed in the cache.
func (m *Mirror) MarkDirty(guideID string) {
	m.mu.Lock()
	m.marks++
	m.dirty[guideID] = m.marks
	m.mu.Unlock()
}

// Dirty returns the guides marked and not mirrored since, sorted.
func (m *Mirror) Dirty() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	ids := make([]string, 0, len(m.dirty))
	for id := range m.dirty {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// SyncDirty mirrors every guide marked dirty; it returns the errors of
// those it could not (they stay dirty).
func (m *Mirror) SyncDirty(ctx context.Context) error {
	var errs []error
	for _, id := range m.Dirty() {
		errs = append(errs, m.sync(ctx, id, true))
	}
	return errors.Join(errs...)
}

// Sync makes the bucket hold guideID's private files as the cache does:
// guides/<id>/ in reader-safe order, then the exporter's record (see the
// package comment). Unchanged objects (same MD5, or same SHA-256 metadata
// where the listing gives no MD5) are not uploaded again.
func (m *Mirror) Sync(ctx context.Context, guideID string) error { return m.sync(ctx, guideID, false) }

// sync is Sync; with onlyDirty, a guide no longer marked (mirrored by
// another call meanwhile) is left alone.
func (m *Mirror) sync(ctx context.Context, guideID string, onlyDirty bool) error {
	if !site.ValidID.MatchString(guideID) {
		return fmt.Errorf("mirror: %q is not a guide id", guideID)
	}
	m.syncing.Lock()
	defer m.syncing.Unlock()
	m.mu.Lock()
	mark, dirty := m.dirty[guideID]
	m.mu.Unlock()
	if onlyDirty && !dirty {
		return nil
	}
	before, err := m.remoteRecord(ctx, guideID)
	if err != nil {
		return err
	}
	dropped, listed, err := m.idsChanged(guideID, before)
	if err != nil {
		return err
	}
	if err := m.syncGuideFiles(ctx, guideID); err != nil {
		return err
	}
	// The marks of the ids the guide dropped go up before the record
	// that no longer lists them; those of the ids it lists again go
	// after the record that does.
	for _, pid := range dropped {
		if err := m.put(ctx, m.marksDir()+pid, nil); err != nil {
			return err
		}
	}
	if err := m.syncRecord(ctx, guideID, before); err != nil {
		return err
	}
	for _, pid := range listed {
		if _, err := m.cfg.Local.Stat(m.localPath(m.marksDir() + pid)); err == nil {
			continue // marked again meanwhile: its guide's next Sync decides
		}
		if err := m.delete(ctx, m.marksDir()+pid); err != nil {
			return err
		}
	}
	m.mu.Lock()
	if m.dirty[guideID] == mark { // not marked again while it was mirrored
		delete(m.dirty, guideID)
	}
	m.mu.Unlock()
	return nil
}

// syncGuideFiles makes the bucket's guides/<id>/ what the cache holds, in
// reader-safe order (see the package comment).
func (m *Mirror) syncGuideFiles(ctx context.Context, guideID string) error {
	prefix := path.Dir(site.RecordPath(guideID)) + "/"
	remote, err := m.list(ctx, prefix, "")
	if err != nil {
		return err
	}
	local, err := m.localFiles(prefix)
	if err != nil {
		return err
	}
	// Uploads: documents, then record.json, then event.json.
	order := func(key string) int {
		switch key {
		case site.RecordPath(guideID):
			return 1
		case site.EventPath(guideID):
			return 2
		}
		return 0
	}
	slices.SortStableFunc(local, func(a, b string) int { return order(a) - order(b) })
	// Removals: event.json, then the documents, then record.json.
	removal := [3]int{1, 2, 0} // by order: documents, record.json, event.json
	for _, key := range local {
		if err := m.put(ctx, key, remote[key]); err != nil {
			return err
		}
	}
	var gone []string
	for key := range remote {
		if !slices.Contains(local, key) {
			gone = append(gone, key)
		}
	}
	slices.SortFunc(gone, func(a, b string) int { return removal[order(a)] - removal[order(b)] })
	for _, key := range gone {
		if err := m.delete(ctx, key); err != nil {
			return err
		}
	}
	return nil
}

// remoteRecord returns the bucket's record of guideID, nil when there is
// none.
func (m *Mirror) remoteRecord(ctx context.Context, guideID string) ([]byte, error) {
	key := m.recordKey(guideID)
	data, err := m.cfg.Bucket.ReadAll(ctx, key)
	if gcerrors.Code(err) == gcerrors.NotFound {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("mirror: read %s: %w", key, err)
	}
	return data, nil
}

// idsChanged returns the public ids remote, the bucket's record of
// guideID (nil: none), lists and the cache's does not (dropped: their
// removed marks go up, when the cache has them), and those the cache's
// lists and remote does not (listed again, or new: any mark of theirs
// goes). A missing or unreadable record lists nothing.
func (m *Mirror) idsChanged(guideID string, remote []byte) (dropped, listed []string, err error) {
	key := m.recordKey(guideID)
	var before, local []string
	if remote != nil {
		before, _ = records.RecordIDs(remote)
	}
	data, err := afero.ReadFile(m.cfg.Local, m.localPath(key))
	switch {
	case err == nil:
		local, _ = records.RecordIDs(data)
	case !errors.Is(err, fs.ErrNotExist):
		return nil, nil, fmt.Errorf("mirror: read %s: %w", key, err)
	}
	for _, pid := range before {
		if !slices.Contains(local, pid) && site.ValidID.MatchString(pid) {
			dropped = append(dropped, pid)
		}
	}
	for _, pid := range local {
		if !slices.Contains(before, pid) && site.ValidID.MatchString(pid) {
			listed = append(listed, pid)
		}
	}
	return dropped, listed, nil
}

// syncRecord uploads or deletes the exporter's record of guideID; remote
// is the bucket's (nil: none).
func (m *Mirror) syncRecord(ctx context.Context, guideID string, remote []byte) error {
	key := m.recordKey(guideID)
	_, err := m.cfg.Local.Stat(m.localPath(key))
	if errors.Is(err, fs.ErrNotExist) {
		if remote == nil {
			return nil
		}
		return m.delete(ctx, key)
	}
	if err != nil {
		return err
	}
	same, err := m.sameAs(guideID, remote)
	if err != nil || same {
		return err
	}
	return m.put(ctx, key, nil)
}

// sameRecord reports whether the bucket's record of guideID says what the
// cache's does, stamps aside (records.SameButStamps): a record written
// again by another machine, or on an emptied folder, is not uploaded.
func (m *Mirror) sameRecord(ctx context.Context, guideID string) (bool, error) {
	remote, err := m.remoteRecord(ctx, guideID)
	if err != nil {
		return false, err
	}
	return m.sameAs(guideID, remote)
}

// sameAs reports whether remote, the bucket's record of guideID (nil:
// none), says what the cache's does, stamps aside.
func (m *Mirror) sameAs(guideID string, remote []byte) (bool, error) {
	if remote == nil {
		return false, nil
	}
	key := m.recordKey(guideID)
	local, err := afero.ReadFile(m.cfg.Local, m.localPath(key))
	if err != nil {
		return false, fmt.Errorf("mirror: read %s: %w", key, err)
	}
	return records.SameButStamps(local, remote), nil
}

func (m *Mirror) recordKey(guideID string) string { return m.cfg.RecordsDir + "/" + guideID + ".json" }

func (m *Mirror) localPath(key string) string {
	return filepath.Join(m.cfg.LocalDir, filepath.FromSlash(key))
}

// put uploads the cache's file key unless the object r already holds it.
// The file is read twice, streaming (hashed, then uploaded), so a private
// document of any size costs a buffer, not its size; a file replaced
// between the two reads is not uploaded under the first read's hash.
func (m *Mirror) put(ctx context.Context, key string, r *object) error {
	f, err := m.cfg.Local.Open(m.localPath(key))
	if errors.Is(err, fs.ErrNotExist) {
		return nil // removed since the walk: the next Sync deletes it
	}
	if err != nil {
		return fmt.Errorf("mirror: read %s: %w", key, err)
	}
	defer f.Close()
	d, err := bucket.DigestOf(f)
	if err != nil {
		return fmt.Errorf("mirror: read %s: %w", key, err)
	}
	sha := d.SHA256
	if r != nil && r.size == d.Size {
		if r.md5 != nil {
			if bytes.Equal(r.md5, d.MD5) {
				return nil
			}
		} else if a, err := m.cfg.Bucket.Attributes(ctx, key); err == nil && a.Metadata[bucket.MetadataHash] == sha {
			return nil
		}
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("mirror: read %s: %w", key, err)
	}
	if err := m.upload(ctx, key, f, sha); err != nil {
		return err
	}
	m.mu.Lock()
	m.Uploads++
	m.mu.Unlock()
	return nil
}

// upload writes the object key from f, whose SHA-256 was sha when it was
// hashed; the write is abandoned when the bytes read now differ.
func (m *Mirror) upload(ctx context.Context, key string, f io.Reader, sha string) error {
	opts := &blob.WriterOptions{ContentType: site.ContentType(key), Metadata: map[string]string{bucket.MetadataHash: sha}}
	_, err := bucket.WriteChecked(ctx, m.cfg.Bucket, key, f, sha, opts)
	if errors.Is(err, bucket.ErrChanged) {
		return fmt.Errorf("mirror: %s changed while it was uploaded; the next Sync uploads it", key)
	}
	if err != nil {
		return fmt.Errorf("mirror: upload %s: %w", key, err)
	}
	return nil
}

func (m *Mirror) delete(ctx context.Context, key string) error {
	err := m.cfg.Bucket.Delete(ctx, key)
	if gcerrors.Code(err) == gcerrors.NotFound {
		return nil
	}
	if err != nil {
		return fmt.Errorf("mirror: delete %s: %w", key, err)
	}
	m.mu.Lock()
	m.Deletes++
	m.mu.Unlock()
	return nil
}

// object is what a listing tells of an object.
type object struct {
	size int64
	md5  []byte
}

// list returns the objects under prefix (all depths when delim is "").
func (m *Mirror) list(ctx context.Context, prefix, delim string) (map[string]*object, error) {
	out := map[string]*object{}
	it := m.cfg.Bucket.List(&blob.ListOptions{Prefix: prefix, Delimiter: delim})
	for {
		o, err := it.Next(ctx)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("mirror: list %s: %w", prefix, err)
		}
		if !o.IsDir {
			out[o.Key] = &object{size: o.Size, md5: o.MD5}
		}
	}
}

// localFiles returns the keys of the regular files under prefix in the
// cache.
func (m *Mirror) localFiles(prefix string) ([]string, error) {
	var keys []string
	root := m.localPath(prefix)
	err := afero.Walk(m.cfg.Local, root, func(p string, fi fs.FileInfo, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if fi.Mode().IsRegular() && !strings.HasPrefix(fi.Name(), ".") {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			keys = append(keys, prefix+filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("mirror: walk %s: %w", prefix, err)
	}
	return keys, nil
}

// bothRecords returns the MD5 of each guide's record in the bucket and in
// the cache.
func (m *Mirror) bothRecords(ctx context.Context) (remote, local map[string][]byte, err error) {
	if remote, err = m.listRecords(ctx); err != nil {
		return nil, nil, err
	}
	local, err = m.localRecords()
	return remote, local, err
}

// listRecords returns the MD5 of each guide's record in the bucket.
func (m *Mirror) listRecords(ctx context.Context) (map[string][]byte, error) {
	objs, err := m.list(ctx, m.cfg.RecordsDir+"/", "/")
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for key, o := range objs {
		if id, ok := recordID(path.Base(key)); ok {
			out[id] = o.md5
		}
	}
	return out, nil
}

// localRecords returns the MD5 of each guide's record in the cache.
func (m *Mirror) localRecords() (map[string][]byte, error) {
	dir := m.localPath(m.cfg.RecordsDir)
	ents, err := afero.ReadDir(m.cfg.Local, dir)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string][]byte{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("mirror: %w", err)
	}
	out := map[string][]byte{}
	for _, e := range ents {
		id, ok := recordID(e.Name())
		if !ok || !e.Mode().IsRegular() {
			continue
		}
		b, err := afero.ReadFile(m.cfg.Local, filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("mirror: %w", err)
		}
		h := md5.Sum(b)
		out[id] = h[:]
	}
	return out, nil
}

// recordID returns the guide id of a record's file name.
func recordID(name string) (string, bool) {
	id, ok := strings.CutSuffix(name, ".json")
	return id, ok && site.ValidID.MatchString(id)
}

// download writes the object key into the cache, atomically.
func (m *Mirror) download(ctx context.Context, key string) error {
	b, err := m.cfg.Bucket.ReadAll(ctx, key)
	if err != nil {
		return fmt.Errorf("mirror: download %s: %w", key, err)
	}
	p := m.localPath(key)
	if err := m.cfg.Local.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return fmt.Errorf("mirror: %w", err)
	}
	d := durable.Dir{Fs: m.cfg.Local, Path: filepath.Dir(p)}
	if err := d.Write(filepath.Base(p), b); err != nil {
		return fmt.Errorf("mirror: write %s: %w", key, err)
	}
	return nil
}

// dropIDsIndex removes the marker of a complete ids index from the cache:
// records came from the bucket that the index does not list.
func (m *Mirror) dropIDsIndex() {
	p := m.localPath(m.cfg.RecordsDir + "/" + records.IDsMarker)
	if err := m.cfg.Local.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		m.log.Warn("ids index marker not removed", "error", err.Error())
	}
}

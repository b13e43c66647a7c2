package records

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/exporter/ledger"
	"github.com/guidepub/guidepub/exporter/render"
	"github.com/guidepub/guidepub/exporter/write"
	"github.com/guidepub/guidepub/site"
	"github.com/guidepub/guidepub/site/bucket"
)

// recordVersion is the version of the per-guide record format this package
// writes: 3 records the ledger of the private files too, with change
// times and media sources; a record of version 2 is read as a ledger of
// the public files only.
const recordVersion = 3

// oldestRecordVersion is the oldest record format this package reads.
const oldestRecordVersion = 2

// RecordsDir returns the private-tree folder of the exporter's per-guide
// records of shard i of n: "exported" for an unsharded export, else
// "exported-<i>-of-<n>". Each shard keeps its own.
func RecordsDir(i, n int) string {
	if n <= 1 {
		return recordsDir
	}
	return fmt.Sprintf("%s-%d-of-%d", recordsDir, i, n)
}

// recordsDir is the records folder of an unsharded export.
const recordsDir = "exported"

// record is what the exporter keeps per guide in RecordsDir: its manifest
// entry (site.ManifestGuide) with the guide's ledger (package ledger: each
// file's digests, stamp and media source). Its file has two lines of
// JSON: the head (recordHead: the entry, with the files' paths), then the
// ledger entry of each public file, then of each private one, in the
// order of the head's lists, so that reading every record at start
// decodes the heads only (about a quarter of the bytes).
type record struct {
	recordHead
	// Ledger is the guide's ledger: Files and Private with their entries
	// (Private empty in a record of version 2).
	Ledger ledger.Guide
}

// recordHead is the first line of a record file: the guide's summary,
// then its lists of files and inputs.
type recordHead struct {
	recordSummary
	Files   []string `json:"files"` // public files, sorted
	Private []string `json:"private"`
	Inputs  []string `json:"inputs,omitempty"`
	// Seal is the ledger's seal (ledger.Guide.Seal): whether every file
	// is as recorded is checked from the head alone.
	Seal string `json:"seal,omitempty"`
}

// recordSummary is a record's head without its lists of files and inputs:
// what Records keeps in memory of every guide (see summary). Decoding a
// head into it (decodeSummary) skips those lists without making their
// strings, most of the work of reading every record at start.
type recordSummary struct {
	Version    int        `json:"version"`
	GuideID    string     `json:"guideId"`
	Folder     string     `json:"folder"`
	Revision   string     `json:"revision"`
	Ids        []string   `json:"ids"`
	Source     string     `json:"source,omitempty"`
	NextChange *time.Time `json:"nextChange,omitempty"`
	Views      int        `json:"views,omitempty"`
	Ready      bool       `json:"ready,omitempty"`
	Quick      []string   `json:"quick,omitempty"`
	Visibility string     `json:"visibility,omitempty"`
}

// entry returns the manifest entry a record head holds.
func (h *recordHead) entry() site.ManifestGuide {
	return site.ManifestGuide{Folder: h.Folder, Revision: h.Revision, Ids: h.Ids, Files: h.Files, Private: h.Private,
		Source: h.Source, Inputs: h.Inputs, NextChange: h.NextChange, Views: h.Views, Ready: h.Ready, Quick: h.Quick,
		Visibility: h.Visibility, Seal: h.Seal}
}

// newRecord returns the record of guide id with entry mg, whose files are
// described by l (same paths, same order); private files l does not
// describe (nil) are recorded by path only.
func newRecord(id string, mg site.ManifestGuide, l ledger.Guide) *record {
	if l.Private == nil && len(mg.Private) > 0 {
		l.Private = make(ledger.Ledger, len(mg.Private))
		for i, p := range mg.Private {
			l.Private[i] = ledger.Entry{Path: p}
		}
	}
	return &record{recordHead: recordHead{recordSummary: recordSummary{Version: recordVersion, GuideID: id, Folder: mg.Folder,
		Revision: mg.Revision, Ids: mg.Ids, Source: mg.Source, NextChange: mg.NextChange, Views: mg.Views, Ready: mg.Ready,
		Quick: mg.Quick, Visibility: mg.Visibility}, Files: mg.Files, Private: mg.Private, Inputs: mg.Inputs, Seal: mg.Seal}, Ledger: l}
}

// encode returns the two lines of the record's file.
func (rec *record) encode() ([]byte, error) {
	head, err := render.MarshalJSON(rec.recordHead)
	if err != nil {
		return nil, err
	}
	tail, err := render.MarshalJSON(slices.Concat(rec.Ledger.Public, rec.Ledger.Private))
	if err != nil {
		return nil, err
	}
	return append(head, tail...), nil
}

// decodeSummary decodes the summary of the record file data: its head
// without the lists of files and inputs.
func decodeSummary(data []byte) (*record, error) {
	head, _, _ := bytes.Cut(data, []byte("\n"))
	var rec record
	if err := json.Unmarshal(head, &rec.recordSummary); err != nil {
		return nil, err
	}
	return &rec, nil
}

// decodeRecord decodes the file data of a record; with full false, the head
// only (Public stays nil).
func decodeRecord(data []byte, full bool) (*record, error) {
	head, tail, _ := bytes.Cut(data, []byte("\n"))
	var rec record
	if err := json.Unmarshal(head, &rec.recordHead); err != nil {
		return nil, err
	}
	if !full {
		return &rec, nil
	}
	var entries ledger.Ledger
	if err := json.Unmarshal(tail, &entries); err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	paths := rec.Files
	if len(entries) != len(rec.Files) || rec.Version >= 3 {
		paths = slices.Concat(rec.Files, rec.Private)
	}
	if len(entries) != len(paths) {
		return nil, fmt.Errorf("%d ledger entries for %d files", len(entries), len(paths))
	}
	for i := range entries {
		entries[i].Path = paths[i]
	}
	rec.Ledger.Public, rec.Ledger.Private = entries[:len(rec.Files):len(rec.Files)], entries[len(rec.Files):]
	return &rec, nil
}

// Records is what an exporter published, one record per guide id: in
// memory, a summary of each guide's manifest entry (its folder, ids,
// revision and fingerprint: everything but its lists of files and
// inputs), indexed by public id (view id or alias) and by bundle folder,
// so that a claim or a folder's removal looks up what it needs in one
// step; on disk, one small file per guide in RecordsDir of the private
// tree, written atomically when that guide is exported or removed, so
// that one guide's change rewrites that guide's record only. A guide's
// lists of files (Get) and the hashes and stamps of its public files
// (PublicFiles, Lookup) are read from its record when asked for, keeping
// those of a few guides: memory grows by a summary per guide, whatever
// the number of files. Records an exporter opens (StartRecords) are read
// in the background: until then, the methods that need every guide wait
// (Wait), and those a claim and an export use (Entry, Save, Set) work
// from the guide's own record and the ids index. Methods are safe for
// concurrent use.
type Records struct {
	t   write.Tree // the private tree
	dir string     // RecordsDir

	// ready is closed once every record is read (load), with loadErr
	// set before. Until then, what needs every record waits, and a claim
	// looks its ids up in the ids index (idindex.go) when it is complete.
	ready   chan struct{}
	loadErr error

	mu     sync.Mutex
	guides map[string]site.ManifestGuide // summaries (summary)
	owners map[string]string             // public id -> guide id
	byDir  map[string][]string           // bundle folder -> guide ids, sorted (almost always one)
	cache  map[string]*record            // a few records read for Lookup
	heads  map[string]site.ManifestGuide // a few whole entries read or Set
	// touched are the guides Set or Forgotten while loading: what memory
	// holds of them is what is on disk, and the load leaves them alone.
	// It is nil once the load has ended (finishLoad): under mu, a non-nil
	// touched means the records are still being read.
	touched map[string]bool
	// indexed is true when the ids index was complete at start.
	indexed bool
}

// cacheSize bounds the records and entries Records keeps read.
const cacheSize = 64

// summary returns mg without its lists of files and inputs: what Records
// keeps in memory of every guide (its quick siblings stay: a short list,
// and only until the guide's next export).
func summary(mg site.ManifestGuide) site.ManifestGuide {
	mg.Files, mg.Private, mg.Inputs = nil, nil, nil
	return mg
}

// OpenRecords reads the records of shard i of n (n <= 1: unsharded) from the
// private tree privateDir of fsys, for a reader (a publisher, a tool). A
// legacy manifest.json (or manifest-i-of-n.json), the single file earlier
// versions kept, is converted first: every guide of it becomes a record (public files with
// no hash yet), then the file is deleted; an interrupted conversion is
// done again on the next open. It returns an error when a record or the
// legacy manifest cannot be read or decoded.
func OpenRecords(fsys afero.Fs, privateDir string, i, n int) (*Records, error) {
	r, err := openRecords(fsys, privateDir, i, n)
	if err != nil {
		return nil, err
	}
	r.finishLoad(r.load())
	return r, nil
}

// StartRecords is OpenRecords for the exporter that writes the records: it
// returns once a legacy manifest is converted and reads the records in
// the background (Wait waits for them). Meanwhile a claim is checked
// through the ids index (idindex.go), when it is complete, and what needs
// every record waits. A records folder whose ids index is not complete
// (written by an earlier version) gets it once its records are read,
// before Wait returns.
func StartRecords(fsys afero.Fs, privateDir string, i, n int) (*Records, error) {
	r, err := openRecords(fsys, privateDir, i, n)
	if err != nil {
		return nil, err
	}
	// No records folder yet: no record lists any id, the index is complete.
	marked := r.indexComplete()
	_, err = r.t.FS.Stat(r.t.Abs(r.dir))
	r.indexed = marked || errors.Is(err, fs.ErrNotExist)
	go func() {
		err := r.load()
		if err == nil && !marked {
			err = r.buildIndex()
		}
		r.finishLoad(err)
	}()
	return r, nil
}

// openRecords returns the records of shard i of n, not read yet, once a
// legacy manifest is converted.
func openRecords(fsys afero.Fs, privateDir string, i, n int) (*Records, error) {
	r := newRecords(write.Tree{FS: fsys, Root: privateDir, Perm: 0o600}, RecordsDir(i, n))
	if err := r.migrate(ManifestName(i, n)); err != nil {
		return nil, err
	}
	return r, nil
}

// finishLoad ends the load with its error.
func (r *Records) finishLoad(err error) {
	r.mu.Lock()
	r.loadErr = err
	r.touched = nil
	r.mu.Unlock()
	close(r.ready)
}

// Wait waits until every record is read and returns the error of the one
// that could not be, if any.
func (r *Records) Wait() error {
	<-r.ready
	return r.loadErr
}

// Ready is closed once every record is read.
func (r *Records) Ready() <-chan struct{} { return r.ready }

// Loaded reports whether every record has been read (Wait would not
// wait).
func (r *Records) Loaded() bool {
	select {
	case <-r.ready:
		return true
	default:
		return false
	}
}

// newRecords returns empty records kept in folder dir of t.
func newRecords(t write.Tree, dir string) *Records {
	return &Records{t: t, dir: dir, guides: map[string]site.ManifestGuide{}, owners: map[string]string{},
		byDir: map[string][]string{}, cache: map[string]*record{}, heads: map[string]site.ManifestGuide{},
		ready: make(chan struct{}), touched: map[string]bool{}}
}

// file returns the private-tree path of the record of guide id.
func (r *Records) file(id string) string { return r.dir + "/" + id + ".json" }

// load reads every record in the records folder, GOMAXPROCS at a time
// (names are listed without a stat each), keeping their summaries.
// Thirty-two at a time made no difference measured from the disk
// (BenchmarkOpenRecords, cold: 0.9 to 1.3 s at 10,000 records either way).
func (r *Records) load() error {
	dir, err := r.t.FS.Open(r.t.Abs(r.dir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("exporter: read records: %w", err)
	}
	names, err := dir.Readdirnames(-1)
	dir.Close()
	if err != nil {
		return fmt.Errorf("exporter: read records: %w", err)
	}
	var ids []string
	for _, name := range names {
		if strings.HasPrefix(name, site.TempPrefix) {
			// Left by a process killed while writing a record, unless
			// written since this process started.
			p := r.t.Abs(r.dir + "/" + name)
			if fi, err := r.t.FS.Stat(p); err == nil && fi.Mode().IsRegular() && fi.ModTime().Before(write.ProcessStart()) {
				_ = r.t.FS.Remove(p)
			}
			continue
		}
		if id, ok := strings.CutSuffix(name, ".json"); ok && !strings.HasPrefix(name, ".") && name != idsMarker {
			ids = append(ids, id)
		}
	}
	errs := make([]error, len(ids))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(ids)) {
		wg.Go(func() {
			for i := range next {
				// Each record's summary is kept as it is read: the
				// heads are never all in memory at once.
				rec, err := r.readWith(ids[i], decodeSummary)
				if errs[i] = err; err == nil {
					r.loaded(rec.GuideID, rec.entry())
				}
			}
		})
	}
	for i := range ids {
		next <- i
	}
	close(next)
	wg.Wait()
	return errors.Join(errs...)
}

// read reads and decodes the record of guide id (its head only unless
// full).
func (r *Records) read(id string, full bool) (*record, error) {
	return r.readWith(id, func(data []byte) (*record, error) { return decodeRecord(data, full) })
}

// readWith reads the record of guide id and decodes it with decode.
func (r *Records) readWith(id string, decode func([]byte) (*record, error)) (*record, error) {
	data, err := r.t.Read(r.file(id))
	if err != nil {
		return nil, fmt.Errorf("exporter: read record: %w", err)
	}
	rec, err := decode(data)
	if err != nil {
		return nil, fmt.Errorf("exporter: record %s: %w", r.t.Abs(r.file(id)), err)
	}
	if rec.Version < oldestRecordVersion || rec.Version > recordVersion || rec.GuideID != id {
		return nil, fmt.Errorf("exporter: record %s: version %d of guide %q, want version %d to %d of guide %q",
			r.t.Abs(r.file(id)), rec.Version, rec.GuideID, oldestRecordVersion, recordVersion, id)
	}
	return rec, nil
}

// migrate converts the legacy manifest legacy, when there is one, into
// records and deletes it.
func (r *Records) migrate(legacy string) error {
	data, err := r.t.Read(legacy)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("exporter: read manifest: %w", err)
	}
	var m site.Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("exporter: manifest %s: %w", r.t.Abs(legacy), err)
	}
	if m.Version != 1 {
		return fmt.Errorf("exporter: manifest %s: version %d, want 1", r.t.Abs(legacy), m.Version)
	}
	// The records it becomes are not in the ids index: it is complete again
	// once they are read (StartRecords).
	if err := r.t.FS.Remove(r.t.Abs(r.dir + "/" + idsMarker)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("exporter: convert manifest: %w", err)
	}
	for _, id := range slices.Sorted(maps.Keys(m.Guides)) {
		mg := m.Guides[id]
		l := ledger.Guide{Public: make(ledger.Ledger, len(mg.Files))}
		for i, p := range mg.Files {
			l.Public[i] = ledger.Entry{Path: p}
		}
		if err := r.write(newRecord(id, mg, l)); err != nil {
			return err
		}
	}
	if err := r.t.FS.Remove(r.t.Abs(legacy)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("exporter: delete converted manifest: %w", err)
	}
	return nil
}

// write writes rec atomically to its file.
func (r *Records) write(rec *record) error {
	data, err := rec.encode()
	if err != nil {
		return fmt.Errorf("save record of %s: %w", rec.GuideID, err)
	}
	if err := r.t.WriteSynced(r.file(rec.GuideID), data); err != nil {
		return fmt.Errorf("save record of %s: %w", rec.GuideID, err)
	}
	r.mu.Lock()
	delete(r.cache, rec.GuideID)
	delete(r.heads, rec.GuideID)
	r.mu.Unlock()
	return nil
}

// Delete deletes the record file of guide id, then the files of the ids
// index that name it. Its ids are marked removed first (removed.go). It
// returns an error when a mark cannot be written or the record deleted.
func (r *Records) Delete(id string) error {
	r.mu.Lock()
	ids := r.guides[id].Ids
	r.mu.Unlock()
	if ids == nil {
		if rec, err := r.read(id, false); err == nil {
			ids = rec.Ids
		}
	}
	if err := r.markRemoved(id, ids); err != nil {
		return fmt.Errorf("delete record of %s: %w", id, err)
	}
	if err := r.t.Remove(r.file(id), map[string]bool{r.dir: true}); err != nil {
		return fmt.Errorf("delete record of %s: %w", id, err)
	}
	r.mu.Lock()
	delete(r.cache, id)
	delete(r.heads, id)
	r.mu.Unlock()
	r.unlink(id, ids)
	return nil
}

// Get returns the entry of guide id, read from its record (or from the
// few kept since); a guide whose record cannot be read gives its summary
// (no files). For tests and tools: the exporter reads entries with Entry.
func (r *Records) Get(id string) (site.ManifestGuide, bool) {
	<-r.ready
	r.mu.Lock()
	sum, ok := r.guides[id]
	mg, kept := r.heads[id]
	r.mu.Unlock()
	if !ok {
		return site.ManifestGuide{}, false
	}
	if kept {
		return mg, true
	}
	rec, err := r.read(id, false)
	if err != nil {
		return sum, true
	}
	mg = rec.entry()
	r.keepHead(id, mg)
	return mg, true
}

// Entry is Get for a caller that acts on the lists of files: it returns
// the error of a record that cannot be read rather than the summary
// alone, so that no file is taken for up to date, kept or left behind
// because its list could not be read.
//
// Before every record is read, a guide not known yet is looked up in its
// record file.
func (r *Records) Entry(id string) (site.ManifestGuide, bool, error) {
	r.mu.Lock()
	_, ok := r.guides[id]
	early := r.unknown(id)
	mg, kept := r.heads[id]
	r.mu.Unlock()
	if !ok && !early {
		return site.ManifestGuide{}, false, r.failed()
	}
	if kept {
		return mg, true, nil
	}
	rec, err := r.read(id, false)
	if early && errors.Is(err, fs.ErrNotExist) {
		return site.ManifestGuide{}, false, nil
	}
	if err != nil {
		return site.ManifestGuide{}, true, fmt.Errorf("record of guide %s: %w", id, err)
	}
	mg = rec.entry()
	r.keepHead(id, mg)
	return mg, true, nil
}

// Summary returns the entry of guide id as kept in memory: without its
// lists of files and inputs. It waits until every record is read.
func (r *Records) Summary(id string) (site.ManifestGuide, bool) {
	<-r.ready
	r.mu.Lock()
	defer r.mu.Unlock()
	mg, ok := r.guides[id]
	return mg, ok
}

// unknown reports whether guide id is not known in memory yet: the
// records are being read, and it was neither read nor touched. r.mu is
// held.
func (r *Records) unknown(id string) bool {
	_, ok := r.guides[id]
	return !ok && r.touched != nil && !r.touched[id]
}

// failed returns the error of a load that ended with one: what memory
// holds then is not every guide, and a claim or an entry must not rely on
// it.
func (r *Records) failed() error {
	if r.Loaded() {
		return r.loadErr
	}
	return nil
}

// guide returns the summary of guide id (its entry without lists of
// files), for a claim: from memory, or before every record is read, from
// its record file.
// PublishedGuide returns the record of the published guide id, and false
// when none is: what a claim is checked against (claims.Published).
func (r *Records) PublishedGuide(id string) (site.ManifestGuide, bool, error) { return r.guide(id) }

// PublicIDOwner returns the guide publishing the public id and its
// record, and false when none does (claims.Published).
func (r *Records) PublicIDOwner(id string) (string, site.ManifestGuide, bool, error) {
	return r.owner(id)
}

func (r *Records) guide(id string) (site.ManifestGuide, bool, error) {
	r.mu.Lock()
	mg, ok := r.guides[id]
	early := r.unknown(id)
	r.mu.Unlock()
	if !early {
		return mg, ok, r.failed()
	}
	rec, err := r.readWith(id, decodeSummary)
	if errors.Is(err, fs.ErrNotExist) {
		return site.ManifestGuide{}, false, nil
	}
	if err != nil {
		// Not known: the load reports what is wrong with it.
		if err := r.Wait(); err != nil {
			return site.ManifestGuide{}, false, err
		}
		return r.guide(id)
	}
	return rec.entry(), true, nil
}

// owner returns the guide id and summary of the guide publishing the
// public id (a view id or an alias), for a claim. Before every record is
// read, an id not known in memory is looked up in the ids index
// (idindex.go), and the claim waits for every record when it cannot tell.
func (r *Records) owner(publicID string) (string, site.ManifestGuide, bool, error) {
	r.mu.Lock()
	gid, ok := r.owners[publicID]
	mg := r.guides[gid]
	early := !ok && r.touched != nil
	indexed := r.indexed
	r.mu.Unlock()
	if !early {
		return gid, mg, ok, r.failed()
	}
	if indexed {
		gid, err := r.indexedOwner(publicID)
		if err == nil && gid == "" {
			return "", site.ManifestGuide{}, false, nil
		}
		if err == nil {
			mg, ok, err := r.guide(gid)
			if err != nil {
				return "", site.ManifestGuide{}, false, err
			}
			if ok && slices.Contains(mg.Ids, publicID) {
				return gid, mg, true, nil
			}
		}
	}
	if err := r.Wait(); err != nil {
		return "", site.ManifestGuide{}, false, err
	}
	return r.owner(publicID)
}

// keepHead keeps the whole entry mg of guide id among the few Get returns
// without reading.
func (r *Records) keepHead(id string, mg site.ManifestGuide) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.heads) >= cacheSize {
		clear(r.heads)
	}
	r.heads[id] = mg
}

// Set records entry as that of guide id, in memory: its summary, and the
// whole entry among the few kept.
func (r *Records) Set(id string, entry site.ManifestGuide) {
	r.index(id, entry)
	r.keepHead(id, entry)
}

// index records the summary of entry as that of guide id.
func (r *Records) index(id string, entry site.ManifestGuide) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.touched != nil {
		r.touched[id] = true
	}
	r.indexLocked(id, entry, true)
}

// loaded records the summary of entry, just read by the load, as that of
// guide id, unless the guide was touched since; the ids of a guide
// touched since stay its own (its folder's previous guide, whose record
// still lists them until it is unpublished, does not take them back).
func (r *Records) loaded(id string, entry site.ManifestGuide) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.touched[id] {
		r.indexLocked(id, entry, false)
	}
}

// indexLocked records the summary of entry as that of guide id, taking
// over ids another guide holds unless that guide was touched while
// loading and takeTouched is false; r.mu is held.
func (r *Records) indexLocked(id string, entry site.ManifestGuide, takeTouched bool) {
	r.unindex(id)
	delete(r.heads, id)
	r.guides[id] = summary(entry)
	for _, pid := range entry.Ids {
		if cur, held := r.owners[pid]; takeTouched || !held || !r.touched[cur] {
			r.owners[pid] = id
		}
	}
	ids := r.byDir[entry.Folder]
	if i, found := slices.BinarySearch(ids, id); !found {
		r.byDir[entry.Folder] = slices.Insert(ids, i, id)
	}
}

// Forget drops guide id, in memory.
func (r *Records) Forget(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.touched != nil {
		r.touched[id] = true
	}
	r.unindex(id)
	delete(r.guides, id)
	delete(r.heads, id)
}

// unindex drops guide id from the indexes; r.mu is held.
func (r *Records) unindex(id string) {
	old, ok := r.guides[id]
	if !ok {
		return
	}
	for _, pid := range old.Ids {
		if r.owners[pid] == id {
			delete(r.owners, pid)
		}
	}
	ids := r.byDir[old.Folder]
	if i, found := slices.BinarySearch(ids, id); found {
		ids = slices.Delete(ids, i, i+1)
	}
	if len(ids) == 0 {
		delete(r.byDir, old.Folder)
	} else {
		r.byDir[old.Folder] = ids
	}
}

// InFolder returns the ids of the guides published from folder, except
// the guide id except, sorted.
func (r *Records) InFolder(folder, except string) []string {
	<-r.ready
	r.mu.Lock()
	defer r.mu.Unlock()
	var ids []string
	for _, id := range r.byDir[folder] {
		if id != except {
			ids = append(ids, id)
		}
	}
	return ids
}

// Snapshot returns a copy of the entries as a site.Manifest, each read
// from its record (Get): for tests and tools, it holds every guide's lists
// of files at once.
func (r *Records) Snapshot() site.Manifest {
	m := site.Manifest{Version: 1, Guides: map[string]site.ManifestGuide{}}
	for _, id := range r.IDs() {
		if mg, ok := r.Get(id); ok {
			m.Guides[id] = mg
		}
	}
	return m
}

// Summaries returns a copy of the summaries of every guide's entry (no
// lists of files or inputs, see Get), by guide id.
func (r *Records) Summaries() map[string]site.ManifestGuide {
	<-r.ready
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.guides)
}

// IDs returns the ids of the guides recorded, sorted.
func (r *Records) IDs() []string {
	<-r.ready
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Sorted(maps.Keys(r.guides))
}

// Len returns how many guides are recorded.
func (r *Records) Len() int {
	<-r.ready
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.guides)
}

// recordOf returns the record of guide id, read from its file (or from
// the few kept since).
func (r *Records) recordOf(id string) (*record, error) {
	r.mu.Lock()
	rec, ok := r.cache[id]
	r.mu.Unlock()
	if ok {
		return rec, nil
	}
	rec, err := r.read(id, true)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	if len(r.cache) >= cacheSize {
		clear(r.cache)
	}
	r.cache[id] = rec
	r.mu.Unlock()
	return rec, nil
}

// Lookup returns the record of the public file at path p (slash-separated,
// relative to the public tree), read from the record of the guide that
// published it, found through the public id p belongs to (site.PublicIDOf).
// ok is false when no guide records p.
func (r *Records) Lookup(p string) (f ledger.Entry, ok bool, err error) {
	<-r.ready
	r.mu.Lock()
	gid, found := r.owners[site.PublicIDOf(p)]
	r.mu.Unlock()
	if !found {
		return ledger.Entry{}, false, nil
	}
	rec, err := r.recordOf(gid)
	if err != nil {
		return ledger.Entry{}, false, err
	}
	f, ok = rec.Ledger.Public.Find(p)
	return f, ok, nil
}

// Withdrawn reports whether the records say that the public file at path
// p (slash-separated, relative to the public tree) is not public: p lies
// in the folder of a public id (site.PublicIDOf) that a guide's record
// holds, and no record holding that id lists p (the guide's last export
// has no such file: a hide, a lock, an expiry or a change of the plan or
// the alias withdrew it, or it never wrote it); or in the folder of an id
// no record holds that this exporter stopped publishing (a guide removed,
// a view dropped: its removed mark, removed.go). A file a record lists
// gives false, whatever the public tree holds; so does a file of an id
// these records never published (another exporter's tree). It returns an
// error when a record or a mark cannot be read.
func (r *Records) Withdrawn(p string) (bool, error) {
	pid := site.PublicIDOf(p)
	if pid == "" || !inFolderOf(p, pid) {
		return false, nil
	}
	<-r.ready
	r.mu.Lock()
	var holders []string
	if gid, ok := r.owners[pid]; ok {
		holders = append(holders, gid)
		// Another guide of its folder may list it too (a guide id
		// changed, the old record not yet removed): it must not list p.
		for _, other := range r.byDir[r.guides[gid].Folder] {
			if other != gid && slices.Contains(r.guides[other].Ids, pid) {
				holders = append(holders, other)
			}
		}
	}
	r.mu.Unlock()
	if len(holders) == 0 {
		return r.wasRemoved(pid)
	}
	for _, gid := range holders {
		rec, err := r.recordOf(gid)
		if err != nil {
			return false, err
		}
		if _, listed := rec.Ledger.Public.Find(p); listed {
			return false, nil
		}
	}
	return true, nil
}

// inFolderOf reports whether the public path p lies in a folder of the
// public id pid: <pid>/…, or under a page folder (u/<pid>/…, embed/<pid>/…).
func inFolderOf(p, pid string) bool {
	for _, dir := range []string{"", site.UnbrandedDir + "/", site.EmbedDir + "/"} {
		if strings.HasPrefix(p, dir+pid+"/") {
			return true
		}
	}
	return false
}

// OwnedByOther reports whether the public path p belongs to a public id
// that a guide other than id publishes now: the one the index gives, or
// another guide of id's folder that lists it (the folder's guide that
// took it over, whichever of the two records was read last after a kill
// between its export and id's removal).
func (r *Records) OwnedByOther(p, id string) bool {
	<-r.ready
	r.mu.Lock()
	defer r.mu.Unlock()
	pid := site.PublicIDOf(p)
	if gid, ok := r.owners[pid]; ok && gid != id {
		return true
	}
	for _, other := range r.byDir[r.guides[id].Folder] {
		if other != id && slices.Contains(r.guides[other].Ids, pid) {
			return true
		}
	}
	return false
}

// PublicFiles returns every public file recorded, in path order (byte
// order of the slash-separated paths, as S3 lists keys), with its hash and
// stamp, read from the records one guide at a time. Memory: every public
// file's record at once (for tests and tools; a publisher asks Lookup file
// by file). The iteration stops at the first record that cannot be read,
// yielding its error.
func (r *Records) PublicFiles() iter.Seq2[ledger.Entry, error] {
	return func(yield func(ledger.Entry, error) bool) {
		var all []ledger.Entry
		for _, id := range r.IDs() {
			rec, err := r.read(id, true)
			if err != nil {
				yield(ledger.Entry{}, err)
				return
			}
			all = append(all, rec.Ledger.Public...)
		}
		slices.SortFunc(all, func(a, b ledger.Entry) int { return strings.Compare(a.Path, b.Path) })
		for _, f := range all {
			if !yield(f, nil) {
				return
			}
		}
	}
}

// describe returns the ledger entries of the files paths (sorted) of
// tree t of a guide just written: each file's stamp as it is now, its
// media source from sources, and its digests from written (taken as this
// export wrote the files) for a file written, else from old (the guide's
// previous ledger of t) when the file still shows the stamp recorded
// there and old knows them, else read from the file once, streaming (see
// docs/output.md for what that costs). MD5s are kept when md5s (the
// public tree). It returns an error when a file cannot be examined.
func describe(t write.Tree, paths []string, written map[string]write.Digest, sources map[string]ledger.Source,
	old ledger.Ledger, md5s bool) (ledger.Ledger, error) {
	out := make(ledger.Ledger, len(paths))
	for i, p := range paths {
		fi, err := t.FS.Stat(t.Abs(p))
		if err != nil {
			return nil, fmt.Errorf("record %s: %w", t.Abs(p), err)
		}
		f := ledger.Entry{Path: p, Stamp: ledger.StampOf(fi)}
		if src, ok := sources[p]; ok {
			f.Source = &src
		}
		if d, ok := written[p]; ok && d.SHA256 != ([sha256.Size]byte{}) {
			f.SHA256 = hex.EncodeToString(d.SHA256[:])
			if md5s {
				f.MD5 = hex.EncodeToString(d.MD5[:])
			}
		} else if prev, ok := old.Find(p); ok && prev.Holds(fi) && (prev.MD5 != "" || !md5s) {
			f.SHA256, f.MD5 = prev.SHA256, prev.MD5
		} else if f.SHA256, f.MD5, err = digestFile(t, p, md5s); err != nil {
			return nil, fmt.Errorf("record %s: %w", t.Abs(p), err)
		}
		out[i] = f
	}
	return out, nil
}

// digestFile returns the hex SHA-256 of p in t, and its MD5 when md5s,
// reading the file once (bucket.DigestOf).
func digestFile(t write.Tree, p string, md5s bool) (sha, md string, err error) {
	f, err := t.FS.Open(t.Abs(p))
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	d, err := bucket.DigestOf(f)
	if err != nil {
		return "", "", err
	}
	if md5s {
		md = hex.EncodeToString(d.MD5)
	}
	return d.SHA256, md, nil
}

// ManifestName returns the private-tree name of the single manifest file
// earlier versions kept for shard i of n (site.ManifestFile for an
// unsharded export, else "manifest-<i>-of-<n>.json"): OpenRecords converts
// it into per-guide records. The marker of writes in progress is named
// after it.
func ManifestName(i, n int) string {
	if n <= 1 {
		return site.ManifestFile
	}
	return fmt.Sprintf("manifest-%d-of-%d.json", i, n)
}

// Save writes the record of guide id, just exported (entry), after every
// file of the guide was written and before the records in memory change
// (Set): the guide's ledger, each file of the public tree pub and the
// private tree priv described from out (the digests and media sources
// write.Writer.Guide took) and, for the files it did not write, from the
// guide's previous ledger when hadOld and their stamps did not change; it
// sets entry's Seal to the ledger's. The ids the guide no longer lists are marked removed first
// (removed.go). It returns an error when a file cannot be examined, or a
// mark or the record written.
func (r *Records) Save(pub, priv write.Tree, id string, entry *site.ManifestGuide, out *write.Written, hadOld bool) error {
	var old *record
	if hadOld {
		old, _ = r.recordOf(id) // unreadable: every digest not known is read again
	}
	var prior ledger.Guide
	if old != nil {
		prior = old.Ledger
	}
	var l ledger.Guide
	var err error
	if l.Public, err = describe(pub, entry.Files, out.Digests, out.PublicSources, prior.Public, true); err != nil {
		return err
	}
	if l.Private, err = describe(priv, entry.Private, out.PrivateDigests, out.PrivateSources, prior.Private, false); err != nil {
		return err
	}
	// The ids index names the guide's ids before its record lists them,
	// and stops naming the ones it dropped after (idindex.go).
	if err := r.link(id, entry.Ids); err != nil {
		return err
	}
	if old != nil {
		// What the guide no longer publishes is marked before its
		// record stops listing it (removed.go).
		if err := r.markRemoved(id, dropped(old.Ids, entry.Ids)); err != nil {
			return err
		}
	}
	entry.Seal = l.Seal()
	if err := r.write(newRecord(id, *entry, l)); err != nil {
		return err
	}
	if old != nil {
		r.unlink(id, dropped(old.Ids, entry.Ids))
	}
	return nil
}

// Ledger returns the ledger of guide id as its record keeps it: empty for
// a guide without a record, an error when its record cannot be read.
func (r *Records) Ledger(id string) (ledger.Guide, error) {
	rec, err := r.recordOf(id)
	if errors.Is(err, fs.ErrNotExist) {
		return ledger.Guide{}, nil
	}
	if err != nil {
		return ledger.Guide{}, err
	}
	return rec.Ledger, nil
}

// dropped returns the ids of old that are not in now.
func dropped(old, now []string) []string {
	var out []string
	for _, id := range old {
		if !slices.Contains(now, id) {
			out = append(out, id)
		}
	}
	return out
}

// RecordIDs returns the public ids (view ids and aliases) the record file
// data lists, decoding its head only.
func RecordIDs(data []byte) ([]string, error) {
	rec, err := decodeSummary(data)
	if err != nil {
		return nil, err
	}
	return rec.Ids, nil
}

// SameButStamps reports whether two record files say the same of their
// guide but for the stamps of its files and of their media sources (their
// sizes aside: times on the machine that wrote them): the same head, and
// the same digests, sizes and sources. A record kept in a bucket is
// replaced only when it differs so: the same export on another machine,
// or on an emptied folder, uploads no record.
func SameButStamps(a, b []byte) bool {
	ra, err := decodeRecord(a, true)
	if err != nil {
		return false
	}
	rb, err := decodeRecord(b, true)
	if err != nil {
		return false
	}
	ha, _, _ := bytes.Cut(a, []byte("\n"))
	hb, _, _ := bytes.Cut(b, []byte("\n"))
	return sameButSeal(ha, hb) && sameButStamps(ra.Ledger.Public, rb.Ledger.Public) && sameButStamps(ra.Ledger.Private, rb.Ledger.Private)
}

// sameButSeal reports whether two record heads hold the same members, with
// the same bytes, but for their seals (a digest of the stamps).
func sameButSeal(a, b []byte) bool {
	var ma, mb map[string]json.RawMessage
	if json.Unmarshal(a, &ma) != nil || json.Unmarshal(b, &mb) != nil {
		return false
	}
	delete(ma, "seal")
	delete(mb, "seal")
	return maps.EqualFunc(ma, mb, func(x, y json.RawMessage) bool { return bytes.Equal(x, y) })
}

// sameButStamps reports whether two ledgers list the same files with the
// same digests, sizes and sources, whatever their times.
func sameButStamps(a, b ledger.Ledger) bool {
	return slices.EqualFunc(a, b, func(f, g ledger.Entry) bool {
		if f.Path != g.Path || f.SHA256 != g.SHA256 || f.MD5 != g.MD5 || f.Size != g.Size || (f.Source == nil) != (g.Source == nil) {
			return false
		}
		return f.Source == nil || (f.Source.Path == g.Source.Path && f.Source.Made == g.Source.Made && f.Source.Stamp.Size == g.Source.Stamp.Size)
	})
}

package privatebucket

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/spf13/afero"
	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"

	"github.com/guidepub/guidepub/exporter/records"
	"github.com/guidepub/guidepub/site"
	"github.com/guidepub/guidepub/site/bucket"
)

// writeLocal writes files (slash paths) into the cache dir.
func writeLocal(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for rel, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// keys returns the keys of b, sorted.
func keys(t *testing.T, b *blob.Bucket) []string {
	t.Helper()
	var out []string
	it := b.List(nil)
	for {
		o, err := it.Next(context.Background())
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, o.Key)
	}
	slices.Sort(out)
	return out
}

func newMirror(t *testing.T, b *blob.Bucket, dir string) *Mirror {
	return New(Config{Bucket: b, Local: afero.NewOsFs(), LocalDir: dir, RecordsDir: records.RecordsDir(0, 1)})
}

const (
	rec   = "exported/g1.json"
	doc   = "guides/g1/doc/en/galleryZip.zip"
	event = "guides/g1/event.json"
)

// TestSync: a guide's files and record go up with their SHA-256 metadata;
// a second Sync uploads nothing; what the cache no longer has is deleted.
func TestSync(t *testing.T) {
	ctx := context.Background()
	b := memblob.OpenBucket(nil)
	dir := t.TempDir()
	writeLocal(t, dir, map[string]string{rec: "{}\n[]", site.RecordPath("g1"): "{}", event: `{"type":"ready"}`, doc: "zip", "guides/g2/record.json": "{}"})
	m := newMirror(t, b, dir)
	m.MarkDirty("g1")
	if err := m.SyncDirty(ctx); err != nil {
		t.Fatal(err)
	}
	want := []string{rec, doc, event, site.RecordPath("g1")}
	slices.Sort(want)
	if got := keys(t, b); !slices.Equal(got, want) {
		t.Fatalf("bucket holds %v, want %v (g2 was not synced)", got, want)
	}
	if a, err := b.Attributes(ctx, doc); err != nil || a.Metadata[bucket.MetadataHash] == "" {
		t.Errorf("no SHA-256 metadata on %s: %v", doc, err)
	}
	if len(m.Dirty()) != 0 {
		t.Errorf("still dirty: %v", m.Dirty())
	}
	uploads := m.Uploads
	if err := m.Sync(ctx, "g1"); err != nil || m.Uploads != uploads {
		t.Errorf("a second Sync uploaded %d objects (%v)", m.Uploads-uploads, err)
	}
	os.Remove(filepath.Join(dir, filepath.FromSlash(event)))
	os.Remove(filepath.Join(dir, filepath.FromSlash(doc)))
	if err := m.Sync(ctx, "g1"); err != nil {
		t.Fatal(err)
	}
	if got := keys(t, b); !slices.Equal(got, []string{rec, site.RecordPath("g1")}) {
		t.Errorf("after removals the bucket holds %v", got)
	}
	os.RemoveAll(filepath.Join(dir, "guides", "g1"))
	os.Remove(filepath.Join(dir, filepath.FromSlash(rec)))
	if err := m.Sync(ctx, "g1"); err != nil {
		t.Fatal(err)
	}
	if got := keys(t, b); len(got) != 0 {
		t.Errorf("a removed guide left %v", got)
	}
	if err := m.Sync(ctx, "../x"); err == nil {
		t.Error("a name that is no guide id was synced")
	}
}

// TestStart: an empty cache takes the bucket's records (and drops its ids
// index marker); a record the cache holds differently, or alone, makes
// its guide dirty; one the bucket holds alike does not.
func TestStart(t *testing.T) {
	ctx := context.Background()
	b := memblob.OpenBucket(nil)
	for key, data := range map[string]string{"exported/g1.json": "{}\n[]", "exported/g2.json": "{\"a\":1}\n[]", "exported/ids/v1": "g1", "exported/" + records.IDsMarker: "{}"} {
		if err := b.WriteAll(ctx, key, []byte(data), nil); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	writeLocal(t, dir, map[string]string{"exported/g2.json": "{\"a\":2}\n[]", "exported/g3.json": "{}\n[]", "exported/" + records.IDsMarker: "{}"})
	m := newMirror(t, b, dir)
	n, err := m.Start(ctx)
	if err != nil || n != 1 {
		t.Fatalf("Start took %d records (%v), want g1's", n, err)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "exported", "g1.json")); err != nil || string(data) != "{}\n[]" {
		t.Errorf("g1's record in the cache: %q %v", data, err)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "exported", "g2.json")); string(data) != "{\"a\":2}\n[]" {
		t.Errorf("the cache's own record of g2 was replaced by the bucket's: %q", data)
	}
	if _, err := os.Stat(filepath.Join(dir, "exported", records.IDsMarker)); err == nil {
		t.Error("the ids index marker stayed: the index lacks the records taken")
	}
	if got := m.Dirty(); !slices.Equal(got, []string{"g2", "g3"}) {
		t.Errorf("dirty %v, want g2 (differs) and g3 (only in the cache)", got)
	}
}

// markingFs marks a guide dirty when a file is opened: an export of it
// that ends while its mirror is under way.
type markingFs struct {
	afero.Fs
	m    *Mirror
	once bool
}

func (f *markingFs) Open(name string) (afero.File, error) {
	if !f.once && filepath.Base(name) == "galleryZip.zip" {
		f.once = true
		f.m.MarkDirty("g1")
	}
	return f.Fs.Open(name)
}

// TestMarkedDuringSync: a guide marked again while it is mirrored stays
// due: what the new export wrote may have come after the files were read.
func TestMarkedDuringSync(t *testing.T) {
	b := memblob.OpenBucket(nil)
	dir := t.TempDir()
	writeLocal(t, dir, map[string]string{rec: "{}\n[]", doc: "zip"})
	fsys := &markingFs{Fs: afero.NewOsFs()}
	m := New(Config{Bucket: b, Local: fsys, LocalDir: dir, RecordsDir: records.RecordsDir(0, 1)})
	fsys.m = m
	m.MarkDirty("g1")
	if err := m.Sync(context.Background(), "g1"); err != nil {
		t.Fatal(err)
	}
	if got := m.Dirty(); !slices.Equal(got, []string{"g1"}) {
		t.Errorf("dirty after a mark during the sync: %v, want g1", got)
	}
	if err := m.Sync(context.Background(), "g1"); err != nil || len(m.Dirty()) != 0 {
		t.Errorf("after a second sync: dirty %v (%v)", m.Dirty(), err)
	}
}

// TestPull: a reader's copy of the records becomes the bucket's: missing
// and different records downloaded, records the bucket lacks removed.
func TestPull(t *testing.T) {
	ctx := context.Background()
	b := memblob.OpenBucket(nil)
	for key, data := range map[string]string{"exported/g1.json": "{}\n[]", "exported/g2.json": "{\"a\":1}\n[]"} {
		if err := b.WriteAll(ctx, key, []byte(data), nil); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	writeLocal(t, dir, map[string]string{"exported/g2.json": "{\"a\":2}\n[]", "exported/g3.json": "{}\n[]"})
	n, err := newMirror(t, b, dir).Pull(ctx)
	if err != nil || n != 2 {
		t.Fatalf("Pull downloaded %d (%v), want g1 and g2", n, err)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "exported", "g2.json")); string(data) != "{\"a\":1}\n[]" {
		t.Errorf("g2: %q, want the bucket's", data)
	}
	if _, err := os.Stat(filepath.Join(dir, "exported", "g3.json")); err == nil {
		t.Error("g3, gone from the bucket, is still in the copy")
	}
}

// TestRemovedMarksMirrored: the marks of the ids a guide stops publishing
// reach the bucket with the record that drops them, come down to a new
// cache (Start) and to a publisher's copy (Pull, which also drops the
// marks the bucket lacks), and leave the bucket when the guide lists the
// id again; a guide removed leaves the marks of all its ids.
func TestRemovedMarksMirrored(t *testing.T) {
	ctx := context.Background()
	b := memblob.OpenBucket(nil)
	dir := t.TempDir()
	record := func(ids string) string {
		return `{"version":3,"guideId":"g1","folder":"f","revision":"r","ids":[` + ids + `],"files":[],"private":[]}` + "\n[]\n"
	}
	mark := "exported/removed/v2"
	sync := func() {
		t.Helper()
		m := newMirror(t, b, dir)
		m.MarkDirty("g1")
		if err := m.SyncDirty(ctx); err != nil {
			t.Fatal(err)
		}
	}
	has := func(key string) bool {
		ok, err := b.Exists(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	writeLocal(t, dir, map[string]string{rec: record(`"v1","v2"`)})
	sync()
	if has(mark) {
		t.Fatal("a mark in the bucket before any id was dropped")
	}
	writeLocal(t, dir, map[string]string{rec: record(`"v1"`), mark: "g1\n"})
	sync()
	if !has(mark) {
		t.Fatal("the mark of the dropped id v2 is not in the bucket")
	}

	fresh := t.TempDir()
	if _, err := newMirror(t, b, fresh).Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(fresh, filepath.FromSlash(mark))); err != nil {
		t.Errorf("Start on an empty folder did not bring the mark down: %v", err)
	}
	pub := t.TempDir()
	writeLocal(t, pub, map[string]string{"exported/removed/v9": "g7\n"})
	if _, err := newMirror(t, b, pub).Pull(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(pub, filepath.FromSlash(mark))); err != nil {
		t.Errorf("Pull did not bring the mark down: %v", err)
	}
	if _, err := os.Stat(filepath.Join(pub, "exported", "removed", "v9")); err == nil {
		t.Error("Pull kept a mark the bucket does not have")
	}

	// v2 listed again: its mark goes, locally (as the records do) and then
	// from the bucket.
	if err := os.Remove(filepath.Join(dir, filepath.FromSlash(mark))); err != nil {
		t.Fatal(err)
	}
	writeLocal(t, dir, map[string]string{rec: record(`"v1","v2"`)})
	sync()
	if has(mark) {
		t.Error("the mark of v2, listed again, is still in the bucket")
	}

	// The guide removed: its record goes, the marks of both ids stay.
	if err := os.Remove(filepath.Join(dir, filepath.FromSlash(rec))); err != nil {
		t.Fatal(err)
	}
	writeLocal(t, dir, map[string]string{"exported/removed/v1": "g1\n", mark: "g1\n"})
	sync()
	if has(rec) || !has("exported/removed/v1") || !has(mark) {
		t.Errorf("after the guide's removal the bucket holds %v", keys(t, b))
	}
}

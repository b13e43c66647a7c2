package publish

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/guidepub/guidepub/exporter/ledger"
	"github.com/guidepub/guidepub/exporter/records"
	"github.com/spf13/afero"
)

// countingFs counts the regular files opened through it.
type countingFs struct {
	afero.Fs
	opened atomic.Int64
}

func (c *countingFs) Open(name string) (afero.File, error) {
	f, err := c.Fs.Open(name)
	if err == nil {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			c.opened.Add(1)
		}
	}
	return f, err
}

func (c *countingFs) OpenFile(name string, flag int, perm os.FileMode) (afero.File, error) {
	f, err := c.Fs.OpenFile(name, flag, perm)
	if err == nil {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			c.opened.Add(1)
		}
	}
	return f, err
}

// TestPublishRecordedDigests: with the exporter's records (RecordedDigests)
// a reconcile of an unchanged tree reads no file but the stylesheet, which
// no guide records; a file rewritten behind the exporter's back with the
// same size and modification time is not trusted (its change time is not
// the one recorded): it is read and uploaded, as with Rehash or no
// records.
func TestPublishRecordedDigests(t *testing.T) {
	ctx := context.Background()
	out := exportFixtures(t)
	priv := filepath.Join(filepath.Dir(out), "private")
	b := newBucket(t, versitygw(t), "recorded")
	recs, err := records.OpenRecords(afero.NewOsFs(), priv, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	from := &countingFs{Fs: afero.NewOsFs()}
	run := func(known KnownDigest, rehash bool) *Report {
		t.Helper()
		cfg := DefaultConfig()
		cfg.From, cfg.FromDir, cfg.Bucket = from, out, b
		cfg.KnownDigest, cfg.Rehash = known, rehash
		from.opened.Store(0)
		rep, err := Publish(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	recorded := RecordedDigests(recs)
	if rep := run(recorded, false); rep.Uploaded == 0 {
		t.Fatalf("first run uploaded nothing: %+v", rep)
	}
	rep := run(recorded, false)
	if rep.Uploaded != 0 || rep.Unchanged == 0 {
		t.Fatalf("second run: %+v", rep)
	}
	// The stylesheet is no guide's, so in no record: it alone is read.
	if n := from.opened.Load(); n != 1 {
		t.Errorf("a reconcile of an unchanged tree with records opened %d files, want 1 (the stylesheet)", n)
	}

	// Rewrite one recorded file: other bytes, same size, same stamp.
	var victim ledger.Entry
	for f, err := range recs.PublicFiles() {
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(f.Path, "/data/summary") {
			victim = f
			break
		}
	}
	if victim.Path == "" || victim.MD5 == "" {
		t.Fatalf("no summary recorded with an MD5: %+v", victim)
	}
	p := filepath.Join(out, filepath.FromSlash(victim.Path))
	orig, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	changed := []byte(strings.Repeat(" ", len(orig)))
	if err := os.WriteFile(p, changed, 0o644); err != nil {
		t.Fatal(err)
	}
	mtime := time.Unix(0, victim.ModTime)
	if err := os.Chtimes(p, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() != victim.Size || fi.ModTime().UnixNano() != victim.ModTime {
		t.Fatalf("the rewritten file's size or modification time differs from the record: %v", fi)
	}
	if ledger.StampOf(fi).ChangeTime == 0 {
		t.Skip("this file system does not report change times: a rewrite keeping size and modification time is not seen")
	}
	if victim.Holds(fi) {
		t.Fatal("the record holds a file rewritten since")
	}
	restore := func() {
		t.Helper()
		if err := b.WriteAll(ctx, victim.Path, orig, nil); err != nil {
			t.Fatal(err)
		}
	}

	want := []Change{{"upload", victim.Path, "changed"}}
	for _, c := range []struct {
		name   string
		known  KnownDigest
		rehash bool
	}{{"with records", recorded, false}, {"rehash", recorded, true}, {"no records", nil, false}} {
		rep := run(c.known, c.rehash)
		if rep.Uploaded != 1 || !slices.Equal(rep.Planned, want) {
			t.Errorf("%s: %+v, want %v", c.name, rep, want)
		}
		if data, _ := readObject(t, b, victim.Path); string(data) != string(changed) {
			t.Errorf("%s: the object holds %.40q", c.name, data)
		}
		restore()
	}
}

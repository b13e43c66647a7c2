package exporter

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/guidepub/guidepub/exporter/records"
	"github.com/guidepub/guidepub/exporter/write"
	"github.com/spf13/afero"
)

// syncLog records the steps of durable writes under one folder.
type syncLog struct {
	mu    sync.Mutex
	root  string
	steps []syncEvent
}

type syncEvent struct{ step, name string }

func (l *syncLog) record(step, name string) {
	if !strings.HasPrefix(name, l.root) {
		return // another test's
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.steps = append(l.steps, syncEvent{step, name})
}

// recordSyncs sets write.SyncHook for the test, recording the steps under
// root.
func recordSyncs(t *testing.T, root string) *syncLog {
	l := &syncLog{root: root}
	write.SyncHook = l.record
	t.Cleanup(func() { write.SyncHook = nil })
	return l
}

// TestDurableWrites checks the order of the durability steps of an export
// to a real folder (docs/robustness.md#power-loss): every file is flushed
// before it gets its name (by a link of an unnamed file for a new one, a
// rename for a replaced one), the folder of every file written and every
// folder above it is flushed after the last name given in it and before
// the guide's record is written, and the records' folder after the record;
// the marker of writes in progress is flushed before any of it. A
// test can show the calls and their order, not that the disk honours
// them: that is the kernel's and the disk's promise.
func TestDurableWrites(t *testing.T) {
	ev := osEnv(t)
	root := filepath.Dir(ev.outDir)
	records := filepath.Join(ev.privDir, records.RecordsDir(0, 0))
	for round, edit := range []func(map[string]any){
		nil, // new files
		func(g map[string]any) { obj(g["property"])["city"] = "Waterloo" }, // replaced ones
	} {
		if edit != nil {
			ev.editGuide(kingFolder, edit)
		}
		log := recordSyncs(t, root)
		rep := ev.exportAll()
		if rep.Written == 0 {
			t.Fatalf("round %d wrote nothing", round)
		}
		named := map[string]int{} // file -> index of its name step
		synced := map[string]int{}
		lastNamed := map[string]int{} // folder -> index of the last name given in it
		dirSynced := map[string][]int{}
		recordAt, firstRecordAt := -1, -1
		for i, s := range log.steps {
			switch s.step {
			case "sync":
				synced[s.name] = i
			case "rename", "link", "hardlink":
				prev, renamed := named[s.name]
				if s.step == "hardlink" {
					// Another name of a file flushed and named before.
					if !flushedBefore(t, s.name, synced, named, i) {
						t.Errorf("round %d: %s linked to no file flushed and named before", round, s.name)
					}
				} else if at, ok := synced[s.name]; !ok || renamed && at < prev {
					t.Errorf("round %d: %s named without a flush before", round, s.name)
				}
				named[s.name] = i
				if filepath.Dir(s.name) == records {
					recordAt = i // the last record written
					if firstRecordAt < 0 {
						firstRecordAt = i
					}
					continue
				}
				for dir := filepath.Dir(s.name); strings.HasPrefix(dir, root) && dir != root; dir = filepath.Dir(dir) {
					lastNamed[dir] = i
				}
			case "syncdir":
				dirSynced[s.name] = append(dirSynced[s.name], i)
			}
		}
		if recordAt < 0 {
			t.Fatalf("round %d: no record was written", round)
		}
		// The marker of writes in progress is flushed before any file
		// gets its name (the records' own files, flushed with their
		// folder each, are not what it covers).
		firstName := -1
		for i, s := range log.steps {
			if filepath.Dir(s.name) == records {
				continue
			}
			if s.step == "rename" || s.step == "link" || s.step == "hardlink" {
				firstName = i
				break
			}
		}
		if len(dirSynced[ev.privDir]) == 0 || dirSynced[ev.privDir][0] > firstName {
			t.Errorf("round %d: the private tree's folder (the marker) was not flushed before the first file got its name", round)
		}
		for dir, last := range lastNamed {
			if dir == ev.privDir || dir == ev.outDir || strings.HasPrefix(dir, ev.privDir) || strings.HasPrefix(dir, ev.outDir) {
				ok := false
				for _, at := range dirSynced[dir] {
					ok = ok || at > last && at < recordAt
				}
				if !ok {
					t.Errorf("round %d: folder %s not flushed between its last new name and the last record", round, dir)
				}
			}
		}
		// New ids were indexed, and their folder flushed, before the
		// first record listing them.
		if ids := dirSynced[filepath.Join(records, "ids")]; round == 0 && (len(ids) == 0 || ids[0] > firstRecordAt) {
			t.Errorf("round %d: the ids index's folder was not flushed before the first record", round)
		}
		ok := false
		for _, at := range dirSynced[records] {
			ok = ok || at > recordAt
		}
		if !ok {
			t.Errorf("round %d: the records' folder was not flushed after the last record", round)
		}
		// Every file of the trees was named through these steps in the
		// first round, but the records' ids index, whose files are not
		// flushed (an emptied one only makes a claim wait for every
		// record, see records/idindex.go): its folder is, before the
		// record that needs it.
		if round == 0 {
			for _, dir := range []string{ev.outDir, ev.privDir} {
				_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
					if err == nil && !d.IsDir() && !strings.HasPrefix(d.Name(), ".") && filepath.Dir(p) != filepath.Join(records, "ids") {
						if _, ok := named[p]; !ok {
							t.Errorf("%s was written without the durable steps", p)
						}
					}
					return nil
				})
			}
		}
	}
}

func obj(v any) map[string]any { return v.(map[string]any) }

// syncFs is the operating system's file system with Sync of files and
// folders either skipped (noSync) or passed through and timed, to
// measure what the durability rule costs. Both go through the portable
// write (a temporary file and a rename), since the exporter writes
// unnamed files only on an *afero.OsFs.
type syncFs struct {
	afero.Fs
	noSync bool
	syncs  *atomic.Int64 // Sync calls passed through
	nanos  *atomic.Int64 // time spent in them
}

type syncFsFile struct {
	afero.File
	fs syncFs
}

func (f syncFsFile) Sync() error {
	if f.fs.noSync {
		return nil
	}
	start := time.Now()
	err := f.File.Sync()
	f.fs.nanos.Add(int64(time.Since(start)))
	f.fs.syncs.Add(1)
	return err
}

func (s syncFs) wrap(f afero.File, err error) (afero.File, error) {
	if err != nil {
		return f, err
	}
	return syncFsFile{f, s}, nil
}

func (s syncFs) Open(name string) (afero.File, error) { return s.wrap(s.Fs.Open(name)) }
func (s syncFs) OpenFile(name string, flag int, perm os.FileMode) (afero.File, error) {
	return s.wrap(s.Fs.OpenFile(name, flag, perm))
}

// BenchmarkDurableExport measures a full export (every encoding) of
// corpora of 10 and 50 guides to a real folder without and with the
// flushes of the durability rule, one after the other, and then the
// export of one changed guide (what an upload waits for: one-guide-ms).
// The export times depend on the load of the machine; the time spent in
// the flushes (sync-s/op, summed over the parallel writers) and their
// count much less.
func BenchmarkDurableExport(b *testing.B) {
	for _, n := range []int{10, 50} {
		root := b.TempDir()
		src := filepath.Join(root, "src")
		for i := range n {
			writeCorpusGuide(b, src, i, genGuide(i))
		}
		for _, mode := range []struct {
			name   string
			noSync bool
		}{{"nosync", true}, {"sync", false}} {
			b.Run(fmt.Sprintf("guides=%d/%s", n, mode.name), func(b *testing.B) {
				fsys := syncFs{Fs: afero.NewOsFs(), noSync: mode.noSync, syncs: new(atomic.Int64), nanos: new(atomic.Int64)}
				iter := 0
				for b.Loop() {
					b.StopTimer()
					iter++
					dst := b.TempDir()
					cfg := testConfig(fsys, src, filepath.Join(dst, "out"), filepath.Join(dst, "private"))
					e, err := New(cfg)
					if err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
					rep, err := e.ExportAll(context.Background())
					if err != nil || rep.Rejected > 0 {
						b.Fatalf("export: %v, %d rejected", err, rep.Rejected)
					}
					b.StopTimer()
					b.ReportMetric(float64(rep.Written), "files/op")
					// One guide changes: its export alone is what an upload
					// waits for.
					g := genGuide(n / 2)
					g.Property.City = fmt.Sprintf("Waterloo %s %d", mode.name, iter)
					writeCorpusGuide(b, src, n/2, g)
					syncsBefore, nanosBefore := fsys.syncs.Load(), fsys.nanos.Load()
					start := time.Now()
					if _, err := e.ExportBundle(context.Background(), fmt.Sprintf("bundle-%05d", n/2)); err != nil {
						b.Fatal(err)
					}
					b.ReportMetric(float64(time.Since(start).Milliseconds()), "one-guide-ms")
					b.ReportMetric(float64(fsys.syncs.Load()-syncsBefore), "one-guide-syncs")
					b.ReportMetric(float64(time.Duration(fsys.nanos.Load()-nanosBefore).Milliseconds()), "one-guide-sync-ms")
					writeCorpusGuide(b, src, n/2, genGuide(n/2))
					b.StartTimer()
				}
				b.ReportMetric(float64(fsys.syncs.Load())/float64(iter), "syncs/op")
				b.ReportMetric(time.Duration(fsys.nanos.Load()/int64(iter)).Seconds(), "sync-s/op")
			})
		}
	}
}

// flushedBefore reports whether name (given its name by a hard link at
// step at) is the same file as one flushed and then named before at.
func flushedBefore(t *testing.T, name string, synced, named map[string]int, at int) bool {
	t.Helper()
	fi, err := os.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	for other, n := range named {
		if s, ok := synced[other]; ok && s < n && n < at {
			if ofi, err := os.Stat(other); err == nil && os.SameFile(fi, ofi) {
				return true
			}
		}
	}
	return false
}

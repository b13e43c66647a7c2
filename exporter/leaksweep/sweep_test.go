package leaksweep

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/afero"
	"gocloud.dev/blob"

	"github.com/guidepub/guidepub/exporter"
	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/exporter/pipeline"
	"github.com/guidepub/guidepub/exporter/publish"
	"github.com/guidepub/guidepub/exporter/publish/publishtest"
	"github.com/guidepub/guidepub/exporter/write"
	"github.com/guidepub/guidepub/site"
)

// publicFile is one file a channel makes public: its path or key, and its
// bytes as a reader gets them (a compressed sibling or object decoded).
type publicFile struct {
	name string
	data []byte
}

// channel is what one place of publication holds once a scenario ran.
type channel struct {
	name  string
	files []publicFile
	// tree is set on the exported public tree, whose paths are also
	// checked against the hide table.
	tree bool
	// withdrawn are the folders of the bundles whose export withdrew
	// public files (it failed half-way): their public fields may be
	// missing.
	withdrawn map[string]bool
}

// scenario publishes the corpus one way and returns every channel to
// search. Adding a way a hidden feature could survive (a fault in the
// outbox, a restart) is adding one scenario.
type scenario struct {
	name string
	run  func(t *testing.T, env *sweepEnv, c *corpus) []channel
}

var scenarios = []scenario{
	{"hidden from the start", func(t *testing.T, env *sweepEnv, c *corpus) []channel {
		s := env.site(t, "start", site.Encodings, site.Brotli)
		c.write(t, s.src, true)
		s.export(t)
		return s.channels(t)
	}},
	{"hidden after publishing", func(t *testing.T, env *sweepEnv, c *corpus) []channel {
		// gzip alone: the encodings are the first scenario's to cover.
		s := env.site(t, "later", []site.Encoding{site.Gzip}, site.Gzip)
		c.write(t, s.src, false)
		s.export(t)
		c.write(t, s.src, true)
		s.export(t)
		return s.channels(t)
	}},
	{"hidden after publishing, exported by a new process", func(t *testing.T, env *sweepEnv, c *corpus) []channel {
		// What is in place is known from the records' ledger, not from
		// the memory of the process that wrote it: the media the hides
		// keep are left alone, what they withdraw must go all the same.
		s := env.site(t, "restarted", []site.Encoding{site.Gzip}, site.Gzip)
		c.write(t, s.src, false)
		s.export(t)
		s.newExporter(t)
		c.write(t, s.src, true)
		published := len(treeFiles(t, s.out))
		s.export(t)
		if now := len(treeFiles(t, s.out)); now >= published {
			t.Fatalf("the hides withdrew no file (%d files, then %d): the scenario tests nothing", published, now)
		}
		return s.channels(t)
	}},
	{"hidden in an export whose outbox write failed, then a crash and a restart", func(t *testing.T, env *sweepEnv, c *corpus) []channel {
		return crashed(t, env.site(t, "crash", []site.Encoding{site.Gzip}, site.Identity), c, publish.DefaultMaxDeletes)
	}},
	{"a crash whose hides exceed any limit of deletions", func(t *testing.T, env *sweepEnv, c *corpus) []channel {
		// The reconcile may delete nothing a listing's difference alone
		// finds: what the records withdrew must go all the same.
		return crashed(t, env.site(t, "crash-limit", []site.Encoding{site.Gzip}, site.Identity), c, 0)
	}},
	{"hidden in uploads stopped half-way, then exported again", func(t *testing.T, env *sweepEnv, c *corpus) []channel {
		// The next export finds in place what the stopped one wrote:
		// only the stopped one's result can send those files up.
		stop := stopAtFirstFile(t)
		s := env.site(t, "stopped", []site.Encoding{site.Gzip}, site.Gzip)
		c.write(t, s.src, false)
		s.export(t)
		c.write(t, s.src, true)
		s.uploadStopped(t, c, stop)
		s.export(t)
		return s.channels(t)
	}},
	{"hidden after publishing, behind an edge whose purges fail until a restart", func(t *testing.T, env *sweepEnv, c *corpus) []channel {
		return throughEdge(t, c)
	}},
	{"hidden in uploads that fail half-way", func(t *testing.T, env *sweepEnv, c *corpus) []channel {
		// A file that cannot be written (a full disk): the files the
		// export did not reach must not keep what the view now hides.
		s := env.faultySite(t, "failed", []site.Encoding{site.Gzip}, site.Gzip)
		c.write(t, s.src, false)
		s.export(t)
		c.write(t, s.src, true)
		s.outFaults.Fail(1000, func(op, name string) bool {
			// Every autofill, which every hide but one changes: each
			// export that writes one fails.
			return op == "rename" && strings.HasSuffix(filepath.ToSlash(name), "/reso/autofill")
		})
		failed := s.uploadEach(t, c, func() (context.Context, context.CancelFunc) { return context.Background(), func() {} },
			func(err error) bool { return errors.Is(err, syscall.ENOSPC) })
		s.outFaults.Fail(0, nil)
		if len(failed) == 0 {
			t.Fatal("no export failed: the scenario tests nothing")
		}
		chs := s.channels(t)
		for i := range chs {
			chs[i].withdrawn = failed
		}
		return chs
	}},
}

// crashed publishes c without its hides on s, then exports the hides
// while every outbox entry write fails and nothing is uploaded: the
// process dies before it could. The restart, whose reconcile may delete
// maxDeletes objects that nothing recorded, must take every hidden object
// out of the bucket.
func crashed(t *testing.T, s *sweepSite, c *corpus, maxDeletes int) []channel {
	c.write(t, s.src, false)
	s.export(t)
	if s.live == nil {
		return s.channels(t)
	}
	s.stop(t)
	s.faults.Fail(1000, publishtest.Entries)
	s.start(t, false)
	c.write(t, s.src, true)
	published := len(treeFiles(t, s.out))
	s.export(t)
	if s.faults.Failed() == 0 {
		t.Fatal("no outbox write failed: the scenario tests nothing")
	}
	if now := len(treeFiles(t, s.out)); now >= published {
		t.Fatalf("the hides withdrew no file (%d files, then %d): the scenario tests nothing", published, now)
	}
	s.stop(t)
	s.faults.Fail(0, nil)
	before := len(bucketFiles(t, s.bucket))
	s.lc.MaxDeletes = maxDeletes
	s.start(t, true)
	s.idle(t)
	if after := len(bucketFiles(t, s.bucket)); after >= before {
		t.Errorf("the restart deleted no object (%d, then %d): what the hides withdrew stayed in the bucket", before, after)
	}
	return s.channels(t)
}

// stopper cancels the context of the export in progress, once.
type stopper struct {
	cancel atomic.Pointer[context.CancelFunc]
	out    atomic.Pointer[string] // the public tree whose files count
}

// stopAtFirstFile installs, for the rest of t, a hook that stops an
// export started with the stopper's context once the export has put its
// first file of the public tree in place. It is installed before any
// publisher runs, and only read after.
func stopAtFirstFile(t *testing.T) *stopper {
	st := &stopper{}
	write.SyncHook = func(step, name string) {
		out := st.out.Load()
		if out == nil || (step != "link" && step != "rename") || !strings.HasPrefix(name, *out+string(filepath.Separator)) {
			return
		}
		if cancel := st.cancel.Swap(nil); cancel != nil {
			(*cancel)()
		}
	}
	t.Cleanup(func() { write.SyncHook = nil })
	return st
}

// uploadStopped exports each bundle of c as an upload (uploadEach), each
// export stopped by st after its first file, as a process asked to stop
// in the middle of an upload.
func (s *sweepSite) uploadStopped(t *testing.T, c *corpus, st *stopper) {
	st.out.Store(&s.out)
	defer st.out.Store(nil)
	stopped := s.uploadEach(t, c, func() (context.Context, context.CancelFunc) {
		ctx, cancel := context.WithCancel(context.Background())
		st.cancel.Store(&cancel)
		return ctx, func() { st.cancel.Store(nil); cancel() }
	}, func(err error) bool { return errors.Is(err, context.Canceled) })
	if len(stopped) == 0 {
		t.Fatal("no export stopped: the scenario tests nothing")
	}
}

// uploadEach exports each bundle of c as watch does an upload: through
// the pipeline, which hands the result to the live publisher, in the
// context ctx returns (ended by its second result once the export
// returned). It returns the folders of the bundles whose export failed
// with an error that expected accepts (any other fails the test), once
// the running publisher has uploaded what the exports listed.
func (s *sweepSite) uploadEach(t *testing.T, c *corpus, ctx func() (context.Context, context.CancelFunc), expected func(error) bool) map[string]bool {
	p := pipeline.New(pipeline.Config{Live: s.live})
	failed := map[string]bool{}
	for _, b := range c.bundles {
		ctx, end := ctx()
		_, _, err := p.ExportGuide(ctx, func() (*exporter.GuideResult, error) { return s.ex.ExportBundle(ctx, b.folder) })
		end()
		switch {
		case err != nil && expected(err):
			failed[b.folder] = true
		case err != nil:
			t.Fatalf("%s: %v", b.folder, err)
		}
	}
	if s.running {
		s.idle(t)
	}
	return failed
}

// TestLeakSweep exports the corpus with each hidden feature on its own and
// searches every public byte of every channel for the canaries it must
// not show: those of a hidden feature, of a field never public, and of
// every metadata slot.
func TestLeakSweep(t *testing.T) {
	start := time.Now()
	c := newCorpus(t)
	env := &sweepEnv{store: startStore(t)}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			for _, ch := range sc.run(t, env, c) {
				t.Run(ch.name, func(t *testing.T) {
					found := search(c, ch)
					checkSlots(t, c, found)
					checkFields(t, c, found, ch.withdrawn)
					if ch.tree {
						checkTable(t, c, ch)
					}
				})
			}
		})
	}
	t.Logf("swept %d bundles, %d metadata slots in %v", len(c.bundles), len(slots), time.Since(start).Round(time.Millisecond))
}

// checkSlots fails for every slot whose canary is in a public byte.
func checkSlots(t *testing.T, c *corpus, found map[string][]string) {
	for _, s := range slots {
		t.Run(s.name, func(t *testing.T) {
			if where := found[slotKey(s.name)]; len(where) > 0 {
				t.Errorf("metadata slot %s reaches public bytes: %s", s.name, some(where))
			}
		})
	}
}

// checkFields fails for a field canary found where it must not be (a
// field its bundle hides, or one never public) and for one missing where
// it must be (which would mean the search finds nothing), unless its
// bundle is one of withdrawn.
func checkFields(t *testing.T, c *corpus, found map[string][]string, withdrawn map[string]bool) {
	for _, b := range c.bundles {
		for _, f := range fields {
			if b.needle[f.pattern] == "" {
				continue // the bundle has no such field (plans of a view hiding floor plans)
			}
			where := found[fieldKey(b, f)]
			hidden := slices.ContainsFunc(f.hiddenBy, func(h string) bool { return slices.Contains(b.hidden, h) })
			switch {
			case (hidden || !f.public) && len(where) > 0:
				t.Errorf("bundle hiding %v: %s is public in %s", b.hidden, f.pattern, some(where))
			case !hidden && f.public && len(where) == 0 && !withdrawn[b.folder]:
				t.Errorf("bundle hiding %v: %s is in no public byte: the search cannot be trusted", b.hidden, f.pattern)
			}
		}
	}
}

// checkTable fails for a file of the tree that the hide table does not
// allow its view, and when the bundle that hides nothing leaves a row of
// the table without a file: the corpus then exercises every kind of file
// the exporter writes.
func checkTable(t *testing.T, c *corpus, ch channel) {
	byID := map[string]*corpusBundle{}
	for _, b := range c.bundles {
		byID[b.guide.Alias] = b
		for _, v := range b.guide.Views {
			byID[v.ViewID] = b
		}
	}
	hit := map[site.FileKind]bool{}
	for _, f := range ch.files {
		if site.IsHidden(f.name) {
			t.Errorf("%s: a hidden file is left in the public tree", f.name)
			continue
		}
		if _, _, sibling := site.SplitEncoded(f.name); sibling {
			continue
		}
		row, id, ok := site.PublicFileOf(f.name)
		b := byID[id]
		switch {
		case !ok:
			t.Errorf("%s has no row in the hide table", f.name)
		case row.Group == site.GroupShared:
			// No view's (the stylesheet): its bytes are swept like every
			// other file's, so a canary in it would be found.
			hit[row.Kind] = true
		case b == nil:
			t.Errorf("%s belongs to no view of the corpus", f.name)
		case row.HiddenIn(b.hidden):
			t.Errorf("%s (%s) is published by a view hiding %v", f.name, row.Kind, b.hidden)
		case b.hidden == nil:
			hit[row.Kind] = true
		}
	}
	for _, row := range site.PublicFiles {
		if !hit[row.Kind] {
			t.Errorf("no file of kind %s: the corpus does not exercise every row of the hide table", row.Kind)
		}
	}
}

// some returns the first few of names, for a message.
func some(names []string) string {
	if len(names) > 4 {
		return strings.Join(names[:4], ", ") + fmt.Sprintf(" and %d more", len(names)-4)
	}
	return strings.Join(names, ", ")
}

func slotKey(name string) string { return "slot " + name }

func fieldKey(b *corpusBundle, f field) string { return b.folder + " " + f.pattern }

// search returns where each canary of the corpus is in ch: by key
// (slotKey, fieldKey), the names of the files holding it.
func search(c *corpus, ch channel) map[string][]string {
	canary := map[string]string{} // canary → key
	type needle struct {
		key string
		b   []byte
	}
	var others []needle
	for _, s := range slots {
		for _, nd := range c.slotNeedles[s.name] {
			if canaryPattern.Match(nd) {
				canary[canaryPattern.FindString(string(nd))] = slotKey(s.name)
			} else {
				others = append(others, needle{slotKey(s.name), nd})
			}
		}
	}
	for _, b := range c.bundles {
		for _, f := range fields {
			if nd := b.needle[f.pattern]; nd == "" {
				continue
			} else if canaryPattern.MatchString(nd) {
				canary[canaryPattern.FindString(nd)] = fieldKey(b, f)
			} else {
				others = append(others, needle{fieldKey(b, f), []byte(nd)})
			}
		}
	}
	found := map[string][]string{}
	add := func(key, where string) {
		if !slices.Contains(found[key], where) {
			found[key] = append(found[key], where)
		}
	}
	for _, f := range ch.files {
		for _, text := range [][]byte{[]byte(f.name), f.data} {
			for _, m := range canaryPattern.FindAll(text, -1) {
				if key, ok := canary[string(m)]; ok {
					add(key, f.name)
				}
			}
			for _, nd := range others {
				if bytes.Contains(text, nd.b) {
					add(nd.key, f.name)
				}
			}
		}
	}
	return found
}

// sweepEnv is what the scenarios share: the S3-compatible server, nil
// where none is installed (then only the trees are searched).
type sweepEnv struct {
	store   *publishtest.Store
	buckets int
}

// startStore starts versitygw for the bucket channel. Where it is not
// installed, the subtest "bucket" says so (skipped, or failed under
// GUIDEPUB_TEST_REQUIRE=1) and the sweep goes on without the bucket.
func startStore(t *testing.T) *publishtest.Store {
	installed := false
	if _, err := exec.LookPath("versitygw"); err == nil {
		installed = true
	} else if gopath, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		_, err := os.Stat(filepath.Join(strings.TrimSpace(string(gopath)), "bin", "versitygw"))
		installed = err == nil
	}
	if !installed {
		t.Run("bucket", func(t *testing.T) { publishtest.StartStore(t) })
		return nil
	}
	return publishtest.StartStore(t)
}

// sweepSite is a source folder, its exporter and a live publisher
// uploading to a bucket of its own (none without a server), through an
// outbox whose writes a scenario can make fail.
type sweepSite struct {
	src, out, priv string
	cfg            exporter.Config
	ex             *exporter.Exporter
	bucket         *blob.Bucket
	faults         *publishtest.FaultFs // the outbox's
	outFaults      *publishtest.FaultFs // the public tree's, on a faultySite
	lc             publish.LiveConfig
	live           *publish.Live
	halt           func() // stops live: its Run, then its lock
	running        bool   // live runs: it uploads what it records
}

// site returns a new site whose exporter writes the compressed siblings
// encs and whose live publisher uploads documents encoded with upload to a
// bucket of its own; the publisher runs until the test ends or stop.
func (env *sweepEnv) site(t *testing.T, name string, encs []site.Encoding, upload site.Encoding) *sweepSite {
	return env.newSite(t, name, encs, upload, false)
}

// faultySite is site with the exporter writing the public tree through
// s.outFaults, which a scenario can make fail (the writer then takes its
// portable path: a temporary file renamed into place, media copied).
func (env *sweepEnv) faultySite(t *testing.T, name string, encs []site.Encoding, upload site.Encoding) *sweepSite {
	return env.newSite(t, name, encs, upload, true)
}

func (env *sweepEnv) newSite(t *testing.T, name string, encs []site.Encoding, upload site.Encoding, faultyOut bool) *sweepSite {
	dir := t.TempDir()
	s := &sweepSite{src: filepath.Join(dir, "src"), out: filepath.Join(dir, "public"), priv: filepath.Join(dir, "private")}
	cfg := exporter.DefaultConfig()
	cfg.Encodings = encs
	osfs := afero.NewOsFs()
	cfg.Src, cfg.SrcDir, cfg.Out, cfg.OutDir, cfg.Private, cfg.PrivateDir = osfs, s.src, osfs, s.out, osfs, s.priv
	if faultyOut {
		s.outFaults = publishtest.NewFaultFs(osfs)
		cfg.Out = s.outFaults
	}
	s.cfg = cfg
	s.newExporter(t)
	if env.store == nil {
		return s
	}
	env.buckets++
	s.bucket = publishtest.NewBucket(t, env.store.Endpoint, fmt.Sprintf("sweep-%s-%d", name, env.buckets))
	s.faults = publishtest.NewFaultFs(osfs)
	s.lc = publish.DefaultLiveConfig()
	s.lc.From, s.lc.FromDir, s.lc.Bucket, s.lc.OutboxDir = osfs, s.out, s.bucket, filepath.Join(s.priv, site.OutboxDir)
	s.lc.OutboxFs = s.faults
	s.lc.Encoding = upload // documents stored compressed: the search decodes them
	s.lc.RetryMin, s.lc.RetryMax = 20*time.Millisecond, 200*time.Millisecond
	// As the commands do: the reconcile asks the export's records.
	s.lc.Withdrawals = publish.RecordsWithdrawals(osfs, s.priv, 1)
	s.start(t, true)
	t.Cleanup(func() { s.stop(t) })
	return s
}

// start opens the outbox as a new process would, and runs the publisher
// when run is set (else it records and uploads nothing, as a process
// about to die).
func (s *sweepSite) start(t *testing.T, run bool) {
	ctx, cancel := context.WithCancel(context.Background())
	l, err := publish.NewLive(ctx, s.lc)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	s.live, s.running = l, run
	done := make(chan struct{})
	if run {
		go func() { l.Run(ctx); close(done) }()
	} else {
		close(done)
	}
	s.halt = func() { cancel(); <-done; l.Close() }
}

// stop stops the publisher as a killed process would stop: what it had
// not uploaded stays in the outbox (or is lost where the outbox failed).
func (s *sweepSite) stop(t *testing.T) {
	if s.halt != nil {
		s.halt()
		s.halt, s.running = nil, false
	}
}

// export exports every bundle as watch does (the intent in the outbox
// first), hands the results to the live publisher and, when it runs,
// waits until it uploaded them.
// newExporter gives s a new exporter, as a new process would make it.
func (s *sweepSite) newExporter(t *testing.T) {
	ex, err := exporter.New(s.cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.ex = ex
}

func (s *sweepSite) export(t *testing.T) {
	ctx := context.Background()
	var done func()
	if s.live != nil {
		var err error
		if done, err = s.live.Exporting(ctx, ""); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := s.ex.ExportAll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range rep.Guides {
		if g.Err != nil {
			t.Fatalf("%s: %v", g.Folder, g.Err)
		}
		if s.live != nil {
			// An outbox that fails is the crash scenario's: the upload
			// goes on from memory, and the intent stays.
			if err := s.live.Record(g); err != nil && s.faults.Failed() == 0 {
				t.Fatal(err)
			}
		}
	}
	if s.live == nil {
		return
	}
	done()
	if s.running {
		s.idle(t)
	}
}

// idle waits until the running publisher has uploaded everything.
func (s *sweepSite) idle(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if n := s.live.Idle(ctx); n != 0 {
		t.Fatalf("%d guides still to upload", n)
	}
}

// channels returns the public tree and the bucket as a reader gets them.
func (s *sweepSite) channels(t *testing.T) []channel {
	chs := []channel{{name: "tree", files: treeFiles(t, s.out), tree: true}}
	if s.bucket != nil {
		chs = append(chs, channel{name: "bucket", files: bucketFiles(t, s.bucket)})
	}
	return chs
}

// treeFiles returns every file under root, compressed siblings decoded.
func treeFiles(t *testing.T, root string) []publicFile {
	var out []publicFile
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if _, enc, ok := site.SplitEncoded(rel); ok {
			data = decode(t, rel, enc, data)
		}
		out = append(out, publicFile{rel, data})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// bucketFiles returns every object of b, decoded by its Content-Encoding.
func bucketFiles(t *testing.T, b *blob.Bucket) []publicFile {
	ctx := context.Background()
	var out []publicFile
	it := b.List(nil)
	for {
		obj, err := it.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := b.ReadAll(ctx, obj.Key)
		if err != nil {
			t.Fatal(err)
		}
		attrs, err := b.Attributes(ctx, obj.Key)
		if err != nil {
			t.Fatal(err)
		}
		if enc, ok := site.EncodingByName(attrs.ContentEncoding); ok {
			data = decode(t, obj.Key, enc, data)
		}
		out = append(out, publicFile{obj.Key, data})
	}
	return out
}

func decode(t *testing.T, name string, enc site.Encoding, data []byte) []byte {
	r, done, err := enc.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	defer done()
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return out
}

// TestFieldsCoverGuide: every string field of guide.json carries a canary
// in the corpus or is listed as unable to, and no row of fields names a
// field that is gone.
func TestFieldsCoverGuide(t *testing.T) {
	paths := walkStrings(reflect.TypeFor[bundle.Guide](), "")
	matches := func(pattern, p string) bool {
		ok, err := path.Match(pattern, p)
		if err != nil {
			t.Fatalf("pattern %q: %v", pattern, err)
		}
		return ok
	}
	for _, p := range paths {
		n := 0
		for _, f := range fields {
			if matches(f.pattern, p) {
				n++
			}
		}
		if _, ok := notFreeText[p]; ok {
			n++
		}
		if n != 1 {
			t.Errorf("guide.json field %s is matched by %d rows of fields and notFreeText, want 1", p, n)
		}
	}
	for _, f := range fields {
		if !f.coordinate && !slices.ContainsFunc(paths, func(p string) bool { return matches(f.pattern, p) }) {
			t.Errorf("fields row %s matches no field of guide.json", f.pattern)
		}
	}
	for p := range notFreeText {
		if !slices.Contains(paths, p) {
			t.Errorf("notFreeText names %s, which is no field of guide.json", p)
		}
	}
}

package serve

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/site"
)

// writeFile writes data to rel under root of fsys, making its folders.
func writeFile(t testing.TB, fsys afero.Fs, root, rel string, data []byte) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := fsys.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := afero.WriteFile(fsys, p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// get returns the status and body s answers for a GET of target.
func get(s http.Handler, target string) (int, string) {
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	return rec.Code, rec.Body.String()
}

func TestReloadDirs(t *testing.T) {
	status := func(s string) []byte { return []byte(`{"status":"` + s + `"}`) }
	for _, fsName := range []string{"memory", "os"} {
		t.Run(fsName, func(t *testing.T) {
			var fsys afero.Fs = afero.NewMemMapFs()
			root := "/tree"
			if fsName == "os" {
				fsys, root = afero.NewOsFs(), filepath.Join(t.TempDir(), "tree")
			}
			for _, v := range []string{"a", "b", "d"} {
				writeFile(t, fsys, root, v+"/data/status", status("ready"))
			}
			writeFile(t, fsys, root, "u/a/index.html", []byte("<p>a</p>"))
			writeFile(t, fsys, root, "u/b/index.html", []byte("<p>b</p>"))
			s, err := New(fsys, root, testConfig(noWatch))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			// Serve everything once, so that all of it is cached.
			for _, p := range []string{"/a/data/status", "/b/data/status", "/d/data/status", "/u/a", "/u/b"} {
				if code, _ := get(s, p); code != 200 {
					t.Fatalf("GET %s = %d", p, code)
				}
			}

			writeFile(t, fsys, root, "a/data/status", status("changed")) // changed
			fsys.RemoveAll(filepath.Join(root, "b"))                     // removed
			writeFile(t, fsys, root, "c/data/status", status("new"))     // new
			writeFile(t, fsys, root, "d/data/status", status("locked"))  // changed, but not named
			writeFile(t, fsys, root, "u/a/index.html", []byte("<p>a2</p>"))
			writeFile(t, fsys, root, "u/b/index.html", []byte("<p>b2</p>")) // not named
			if err := s.ReloadDirs("a", "b", "c", "u/a"); err != nil {
				t.Fatal(err)
			}
			for _, tt := range []struct {
				path string
				code int
				body string
			}{
				{"/a/data/status", 200, `{"status":"changed"}`},
				{"/b/data/status", 404, ""},
				{"/c/data/status", 200, `{"status":"new"}`},
				{"/d/data/status", 200, `{"status":"ready"}`}, // cached, not reloaded yet
				{"/u/a", 200, "<p>a2</p>"},
				{"/u/b", 200, "<p>b</p>"}, // cached, not reloaded yet
			} {
				code, body := get(s, tt.path)
				if code != tt.code || (tt.body != "" && body != tt.body) {
					t.Errorf("GET %s = %d %q, want %d %q", tt.path, code, body, tt.code, tt.body)
				}
			}
			if err := s.ReloadDirs("d", "u"); err != nil {
				t.Fatal(err)
			}
			if _, body := get(s, "/d/data/status"); body != `{"status":"locked"}` {
				t.Errorf("after ReloadDirs(d): %q", body)
			}
			if _, body := get(s, "/u/b"); body != "<p>b2</p>" {
				t.Errorf("after ReloadDirs(u): %q", body)
			}
			for _, bad := range []string{"", ".", "..", "../a", "/a", "a/", "a//b", "a/./b", ".hidden", "a/.b", `a\b`} {
				if err := s.ReloadDirs(bad); err == nil {
					t.Errorf("ReloadDirs(%q): no error", bad)
				}
			}
		})
	}
}

// countingFs counts the files opened and folders listed through it.
type countingFs struct {
	afero.Fs
	opens atomic.Int64
}

func (c *countingFs) Open(name string) (afero.File, error) {
	c.opens.Add(1)
	return c.Fs.Open(name)
}

func (c *countingFs) OpenFile(name string, flag int, perm os.FileMode) (afero.File, error) {
	c.opens.Add(1)
	return c.Fs.OpenFile(name, flag, perm)
}

// TestNewReadsNothing checks that start-up costs the same for any tree:
// New opens no file and lists no folder, and the first request reads only
// the files it serves.
func TestNewReadsNothing(t *testing.T) {
	mem := afero.NewMemMapFs()
	for i := range 500 {
		writeFile(t, mem, "/tree", fmt.Sprintf("v%03d/data/status", i), []byte(`{"status":"ready"}`))
	}
	fsys := &countingFs{Fs: mem}
	s, err := New(fsys, "/tree", testConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n := fsys.opens.Load(); n != 0 {
		t.Fatalf("New opened %d files or folders, want 0", n)
	}
	if code, _ := get(s, "/v123/data/status"); code != 200 {
		t.Fatalf("status %d", code)
	}
	// The document and one try for each of its three siblings.
	if n := fsys.opens.Load(); n > 1+numEncodings {
		t.Errorf("the first request opened %d files, want at most %d", n, 1+numEncodings)
	}
	before := fsys.opens.Load()
	get(s, "/v123/data/status")
	if n := fsys.opens.Load() - before; n != 0 {
		t.Errorf("a cached document opened %d files", n)
	}
}

// TestCacheBudget serves far more documents than the cache may hold and
// checks that the cache stays within its budget while every answer stays
// right, and that zero caches nothing.
func TestCacheBudget(t *testing.T) {
	mem := afero.NewMemMapFs()
	const views = 400
	for i := range views {
		writeFile(t, mem, "/tree", fmt.Sprintf("v%03d/data/summary", i), summaryJSON(4000+i))
	}
	for _, budget := range []int64{0, 64 << 10} {
		t.Run(fmt.Sprint(budget), func(t *testing.T) {
			s, err := New(mem, "/tree", testConfig(func(c *Config) { c.CacheBytes = budget }))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			for round := range 3 {
				for i := range views {
					code, body := get(s, fmt.Sprintf("/v%03d/data/summary", i))
					if code != 200 || body != string(summaryJSON(4000+i)) {
						t.Fatalf("round %d, view %d: status %d, %d bytes", round, i, code, len(body))
					}
				}
				if s.cache != nil {
					s.cache.CleanUp()
				}
				if s.cache != nil && s.cache.WeightedSize() > uint64(budget) {
					t.Fatalf("round %d: cache holds %d bytes, budget %d", round, s.cache.WeightedSize(), budget)
				}
			}
			if budget == 0 && s.cache != nil {
				t.Errorf("budget 0: a cache was made")
			}
			if budget > 0 {
				if n := s.cache.EstimatedSize(); n == 0 || n >= views {
					t.Errorf("budget %d: %d of %d documents cached, want some but not all", budget, n, views)
				}
			}
		})
	}
}

// TestSmallMediaCachedLargeStreamed checks the two ways a media file is
// served: media above SmallFileLimit stream from disk with an ETag from the
// file's stamp, and small media are cached with an ETag from their bytes.
func TestSmallMediaCachedLargeStreamed(t *testing.T) {
	root := osTree(t, newTestTree())
	s, err := New(afero.NewOsFs(), root, testConfig(noWatch, smallFileLimit(4096)))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, tc := range []struct {
		path   string
		cached bool
	}{
		{"/v1/doc/plan.pdf", true},   // 3,000 bytes
		{"/v1/doc/photo.jpg", false}, // 200 KiB
		{"/v1/data/summary", true},   // a document
	} {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest("GET", tc.path, nil))
		if rec.Code != 200 {
			t.Fatalf("%s: status %d", tc.path, rec.Code)
		}
		_, cached := s.cache.GetIfPresent(strings.TrimPrefix(tc.path, "/"))
		if cached != tc.cached {
			t.Errorf("%s: cached %v, want %v", tc.path, cached, tc.cached)
		}
		etag := rec.Header().Get("ETag")
		if content := len(etag) == 34 && !strings.Contains(etag, "-"); content != tc.cached {
			t.Errorf("%s: ETag %s; want one from the content: %v", tc.path, etag, tc.cached)
		}
	}
}

// TestNoChangeLost races readers that keep the document cached against a
// writer that renames new versions into place, as the exporter does, and
// checks that every version is served soon after it is written: a change
// reported while a reader was reading the old file must not leave the old
// version cached for good. Every answer must be a whole version whose
// encodings agree.
func TestNoChangeLost(t *testing.T) {
	fc := fsCases(t, newTestTree())[0]
	s, err := New(fc.fsys, fc.root, testConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	version := func(i int) []byte { return []byte(fmt.Sprintf(`{"status":"ready","version":%d}`, i)) }
	stop := make(chan struct{})
	var readers sync.WaitGroup
	var bad atomic.Value
	for _, accept := range []string{"br", "gzip", ""} {
		readers.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				rec := httptest.NewRecorder()
				req := httptest.NewRequest("GET", "/v1/data/status", nil)
				req.Header.Set("Accept-Encoding", accept)
				s.ServeHTTP(rec, req)
				body, err := tryDecompress(rec.Header().Get("Content-Encoding"), rec.Body.Bytes())
				if err != nil || !bytes.HasPrefix(body, []byte(`{"status":"ready"`)) || !bytes.HasSuffix(body, []byte("}")) {
					bad.Store(fmt.Sprintf("Accept-Encoding %q: served %q", accept, body))
				}
			}
		})
	}
	for i := range 60 {
		v := version(i)
		// Siblings first, the identity last: until it lands, the new
		// siblings do not match and are not served.
		for _, enc := range []site.Encoding{site.Brotli, site.Gzip} {
			writeAtomic(t, fc.root, "v1/data/status"+enc.Ext, compress(t, enc, v))
		}
		writeAtomic(t, fc.root, "v1/data/status", v)
		waitFor(t, fmt.Sprintf("version %d", i), func() bool {
			for _, accept := range []string{"br", "gzip", ""} {
				rec := httptest.NewRecorder()
				req := httptest.NewRequest("GET", "/v1/data/status", nil)
				req.Header.Set("Accept-Encoding", accept)
				s.ServeHTTP(rec, req)
				if !bytes.Equal(decompress(t, rec.Header().Get("Content-Encoding"), rec.Body.Bytes()), v) {
					return false
				}
			}
			return true
		})
	}
	close(stop)
	readers.Wait()
	if msg := bad.Load(); msg != nil {
		t.Fatal(msg)
	}
}

// TestDecodesToReusesDecoders checks the pooled decoders: a match, a
// mismatch, a corrupt sibling and a match again, for each encoding, give
// the right answers however the pool hands decoders out.
func TestDecodesToReusesDecoders(t *testing.T) {
	a, b := summaryJSON(5000), summaryJSON(7000)
	sumA := sha256.Sum256(a)
	for _, enc := range site.Encodings {
		za, zb := compress(t, enc, a), compress(t, enc, b)
		for round := range 3 {
			if err := decodesTo(enc, za, int64(len(a)), &sumA); err != nil {
				t.Errorf("%s round %d: a matches a: %v", enc.Name, round, err)
			}
			if err := decodesTo(enc, zb, int64(len(a)), &sumA); err == nil {
				t.Errorf("%s round %d: b matches a", enc.Name, round)
			}
			if err := decodesTo(enc, za[:len(za)/2], int64(len(a)), &sumA); err == nil {
				t.Errorf("%s round %d: half of a matches a", enc.Name, round)
			}
		}
	}
}

// TestPollInsteadOfWatching checks Config.Poll: no watcher is started, a
// cached document is served as it is until it is older than Poll, and
// then its change is seen.
func TestPollInsteadOfWatching(t *testing.T) {
	fc := fsCases(t, newTestTree())[0]
	const poll = 300 * time.Millisecond
	s, hs, client := newTestServer(t, fc, testConfig(func(c *Config) { c.Poll = poll }))
	if s.watchDone != nil {
		t.Fatal("a watcher was started")
	}
	// The entry is read, and its check time taken, after start: it is
	// trusted until at least start+poll.
	start := time.Now()
	if _, b := do(t, client, "GET", hs.URL+"/v1/data/status", nil); string(b) != `{"status":"ready"}` {
		t.Fatalf("served %q", b)
	}
	writeAtomic(t, fc.root, "v1/data/status", []byte(`{"status":"locked"}`))
	_, b := do(t, client, "GET", hs.URL+"/v1/data/status", nil)
	if string(b) != `{"status":"ready"}` && time.Since(start) < poll {
		t.Errorf("served %q before Poll passed: a cached document is trusted for Poll", b)
	}
	waitFor(t, "the change, once the cached entry is older than Poll", func() bool {
		_, b := do(t, client, "GET", hs.URL+"/v1/data/status", nil)
		return string(b) == `{"status":"locked"}`
	})
	if got := time.Since(start); got < poll {
		t.Errorf("change seen after %v, before Poll (%v) passed", got, poll)
	}
}

// hookFs calls hook, once, right after the file it names is opened.
type hookFs struct {
	afero.Fs
	name string
	hook func()
}

func (h *hookFs) Open(name string) (afero.File, error) {
	f, err := h.Fs.Open(name)
	if err == nil && name == h.name && h.hook != nil {
		hook := h.hook
		h.hook = nil
		hook()
	}
	return f, err
}

// TestChangeDuringReadNotLost replaces a document, and reports the change
// as the watcher does, while the server is reading the old one: the old
// version may be answered once, but must not stay cached as fresh. It
// fails when a load ignores the reports made during it.
func TestChangeDuringReadNotLost(t *testing.T) {
	mem := afero.NewMemMapFs()
	writeFile(t, mem, "/tree", "v1/data/status", []byte(`{"status":"ready"}`))
	fsys := &hookFs{Fs: mem, name: filepath.Join("/tree", "v1", "data", "status")}
	s, err := New(fsys, "/tree", testConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fsys.hook = func() {
		// The open file keeps the old bytes; the new ones are renamed in
		// and reported, as the exporter and the watcher do.
		writeFile(t, mem, "/tree", "v1/data/.tmp-status", []byte(`{"status":"locked"}`))
		if err := mem.Rename("/tree/v1/data/.tmp-status", "/tree/v1/data/status"); err != nil {
			t.Fatal(err)
		}
		s.changedFile("v1/data/status")
	}
	if _, body := get(s, "/v1/data/status"); body != `{"status":"ready"}` {
		t.Fatalf("first answer %q, want the version being read", body)
	}
	if _, body := get(s, "/v1/data/status"); body != `{"status":"locked"}` {
		t.Fatalf("after the change: %q, want the new version", body)
	}
}

// statHookFs calls hook, once, after it has looked up the file it names,
// and returns what it found before the hook ran.
type statHookFs struct {
	afero.Fs
	name string
	hook func()
}

func (h *statHookFs) LstatIfPossible(name string) (os.FileInfo, bool, error) {
	fi, lstat, err := h.Fs.(afero.Lstater).LstatIfPossible(name)
	if name == h.name && h.hook != nil {
		hook := h.hook
		h.hook = nil
		hook()
	}
	return fi, lstat, err
}

// TestChangeDuringCheckNotLost replaces a file, and reports it, while the
// server is checking a cached entry already marked as changed: the check
// saw the old file, so it must not clear the new report.
func TestChangeDuringCheckNotLost(t *testing.T) {
	mem := afero.NewMemMapFs()
	writeFile(t, mem, "/tree", "v1/doc/plan.pdf", []byte("old plan"))
	fsys := &statHookFs{Fs: mem, name: filepath.Join("/tree", "v1", "doc", "plan.pdf")}
	s, err := New(fsys, "/tree", testConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, body := get(s, "/v1/doc/plan.pdf"); body != "old plan" {
		t.Fatalf("served %q", body)
	}
	s.changedFile("v1/doc/plan.pdf") // a report for a change that left the file as it was
	fsys.hook = func() {
		writeFile(t, mem, "/tree", "v1/doc/.tmp-plan", []byte("the new plan"))
		if err := mem.Rename("/tree/v1/doc/.tmp-plan", "/tree/v1/doc/plan.pdf"); err != nil {
			t.Fatal(err)
		}
		s.changedFile("v1/doc/plan.pdf")
	}
	if _, body := get(s, "/v1/doc/plan.pdf"); body != "the new plan" {
		t.Fatalf("after a change reported during the check: %q, want the new file", body)
	}
}

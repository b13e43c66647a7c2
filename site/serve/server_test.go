package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/site"
)

// fsCase is a file system the server tests run on.
type fsCase struct {
	name string
	fsys afero.Fs
	root string
}

// fsCases writes tt to a real temp dir and to a memory file system.
func fsCases(t *testing.T, tt testTree) []fsCase {
	t.Helper()
	mem := afero.NewMemMapFs()
	tt.write(t, mem, "/public")
	return []fsCase{
		{"os", afero.NewOsFs(), osTree(t, tt)},
		{"mem", mem, "/public"},
	}
}

// newTestServer returns a Server on fc and an HTTP server in front of it,
// with a client that neither adds Accept-Encoding nor decompresses.
func newTestServer(t *testing.T, fc fsCase, cfg Config) (*Server, *httptest.Server, *http.Client) {
	t.Helper()
	s, err := New(fc.fsys, fc.root, cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	t.Cleanup(client.CloseIdleConnections)
	return s, hs, client
}

// get sends method to url with the given headers (a header with value
// "<empty>" is sent empty) and returns the response with its body read.
func do(t *testing.T, client *http.Client, method, url string, headers map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		if v == "<empty>" {
			v = ""
		}
		req.Header[http.CanonicalHeaderKey(k)] = []string{v}
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

func TestAcceptEncoding(t *testing.T) {
	tt := newTestTree()
	for _, fc := range fsCases(t, tt) {
		t.Run(fc.name, func(t *testing.T) {
			_, hs, client := newTestServer(t, fc, testConfig())
			tests := []struct {
				path   string
				accept string // "-" sends no header
				status int
				want   string // Content-Encoding; "" for identity
			}{
				{"/v1/data/summary", "-", 200, ""},
				{"/v1/data/summary", "<empty>", 200, ""},
				{"/v1/data/summary", "br", 200, "br"},
				{"/v1/data/summary", "BR", 200, "br"},
				{"/v1/data/summary", "gzip, br;q=0.5", 200, "gzip"},
				{"/v1/data/summary", "gzip, deflate, br, zstd", 200, "br"},
				{"/v1/data/summary", "gzip, zstd", 200, "zstd"},
				{"/v1/data/summary", "br;q=0, gzip", 200, "gzip"},
				{"/v1/data/summary", "identity;q=0", 406, ""},
				{"/v1/data/summary", "identity;q=0, gzip;q=0.001", 200, "gzip"},
				{"/v1/data/summary", "*", 200, "br"},
				{"/v1/data/summary", "*;q=0", 406, ""},
				{"/v1/data/summary", "*;q=0, identity", 200, ""},
				{"/v1/data/summary", "*;q=0.5, identity", 200, ""},
				{"/v1/data/summary", "identity;q=0.5, gzip;q=0.5", 200, "gzip"},
				{"/v1/data/summary", "zstd", 200, "zstd"},
				{"/v1/data/summary", "x-gzip", 200, "gzip"},
				{"/v1/data/summary", "compress", 200, ""},
				{"/v1/data/summary", "gzip;q=1.5", 200, ""},
				{"/v1/data/summary", "gzip;q=abc, br;q=0.9", 200, "br"},
				{"/v1/data/summary", "garbage;;;==,,, ;q=", 200, ""},
				{"/v1/data/summary", "br;q=0.5;q=0.9, ;;, br;foo", 200, "br"},
				{"/v1/data/summary", strings.Repeat("br;q=0,", 2000), 200, ""},
				// Only a .gz sibling exists for reso/autofill.
				{"/v1/reso/autofill", "br, zstd", 200, ""},
				{"/v1/reso/autofill", "br, gzip;q=0.1", 200, "gzip"},
				{"/v1/reso/autofill", "br, identity;q=0", 406, ""},
				// Media are never encoded.
				{"/v1/doc/plan.pdf", "br, gzip", 200, ""},
				{"/v1/doc/photo.jpg", "*", 200, ""},
				{"/v1/doc/photo.jpg", "identity;q=0", 406, ""},
			}
			for _, tc := range tests {
				t.Run(tc.path+" "+tc.accept, func(t *testing.T) {
					h := map[string]string{}
					if tc.accept != "-" {
						h["Accept-Encoding"] = tc.accept
					}
					resp, body := do(t, client, "GET", hs.URL+tc.path, h)
					if resp.StatusCode != tc.status {
						t.Fatalf("status %d, want %d (body %q)", resp.StatusCode, tc.status, body)
					}
					if got := resp.Header.Get("X-Content-Type-Options"); got != "nosniff" {
						t.Errorf("X-Content-Type-Options %q", got)
					}
					if tc.status != 200 {
						checkJSONError(t, resp, body, "not_acceptable")
						return
					}
					if got := resp.Header.Get("Content-Encoding"); got != tc.want {
						t.Fatalf("Content-Encoding %q, want %q", got, tc.want)
					}
					name := strings.TrimPrefix(tc.path, "/")
					identity := tt.docs[name]
					wantType, wantCache, wantVary := "application/json", site.DocumentCacheControl, "Accept-Encoding"
					if identity == nil {
						identity = tt.media[name]
						wantType, wantCache, wantVary = site.ContentType(name), site.MediaCacheControl, ""
					}
					if got := decompress(t, tc.want, body); !bytes.Equal(got, identity) {
						t.Fatalf("body decodes to %d bytes that differ from the %d identity bytes", len(got), len(identity))
					}
					if got := resp.Header.Get("Content-Length"); got != strconv.Itoa(len(body)) {
						t.Errorf("Content-Length %q for %d bytes", got, len(body))
					}
					for k, want := range map[string]string{"Content-Type": wantType, "Cache-Control": wantCache, "Vary": wantVary} {
						if got := resp.Header.Get(k); got != want {
							t.Errorf("%s %q, want %q", k, got, want)
						}
					}
					if etag := resp.Header.Get("ETag"); !strings.HasPrefix(etag, `"`) || len(etag) < 10 {
						t.Errorf("ETag %q is not a strong entity tag", etag)
					}
				})
			}
		})
	}
}

// checkJSONError checks an error response: JSON body {"code": code}.
func checkJSONError(t *testing.T, resp *http.Response, body []byte, code string) {
	t.Helper()
	if got := resp.Header.Get("Content-Type"); got != "application/json" {
		t.Errorf("error Content-Type %q", got)
	}
	var e struct{ Code string }
	if err := json.Unmarshal(body, &e); err != nil || e.Code != code {
		t.Errorf("error body %q, want code %q (%v)", body, code, err)
	}
}

func TestETagsDifferPerRepresentation(t *testing.T) {
	fc := fsCases(t, newTestTree())[0]
	_, hs, client := newTestServer(t, fc, testConfig())
	seen := map[string]string{}
	for _, enc := range []string{"identity", "br", "zstd", "gzip"} {
		resp, _ := do(t, client, "GET", hs.URL+"/v1/data/summary", map[string]string{"Accept-Encoding": enc})
		etag := resp.Header.Get("ETag")
		if other, dup := seen[etag]; dup {
			t.Errorf("%s and %s share ETag %s", enc, other, etag)
		}
		seen[etag] = enc
		again, _ := do(t, client, "GET", hs.URL+"/v1/data/summary", map[string]string{"Accept-Encoding": enc})
		if got := again.Header.Get("ETag"); got != etag {
			t.Errorf("%s: ETag changed between requests: %s then %s", enc, etag, got)
		}
	}
}

func TestConditionalRequests(t *testing.T) {
	for _, fc := range fsCases(t, newTestTree()) {
		t.Run(fc.name, func(t *testing.T) {
			_, hs, client := newTestServer(t, fc, testConfig(smallFileLimit(1024)))
			for _, path := range []string{"/v1/data/summary", "/v1/doc/photo.jpg"} {
				resp, _ := do(t, client, "GET", hs.URL+path, map[string]string{"Accept-Encoding": "br"})
				etag := resp.Header.Get("ETag")
				gz, _ := do(t, client, "GET", hs.URL+path, map[string]string{"Accept-Encoding": "gzip"})
				tests := []struct {
					name, inm, accept string
					status            int
				}{
					{"right", etag, "br", 304},
					{"weak form matches (weak comparison)", "W/" + etag, "br", 304},
					{"in a list", `"nope", ` + etag, "br", 304},
					{"star", "*", "br", 304},
					{"wrong", `"0123456789"`, "br", 200},
					{"unquoted", strings.Trim(etag, `"`), "br", 200},
					{"other representation", gz.Header.Get("ETag"), "br", 200},
				}
				if path == "/v1/doc/photo.jpg" {
					tests[len(tests)-1].status = 304 // media have a single representation
				}
				for _, tc := range tests {
					t.Run(path+" "+tc.name, func(t *testing.T) {
						resp, body := do(t, client, "GET", hs.URL+path, map[string]string{"Accept-Encoding": tc.accept, "If-None-Match": tc.inm})
						if resp.StatusCode != tc.status {
							t.Fatalf("status %d, want %d", resp.StatusCode, tc.status)
						}
						if tc.status == 304 {
							if len(body) != 0 {
								t.Errorf("304 with a %d-byte body", len(body))
							}
							if got := resp.Header.Get("ETag"); got != etag {
								t.Errorf("304 ETag %q, want %q", got, etag)
							}
							if path == "/v1/data/summary" && resp.Header.Get("Vary") != "Accept-Encoding" {
								t.Errorf("304 without Vary")
							}
							if resp.Header.Get("Cache-Control") == "" {
								t.Errorf("304 without Cache-Control")
							}
						}
					})
				}
			}
		})
	}
}

func TestRangeAndHead(t *testing.T) {
	tt := newTestTree()
	for _, fc := range fsCases(t, tt) {
		t.Run(fc.name, func(t *testing.T) {
			_, hs, client := newTestServer(t, fc, testConfig(smallFileLimit(1024)))
			full, fullBody := do(t, client, "GET", hs.URL+"/v1/data/summary", map[string]string{"Accept-Encoding": "br"})
			etag := full.Header.Get("ETag")
			photo := tt.media["v1/doc/photo.jpg"]
			tests := []struct {
				name, path string
				headers    map[string]string
				status     int
				want       []byte
				encoding   string
			}{
				{"first bytes of br", "/v1/data/summary", map[string]string{"Accept-Encoding": "br", "Range": "bytes=0-9"}, 206, fullBody[:10], "br"},
				{"suffix of br", "/v1/data/summary", map[string]string{"Accept-Encoding": "br", "Range": "bytes=-5"}, 206, fullBody[len(fullBody)-5:], "br"},
				{"If-Range matches", "/v1/data/summary", map[string]string{"Accept-Encoding": "br", "Range": "bytes=3-4", "If-Range": etag}, 206, fullBody[3:5], "br"},
				{"If-Range stale", "/v1/data/summary", map[string]string{"Accept-Encoding": "br", "Range": "bytes=3-4", "If-Range": `"old"`}, 200, fullBody, "br"},
				{"unsatisfiable", "/v1/data/summary", map[string]string{"Accept-Encoding": "br", "Range": "bytes=999999-"}, 416, nil, ""},
				{"media from disk", "/v1/doc/photo.jpg", map[string]string{"Range": "bytes=1000-1999"}, 206, photo[1000:2000], ""},
				{"media open end", "/v1/doc/photo.jpg", map[string]string{"Range": "bytes=204000-"}, 206, photo[204000:], ""},
			}
			for _, tc := range tests {
				t.Run(tc.name, func(t *testing.T) {
					resp, body := do(t, client, "GET", hs.URL+tc.path, tc.headers)
					if resp.StatusCode != tc.status {
						t.Fatalf("status %d, want %d", resp.StatusCode, tc.status)
					}
					if tc.want != nil && !bytes.Equal(body, tc.want) {
						t.Fatalf("body %d bytes, want %d", len(body), len(tc.want))
					}
					if tc.status != 416 && resp.Header.Get("Content-Encoding") != tc.encoding {
						t.Errorf("Content-Encoding %q, want %q", resp.Header.Get("Content-Encoding"), tc.encoding)
					}
				})
			}

			for _, path := range []string{"/v1/data/summary", "/v1/doc/photo.jpg", "/v1/nothing"} {
				get, getBody := do(t, client, "GET", hs.URL+path, map[string]string{"Accept-Encoding": "gzip"})
				head, headBody := do(t, client, "HEAD", hs.URL+path, map[string]string{"Accept-Encoding": "gzip"})
				if len(headBody) != 0 || head.StatusCode != get.StatusCode {
					t.Errorf("HEAD %s: status %d with %d body bytes; GET gave %d", path, head.StatusCode, len(headBody), get.StatusCode)
				}
				for _, k := range []string{"Content-Type", "Content-Encoding", "Content-Length", "ETag", "Vary", "Cache-Control"} {
					if head.Header.Get(k) != get.Header.Get(k) {
						t.Errorf("HEAD %s: %s %q, GET has %q", path, k, head.Header.Get(k), get.Header.Get(k))
					}
				}
				if get.Header.Get("Content-Length") != strconv.Itoa(len(getBody)) {
					t.Errorf("GET %s: Content-Length %s for %d bytes", path, get.Header.Get("Content-Length"), len(getBody))
				}
			}
		})
	}
}

func TestNeverServed(t *testing.T) {
	for _, fc := range fsCases(t, newTestTree()) {
		t.Run(fc.name, func(t *testing.T) {
			s, err := New(fc.fsys, fc.root, testConfig(noWatch, smallFileLimit(1024)))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			// Request targets exactly as they arrive on the wire.
			targets := []string{
				"/",
				"/../secret",
				"/v1/../../secret",
				"/%2e%2e/secret",
				"/%2E%2E/secret",
				"/v1/%2e%2e/%2e%2e/secret",
				"/v1%2Fdata%2Fstatus",
				"/v1/data%2fstatus",
				"/v1%5Cdata%5Cstatus",
				"/v1\\data\\status",
				"/v1/data/status%00",
				"/v1/data/status%00.br",
				"/v1/data/status%0a",
				"//v1/data/status",
				"/v1//data/status",
				"/v1/./data/status",
				"/v1/data/status/",
				"/v1/data/",
				"/v1/data",
				"/v1/data/.tmp-x",
				"/v1/data/%2etmp-x",
				"/.hidden",
				"/v1/.git/config",
				"/v1/data/summary.br",
				"/v1/data/summary.gz",
				"/v1/data/summary.zst",
				"/v2/data/status.br",
				"/v2/data/status",
				"/v1/doc/link.jpg",
				"/v1/up/secret",
				"/v1/doc/nothing.jpg",
			}
			for _, target := range targets {
				t.Run(target, func(t *testing.T) {
					for _, method := range []string{"GET", "HEAD"} {
						rec := httptest.NewRecorder()
						s.ServeHTTP(rec, httptest.NewRequest(method, "http://example.test"+target, nil))
						if rec.Code != http.StatusNotFound {
							t.Fatalf("%s: status %d, want 404 (body %q)", method, rec.Code, rec.Body.Bytes())
						}
						if method == "GET" && rec.Body.String() != `{"code":"not_found"}`+"\n" {
							t.Errorf("body %q", rec.Body.String())
						}
						if rec.Header().Get("Content-Type") != "application/json" || rec.Header().Get("X-Content-Type-Options") != "nosniff" {
							t.Errorf("headers %v", rec.Header())
						}
					}
				})
			}
			// Sanity: the same server does serve the real files.
			for _, target := range []string{"/v1/data/status", "/v1/doc/file.gz", "/v1/data/status?x=1", "/alias/data/status", "/v1/doc/plan%2Epdf"} {
				rec := httptest.NewRecorder()
				s.ServeHTTP(rec, httptest.NewRequest("GET", "http://example.test"+target, nil))
				if rec.Code != http.StatusOK {
					t.Errorf("%s: status %d, want 200", target, rec.Code)
				}
			}
		})
	}
}

func TestMethodNotAllowed(t *testing.T) {
	fc := fsCases(t, newTestTree())[1]
	_, hs, client := newTestServer(t, fc, testConfig())
	for _, method := range []string{"POST", "PUT", "DELETE", "OPTIONS", "PATCH", "BREW"} {
		resp, body := do(t, client, method, hs.URL+"/v1/data/status", nil)
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Fatalf("%s: status %d", method, resp.StatusCode)
		}
		if resp.Header.Get("Allow") != "GET, HEAD" {
			t.Errorf("%s: Allow %q", method, resp.Header.Get("Allow"))
		}
		checkJSONError(t, resp, body, "method_not_allowed")
	}
}

// writeAtomic writes data to name under root the way the exporter does:
// a temp file in the same folder, then a rename.
func writeAtomic(t *testing.T, root, name string, data []byte) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(filepath.Dir(p), site.TempPrefix+filepath.Base(p))
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, p); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls check until it returns true or a few seconds pass: the
// watcher reloads in the background, and there is no event to wait on
// from outside.
func waitFor(t *testing.T, what string, check func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for time.Since(start) < 5*time.Second {
		if check() {
			return time.Since(start)
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("%s: not seen after %v", what, time.Since(start))
	return 0
}

func TestWatchPicksUpChanges(t *testing.T) {
	tt := newTestTree()
	fc := fsCases(t, tt)[0]
	_, hs, client := newTestServer(t, fc, testConfig())
	body := func(path, accept string) (int, string) {
		resp, b := do(t, client, "GET", hs.URL+path, map[string]string{"Accept-Encoding": accept})
		return resp.StatusCode, string(decompress(t, resp.Header.Get("Content-Encoding"), b))
	}

	// A changed document, its sibling renamed in after it.
	next := []byte(`{"status":"locked"}`)
	writeAtomic(t, fc.root, "v1/data/status", next)
	writeAtomic(t, fc.root, "v1/data/status.br", compress(t, site.Brotli, next))
	took := waitFor(t, "changed status", func() bool {
		_, b := body("/v1/data/status", "br")
		return b == string(next)
	})
	t.Logf("change served after %v", took)

	// A new view in new folders.
	writeAtomic(t, fc.root, "v9/data/status", []byte(`{"status":"not-ready"}`))
	waitFor(t, "new view", func() bool {
		code, b := body("/v9/data/status", "")
		return code == 200 && b == `{"status":"not-ready"}`
	})

	// A removed view.
	if err := os.RemoveAll(filepath.Join(fc.root, "alias")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "removed alias", func() bool {
		code, _ := body("/alias/data/status", "")
		return code == 404
	})
}

func TestReloadWithoutWatch(t *testing.T) {
	for _, fc := range fsCases(t, newTestTree()) {
		t.Run(fc.name, func(t *testing.T) {
			s, hs, client := newTestServer(t, fc, testConfig(noWatch, smallFileLimit(1024)))
			// A document served once is cached; a change of its file is
			// not seen until Reload, without a watcher to report it.
			if _, first := do(t, client, "GET", hs.URL+"/v1/data/status", nil); string(first) != `{"status":"ready"}` {
				t.Fatalf("served %q", first)
			}
			p := filepath.Join(fc.root, "v1", "data", "status")
			if err := afero.WriteFile(fc.fsys, p, []byte(`{"status":"locked"}`), 0o644); err != nil {
				t.Fatal(err)
			}
			_, before := do(t, client, "GET", hs.URL+"/v1/data/status", nil)
			if string(before) != `{"status":"ready"}` {
				t.Fatalf("served %q before Reload: a cached document is trusted until Reload", before)
			}
			s.Reload()
			_, after := do(t, client, "GET", hs.URL+"/v1/data/status", nil)
			if string(after) != `{"status":"locked"}` {
				t.Fatalf("served %q after Reload", after)
			}
			// A document never served is read as it is now.
			if err := afero.WriteFile(fc.fsys, filepath.Join(fc.root, "alias", "data", "status"), []byte(`{"status":"new"}`), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, b := do(t, client, "GET", hs.URL+"/alias/data/status", nil); string(b) != `{"status":"new"}` {
				t.Fatalf("uncached document: served %q", b)
			}

			// A large media file replaced on disk is served as it is now,
			// with a matching ETag.
			photo := mediaBytes(300 << 10)
			if err := afero.WriteFile(fc.fsys, filepath.Join(fc.root, "v1", "doc", "photo.jpg"), photo, 0o644); err != nil {
				t.Fatal(err)
			}
			resp, got := do(t, client, "GET", hs.URL+"/v1/doc/photo.jpg", nil)
			if resp.StatusCode != 200 || !bytes.Equal(got, photo) {
				t.Fatalf("replaced media: status %d, %d bytes, want %d", resp.StatusCode, len(got), len(photo))
			}
			again, _ := do(t, client, "GET", hs.URL+"/v1/doc/photo.jpg", map[string]string{"If-None-Match": resp.Header.Get("ETag")})
			if again.StatusCode != 304 {
				t.Errorf("ETag of the replaced media does not validate: %d", again.StatusCode)
			}
		})
	}
}

func TestNewMissingRoot(t *testing.T) {
	if _, err := New(afero.NewOsFs(), filepath.Join(t.TempDir(), "absent"), Config{}); err == nil {
		t.Fatal("New on a missing root: no error")
	}
	if _, err := New(afero.NewMemMapFs(), "/absent", Config{}); err == nil {
		t.Fatal("New on a missing root (memory): no error")
	}
}

func TestPollWhenWatchFails(t *testing.T) {
	orig := newEvents
	newEvents = func() (*fsnotify.Watcher, error) {
		return nil, errors.New("no more inotify watches")
	}
	defer func() { newEvents = orig }()
	fc := fsCases(t, newTestTree())[0]
	_, hs, client := newTestServer(t, fc, testConfig(func(c *Config) { c.PollInterval = 10 * time.Millisecond }))
	writeAtomic(t, fc.root, "v1/data/status", []byte(`{"status":"locked"}`))
	waitFor(t, "change picked up by polling", func() bool {
		_, b := do(t, client, "GET", hs.URL+"/v1/data/status", nil)
		return string(b) == `{"status":"locked"}`
	})
}

func TestRequestsDuringReloads(t *testing.T) {
	// Readers racing reloads always get a whole version whose ETag matches
	// its bytes.
	fc := fsCases(t, newTestTree())[1]
	s, err := New(fc.fsys, fc.root, testConfig(noWatch))
	if err != nil {
		t.Fatal(err)
	}
	versions := map[string]string{} // ETag → body
	var mu sync.Mutex
	p := filepath.Join(fc.root, "v1", "data", "status")
	done := make(chan struct{})
	var reads atomic.Int64
	const readers = 4
	var wg sync.WaitGroup
	for range readers {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				rec := httptest.NewRecorder()
				s.ServeHTTP(rec, httptest.NewRequest("GET", "/v1/data/status", nil))
				etag, body := rec.Header().Get("ETag"), rec.Body.String()
				mu.Lock()
				if prev, ok := versions[etag]; ok && prev != body {
					t.Errorf("ETag %s served with %q and %q", etag, prev, body)
				}
				versions[etag] = body
				mu.Unlock()
				reads.Add(1)
			}
		})
	}
	const reloads = 50
	for i := range reloads {
		body := []byte(`{"status":"v` + strconv.Itoa(i) + `"}`)
		if err := afero.WriteFile(fc.fsys, p, body, 0o644); err != nil {
			t.Fatal(err)
		}
		s.Reload()
		// Each reader has at most one request in flight that began before
		// the reload, so readers+1 more completed reads include at least
		// one that saw this version, however slowly the readers are
		// scheduled.
		for want := reads.Load() + readers + 1; reads.Load() < want; {
			runtime.Gosched()
		}
	}
	close(done)
	wg.Wait()
	if len(versions) < reloads {
		t.Errorf("readers saw %d versions, want at least %d", len(versions), reloads)
	}
}

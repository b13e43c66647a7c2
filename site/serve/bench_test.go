package serve

import (
	"bufio"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/site"
)

// benchTree exports the sample bundles and adds a 200 KB media file to the
// view with the largest summary. It returns the root and the paths of a
// status, that summary and the media file.
func benchTree(b *testing.B) (root string, paths map[string]string) {
	b.Helper()
	root = exportFixtures(b)
	var best string
	var bestSize int64
	afero.Walk(afero.NewOsFs(), root, func(p string, info fs.FileInfo, err error) error {
		if err == nil && !info.IsDir() && strings.HasSuffix(filepath.ToSlash(p), "/"+site.SummaryFile) && info.Size() > bestSize {
			best, bestSize = p, info.Size()
		}
		return nil
	})
	if best == "" {
		b.Fatal("no summary in the export")
	}
	rel, _ := filepath.Rel(root, best)
	view := strings.Split(filepath.ToSlash(rel), "/")[0]
	media := filepath.Join(root, view, site.MediaDir, "bench-200k.jpg")
	if err := os.MkdirAll(filepath.Dir(media), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(media, mediaBytes(200<<10), 0o644); err != nil {
		b.Fatal(err)
	}
	b.Logf("summary %s: %d bytes", rel, bestSize)
	return root, map[string]string{
		"status":  "/" + site.ViewFile(view, site.StatusFile),
		"summary": "/" + site.ViewFile(view, site.SummaryFile),
		"media":   "/" + site.MediaFile(view, "bench-200k.jpg"),
	}
}

// BenchmarkServe measures requests per second and the 99th percentile
// latency of guidepub serve and of nginx (gzip_static, configured by
// WriteConfig) on the same tree, with the same load generator: 16
// keep-alive connections on loopback sending Accept-Encoding: br, gzip.
// Both servers run in their own processes, so the load generator does
// not share the Go scheduler with the server it measures.
func BenchmarkServe(b *testing.B) {
	root, paths := benchTree(b)
	servers := []struct{ name, url string }{{"guidepub", startChildServer(b, root)}}
	if _, err := exec.LookPath("nginx"); err == nil || fileExists("/usr/sbin/nginx") {
		servers = append(servers, struct{ name, url string }{"nginx", startNginx(b, root)})
	} else {
		b.Log("nginx not installed (apt-get install nginx-light): nginx part skipped")
	}
	for _, target := range []string{"status", "summary", "media"} {
		for _, srv := range servers {
			b.Run(target+"/"+srv.name, func(b *testing.B) {
				loadTest(b, srv.url+paths[target])
			})
		}
	}
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// loadTest sends b.N GETs to url from 16 concurrent keep-alive
// connections and reports req/s and p99 latency.
func loadTest(b *testing.B, url string) {
	const conns = 16
	client := &http.Client{Transport: &http.Transport{
		DisableCompression: true, MaxIdleConns: conns, MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns,
	}}
	defer client.CloseIdleConnections()
	get := func() error {
		req, _ := http.NewRequest("GET", url, nil)
		req.Header.Set("Accept-Encoding", "br, gzip")
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err == nil && resp.StatusCode != 200 {
			b.Fatalf("%s: status %d", url, resp.StatusCode)
		}
		return err
	}
	// Warm up: open the connections.
	var wg sync.WaitGroup
	for range conns {
		wg.Go(func() { get() })
	}
	wg.Wait()

	lat := make([]time.Duration, b.N)
	var next atomic.Int64
	var failed atomic.Value
	b.ResetTimer()
	start := time.Now()
	for range conns {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(b.N) {
					return
				}
				t0 := time.Now()
				if err := get(); err != nil {
					failed.Store(err)
					return
				}
				lat[i] = time.Since(t0)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	slices.Sort(lat)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
	b.ReportMetric(float64(lat[(len(lat)-1)*99/100].Microseconds()), "p99-µs")
	b.ReportMetric(0, "ns/op") // the rate above is the meaningful number
}

// nopWriter is a ResponseWriter that discards everything, so
// BenchmarkHandler measures the handler alone.
type nopWriter struct{ h http.Header }

func (w *nopWriter) Header() http.Header         { return w.h }
func (w *nopWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *nopWriter) WriteHeader(int)             {}

// BenchmarkHandler measures ServeHTTP without the network: the cost of
// negotiation, lookup and headers for a document in memory.
func BenchmarkHandler(b *testing.B) {
	root := osTree(b, newTestTree())
	s, err := New(afero.NewOsFs(), root, testConfig(noWatch))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	for _, tc := range []struct{ name, path, accept, inm string }{
		{"summary-br", "/v1/data/summary", "gzip, deflate, br, zstd", ""},
		{"status-304", "/v1/data/status", "br, gzip", `"x", W/"y"`},
		{"not-found", "/v1/data/nothing", "br", ""},
	} {
		b.Run(tc.name, func(b *testing.B) {
			req := httptest.NewRequest("GET", tc.path, nil)
			req.Header.Set("Accept-Encoding", tc.accept)
			if tc.inm != "" {
				req.Header.Set("If-None-Match", tc.inm)
			}
			w := &nopWriter{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				clear(w.h)
				s.ServeHTTP(w, req)
			}
		})
	}
}

// BenchmarkReloadLatency measures how long after a document is renamed
// into place (as the exporter writes it) the watching server serves it:
// the write-to-served latency `guidepub serve` adds. It reports the
// median and the 99th percentile.
func BenchmarkReloadLatency(b *testing.B) {
	root, paths := benchTree(b)
	s, err := New(afero.NewOsFs(), root, testConfig())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	target := strings.TrimPrefix(paths["status"], "/")
	file := filepath.Join(root, filepath.FromSlash(target))
	lat := make([]time.Duration, 0, b.N)
	w := &nopWriter{h: http.Header{}}
	req := httptest.NewRequest("GET", paths["status"], nil)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		clear(w.h)
		s.ServeHTTP(w, req)
		etagBefore := w.h.Get("Etag")
		tmp := filepath.Join(filepath.Dir(file), site.TempPrefix+"bench")
		if err := os.WriteFile(tmp, []byte(`{"status":"ready","n":`+strconv.Itoa(i)+`}`), 0o644); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		if err := os.Rename(tmp, file); err != nil {
			b.Fatal(err)
		}
		for {
			clear(w.h)
			s.ServeHTTP(w, req)
			if w.h.Get("Etag") != etagBefore {
				break
			}
			if time.Since(start) > 5*time.Second {
				b.Fatal("change not served after 5 s")
			}
			time.Sleep(time.Millisecond)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[(len(lat)-1)*99/100].Microseconds())/1000, "p99-ms")
}

// childEnv names the variable that makes the test binary serve a tree
// instead of running tests (see TestMain).
const childEnv = "GUIDEPUB_SERVE_CHILD_DIR"

// TestMain runs the tests, or, in a child started by startChildServer,
// serves the tree named by childEnv on a random loopback port and prints
// the address.
func TestMain(m *testing.M) {
	if dir := os.Getenv(childEnv); dir != "" {
		s, err := New(afero.NewOsFs(), dir, testConfig(noWatch))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println(l.Addr().String())
		http.Serve(l, s)
		return
	}
	code := m.Run()
	removeSharedExport()
	os.Exit(code)
}

// startChildServer runs this test binary as a guidepub server for root in
// another process and returns its base URL; the process is killed when b
// ends.
func startChildServer(b *testing.B, root string) string {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+root)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		b.Fatalf("child server: %v", err)
	}
	return "http://" + strings.TrimSpace(line)
}

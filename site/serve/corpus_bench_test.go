package serve

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/guidepub/guidepub/site"
	"github.com/guidepub/guidepub/site/procstat"
)

// BenchmarkCorpus compares guidepub serve (the real command, default
// settings), nginx (the configuration serve prints, one worker) and Caddy
// (file_server with precompressed br zstd gzip) on the same generated
// trees of 1,000 and 10,000 guides. For each server it reports the
// resident memory once it answers and after the load runs, and how long it
// took to answer its first request; then, for a summary document, a 304
// for it, and a 200 KB photo, each with a URL list spread over every guide,
// the requests per second and the 99th percentile latency that wrk
// measures. Each server is pinned to CPU 0 and wrk to CPU 1 (taskset), and
// every run is preceded by a warm-up run of the same URLs.
//
// The trees are generated once into the temporary folder and kept for
// later runs (guidepub-corpus-*); see docs/serving.md.
func BenchmarkCorpus(b *testing.B) {
	for _, tool := range []string{"wrk", "taskset"} {
		if _, err := exec.LookPath(tool); err != nil {
			b.Skipf("%s not installed (apt-get install wrk util-linux): corpus benchmark skipped", tool)
		}
	}
	if runtime.NumCPU() < 2 {
		b.Skip("needs two CPUs: one for the server, one for wrk")
	}
	bin := buildGuidepub(b)
	for _, guides := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("guides=%d", guides), func(b *testing.B) {
			root := corpus(b, guides)
			for _, srv := range corpusServers(b, bin) {
				b.Run(srv.name, func(b *testing.B) {
					measureServer(b, srv, root, guides)
				})
			}
		})
	}
}

// corpusServer starts one server for a tree, pinned to CPU 0, and returns
// its base URL and the processes whose memory counts.
type corpusServer struct {
	name  string
	start func(b *testing.B, root string) (url string, pids func() []int)
}

// pinned is the command prefix that runs a server on CPU 0.
var pinned = []string{"taskset", "-c", "0"}

func corpusServers(b *testing.B, bin string) []corpusServer {
	servers := []corpusServer{{"guidepub", func(b *testing.B, root string) (string, func() []int) {
		addr := freeAddr(b)
		cmd := exec.Command(pinned[0], append(pinned[1:], bin, "serve", "--dir", root, "--addr", addr)...)
		startProcess(b, cmd)
		return "http://" + addr, func() []int { return []int{cmd.Process.Pid} }
	}}}
	if _, err := exec.LookPath("nginx"); err == nil || fileExists("/usr/sbin/nginx") {
		servers = append(servers, corpusServer{"nginx", func(b *testing.B, root string) (string, func() []int) {
			url, master := startNginxWith(b, root, 1, pinned)
			return url, func() []int { return append([]int{master.Pid}, childPids(master.Pid)...) }
		}})
	} else {
		b.Log("nginx not installed (apt-get install nginx-light): nginx skipped")
	}
	if _, err := exec.LookPath("caddy"); err == nil {
		servers = append(servers, corpusServer{"caddy", startCaddy})
	} else {
		b.Log("caddy not installed (apt-get install caddy): Caddy skipped")
	}
	return servers
}

// startProcess starts cmd, with its standard error in the benchmark's log
// should it exit early, and kills it when b ends.
func startProcess(b *testing.B, cmd *exec.Cmd) {
	b.Helper()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	b.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
		if b.Failed() {
			b.Logf("%s:\n%s", cmd.Path, stderr.String())
		}
	})
}

// startCaddy runs Debian's Caddy with a file_server that serves the
// precompressed siblings, as its documentation shows.
func startCaddy(b *testing.B, root string) (string, func() []int) {
	dir := b.TempDir()
	addr := freeAddr(b)
	conf := fmt.Sprintf(`{
	admin off
	auto_https off
}
http://%s {
	root * %s
	file_server {
		precompressed br zstd gzip
	}
}
`, addr, root)
	path := filepath.Join(dir, "Caddyfile")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(pinned[0], append(pinned[1:], "caddy", "run", "--config", path, "--adapter", "caddyfile")...)
	cmd.Env = append(os.Environ(), "XDG_DATA_HOME="+dir, "XDG_CONFIG_HOME="+dir, "HOME="+dir)
	startProcess(b, cmd)
	return "http://" + addr, func() []int { return []int{cmd.Process.Pid} }
}

// measureServer starts srv on root and reports its start-up, memory and
// load figures.
func measureServer(b *testing.B, srv corpusServer, root string, guides int) {
	start := time.Now()
	url, pids := srv.start(b, root)
	probe := url + "/" + corpusID(0) + "/data/status"
	for {
		resp, err := http.Get(probe)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Since(start) > time.Minute {
			b.Fatalf("%s: no answer after %v", srv.name, time.Since(start))
		}
		time.Sleep(time.Millisecond)
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/1000, "startup-ms")
	b.ReportMetric(rssMB(b, pids()), "rss-start-MB")

	summaries := make([]string, guides)
	photos := make([]string, guides)
	for i := range guides {
		summaries[i] = "/" + corpusID(i) + "/" + site.SummaryFile
		photos[i] = "/" + site.MediaFile(corpusID(i), fmt.Sprintf("photo-%02d.jpg", i%corpusPhotos))
	}
	etags := collectETags(b, url, summaries)
	for _, run := range []struct {
		name  string
		paths []string
		etags []string
	}{
		{"document", summaries, nil},
		{"304", summaries, etags},
		{"photo", photos, nil},
	} {
		script := wrkScript(b, run.paths, run.etags)
		wrk(b, url, script, 6*time.Second) // warm-up: caches, and the watcher set up
		rps, p99 := wrk(b, url, script, 10*time.Second)
		b.ReportMetric(rps, run.name+"-req/s")
		b.ReportMetric(p99, run.name+"-p99-ms")
	}
	b.ReportMetric(rssMB(b, pids()), "rss-end-MB")
	b.ReportMetric(0, "ns/op")
}

// collectETags returns the ETag url gives for each path with
// Accept-Encoding: br, gzip.
func collectETags(b *testing.B, url string, paths []string) []string {
	client := &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 8}}
	defer client.CloseIdleConnections()
	out := make([]string, len(paths))
	var wg sync.WaitGroup
	var failed error
	var mu sync.Mutex
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < len(paths); i += 8 {
				req, _ := http.NewRequest("GET", url+paths[i], nil)
				req.Header.Set("Accept-Encoding", "br, gzip")
				resp, err := client.Do(req)
				if err == nil {
					resp.Body.Close()
					out[i] = resp.Header.Get("ETag")
					if resp.StatusCode != 200 || out[i] == "" {
						err = fmt.Errorf("%s: status %d, ETag %q", paths[i], resp.StatusCode, out[i])
					}
				}
				if err != nil {
					mu.Lock()
					failed = err
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	if failed != nil {
		b.Fatal(failed)
	}
	return out
}

// wrkScript writes a wrk Lua script that sends GETs for paths in turn,
// with Accept-Encoding: br, gzip and, when etags is not nil, the matching
// If-None-Match.
func wrkScript(b *testing.B, paths, etags []string) string {
	var s bytes.Buffer
	s.WriteString("local paths = {\n")
	for _, p := range paths {
		fmt.Fprintf(&s, "%q,\n", p)
	}
	s.WriteString("}\nlocal etags = {\n")
	for _, e := range etags {
		fmt.Fprintf(&s, "%q,\n", e)
	}
	s.WriteString(`}
local i = 0
request = function()
  i = i % #paths + 1
  local h = { ["Accept-Encoding"] = "br, gzip" }
  if #etags > 0 then h["If-None-Match"] = etags[i] end
  return wrk.format("GET", paths[i], h)
end
`)
	path := filepath.Join(b.TempDir(), "urls.lua")
	if err := os.WriteFile(path, s.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	return path
}

var (
	wrkRate = regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`)
	wrkP99  = regexp.MustCompile(`\s99%\s+([0-9.]+)(us|ms|s)`)
	wrkErrs = regexp.MustCompile(`Non-2xx or 3xx responses: (\d+)|Socket errors: .*`)
)

// wrk runs wrk on CPU 1 against url with script for d, with one thread
// and 16 connections, and returns requests per second and the 99th
// percentile latency in milliseconds.
func wrk(b *testing.B, url, script string, d time.Duration) (rps, p99 float64) {
	out, err := exec.Command("taskset", "-c", "1", "wrk", "-t1", "-c16", "-d"+d.String(), "--latency", "-s", script, url).CombinedOutput()
	if err != nil {
		b.Fatalf("wrk: %v\n%s", err, out)
	}
	if m := wrkErrs.FindSubmatch(out); m != nil {
		b.Fatalf("wrk saw errors:\n%s", out)
	}
	r, l := wrkRate.FindSubmatch(out), wrkP99.FindSubmatch(out)
	if r == nil || l == nil {
		b.Fatalf("wrk output not understood:\n%s", out)
	}
	rps, _ = strconv.ParseFloat(string(r[1]), 64)
	p99, _ = strconv.ParseFloat(string(l[1]), 64)
	switch string(l[2]) {
	case "us":
		p99 /= 1000
	case "s":
		p99 *= 1000
	}
	return rps, p99
}

// rssMB returns the summed resident memory of pids, in MB.
func rssMB(b *testing.B, pids []int) float64 {
	var mb float64
	for _, pid := range pids {
		rss, err := procstat.RSS(pid)
		if err != nil {
			b.Fatal(err)
		}
		mb += rss
	}
	return mb
}

// childPids returns the processes whose parent is pid (nginx's workers).
func childPids(pid int) []int {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(string(data)) {
		if n, err := strconv.Atoi(f); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// buildGuidepub builds the guidepub command into a temporary folder.
func buildGuidepub(b *testing.B) string {
	bin := filepath.Join(b.TempDir(), "guidepub")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/guidepub/guidepub/cmd/guidepub").CombinedOutput()
	if err != nil {
		b.Fatalf("build guidepub: %v\n%s", err, out)
	}
	return bin
}

// corpusPhotos is the number of photos per generated guide.
const corpusPhotos = 20

// corpusID is the view id of generated guide i.
func corpusID(i int) string { return fmt.Sprintf("g%05d", i) }

// corpus returns a generated tree of n guides, each like an exported
// guide of about 40 rooms: status, summary, autofill and the three view
// pages, each with .br, .zst and .gz siblings, and 20 photos of 200 KB
// (hard links to 20 shared files, so the tree costs little disk). The tree
// is made once, in the temporary folder, and reused by later runs.
func corpus(b *testing.B, n int) string {
	root := filepath.Join(os.TempDir(), fmt.Sprintf("guidepub-corpus-v1-%d", n))
	if fileExists(filepath.Join(root, ".complete")) {
		return root
	}
	start := time.Now()
	tmp := root + ".partial"
	os.RemoveAll(tmp)
	os.RemoveAll(root)
	shared := filepath.Join(tmp, ".photos")
	if err := os.MkdirAll(shared, 0o755); err != nil {
		b.Fatal(err)
	}
	for p := range corpusPhotos {
		data := mediaBytes(200<<10 + p)
		if err := os.WriteFile(filepath.Join(shared, strconv.Itoa(p)), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	jobs := make(chan int)
	var wg sync.WaitGroup
	var failed error
	var mu sync.Mutex
	for range runtime.NumCPU() {
		wg.Go(func() {
			for i := range jobs {
				if err := writeCorpusGuide(tmp, shared, i); err != nil {
					mu.Lock()
					failed = err
					mu.Unlock()
				}
			}
		})
	}
	for i := range n {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	if failed != nil {
		b.Fatal(failed)
	}
	if err := os.WriteFile(filepath.Join(tmp, ".complete"), nil, 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(tmp, root); err != nil {
		b.Fatal(err)
	}
	b.Logf("generated %d guides in %s in %v", n, root, time.Since(start))
	return root
}

// writeCorpusGuide writes generated guide i under root.
func writeCorpusGuide(root, shared string, i int) error {
	id := corpusID(i)
	docs := map[string][]byte{
		site.ViewFile(id, site.StatusFile):                 []byte(`{"status":"ready"}`),
		site.ViewFile(id, site.SummaryFile):                summaryJSON(9000 + i%4000),
		site.ViewFile(id, site.AutofillFile):               autofillJSON(id, 40),
		id + "/" + site.PageFile:                           pageHTML(id, 40),
		site.UnbrandedDir + "/" + id + "/" + site.PageFile: pageHTML(id, 40),
		site.EmbedDir + "/" + id + "/" + site.PageFile:     pageHTML(id, 40),
	}
	for name, data := range docs {
		if err := writeCorpusFile(root, name, data); err != nil {
			return err
		}
		for _, enc := range site.Encodings {
			z, err := compressLevel(enc, data, true)
			if err != nil {
				return err
			}
			if err := writeCorpusFile(root, name+enc.Ext, z); err != nil {
				return err
			}
		}
	}
	for p := range corpusPhotos {
		dst := filepath.Join(root, filepath.FromSlash(site.MediaFile(id, fmt.Sprintf("photo-%02d.jpg", p))))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.Link(filepath.Join(shared, strconv.Itoa(p)), dst); err != nil {
			return err
		}
	}
	return nil
}

func writeCorpusFile(root, name string, data []byte) error {
	p := filepath.Join(root, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, data, 0o644)
}

// autofillJSON returns an autofill document of about the size the
// exporter writes for a guide of rooms rooms.
func autofillJSON(id string, rooms int) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, `{"@reso.context":"urn:reso:metadata:1.7:resource:property","value":[{"ListingKey":%q,"Rooms":[`, id)
	for r := range rooms {
		if r > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"RoomType":"Bedroom","RoomLevel":"Main","RoomDimensions":"%d x %d","RoomLength":%d.5,"RoomWidth":%d.25,"RoomArea":%d.1,"RoomAreaUnits":"Square Feet"}`, 10+r, 12+r, 10+r, 12+r, 120+r*7)
	}
	b.WriteString(`]}]}`)
	return []byte(b.String())
}

// pageHTML returns a view page of about the size the exporter writes.
func pageHTML(id string, rooms int) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "<!doctype html><html lang=en><title>%s</title><main><h1>%s</h1><table>", id, id)
	for r := range rooms {
		fmt.Fprintf(&b, "<tr><th>Room %d<td>%d.5 x %d.25 ft<td>%d sq ft</tr>", r, 10+r, 12+r, 120+r*7)
	}
	b.WriteString("</table></main></html>")
	return []byte(b.String())
}

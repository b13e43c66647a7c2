package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/guidepub/guidepub/exporter/records"
	"github.com/guidepub/guidepub/fixtures"
	"github.com/guidepub/guidepub/site"
	"github.com/guidepub/guidepub/site/viewpage"
)

// devTestSecret signs the deliveries of the uploaded bundle.
const devTestSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwMfKQ9r8G"

// buildGuidepub builds the guidepub binary into a temporary folder.
func buildGuidepub(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "guidepub")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// eventually polls cond every few milliseconds until it holds, failing the
// test with what after the deadline.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// devProcess is a running "guidepub dev".
type devProcess struct {
	base   string // http://127.0.0.1:port
	stdout *fixtures.SyncBuffer
	stderr *fixtures.SyncBuffer
}

// startDev starts "guidepub dev" with args on a free loopback port and
// waits until it is ready. The process is interrupted when the test ends.
func startDev(t *testing.T, bin string, args ...string) *devProcess {
	t.Helper()
	return startDevWith(t, bin, false, args...)
}

// startDevWith is startDev; with combined, standard output and error are
// one pipe, as on a terminal, and both buffers get every line in the order
// written.
func startDevWith(t *testing.T, bin string, combined bool, args ...string) *devProcess {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"dev", "--addr", "127.0.0.1:0"}, args...)...)
	p := &devProcess{stdout: &fixtures.SyncBuffer{}, stderr: &fixtures.SyncBuffer{}}
	var pipe io.Reader
	if combined {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stdout, cmd.Stderr, pipe = w, w, r
		defer w.Close() // the child has its copy
		t.Cleanup(func() { r.Close() })
	} else {
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr, pipe = p.stderr, out
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			p.stdout.Write([]byte(sc.Text() + "\n"))
			if combined {
				p.stderr.Write([]byte(sc.Text() + "\n"))
			}
			select {
			case lines <- sc.Text():
			default:
			}
		}
		close(lines)
		exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("guidepub dev exited with %v\nstderr:\n%s", err, p.stderr)
			}
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Errorf("guidepub dev did not stop on interrupt")
		}
		if t.Failed() {
			t.Logf("guidepub dev stdout:\n%s\nstderr:\n%s", p.stdout, p.stderr)
		}
	})
	timeout := time.After(60 * time.Second)
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("guidepub dev ended early\nstderr:\n%s", p.stderr)
			}
			if u, found := strings.CutPrefix(line, "guidepub dev: listening on "); found {
				p.base = u
			}
			if line == "guidepub dev: ready" {
				if p.base == "" {
					t.Fatal("ready before printing its address")
				}
				return p
			}
		case <-timeout:
			t.Fatalf("guidepub dev not ready after 60s\nstdout:\n%s\nstderr:\n%s", p.stdout, p.stderr)
		}
	}
}

// get fetches base+path with Accept-Encoding: identity and returns the
// status and body.
func get(t *testing.T, url string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept-Encoding", "identity")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, body
}

// hookCall is one POST the receiver got.
type hookCall struct {
	header http.Header
	body   []byte
}

// receiver is a webhook receiver recording every delivery.
type receiver struct {
	mu  sync.Mutex
	got []hookCall
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	rc.got = append(rc.got, hookCall{r.Header.Clone(), body})
	rc.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (rc *receiver) deliveries() []hookCall {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]hookCall(nil), rc.got...)
}

// sampleBundle returns the files of the sample bundle folder, with
// guide.json's webhooks replaced by one to hookURL, signed.
func sampleBundle(t *testing.T, folder, hookURL string) map[string][]byte {
	t.Helper()
	files, err := fixtures.BundleFiles(folder)
	if err != nil {
		t.Fatal(err)
	}
	var g map[string]any
	if err := json.Unmarshal(files["guide.json"], &g); err != nil {
		t.Fatal(err)
	}
	g["webhooks"] = []any{map[string]any{"url": hookURL, "secret": devTestSecret}}
	files["guide.json"], err = json.MarshalIndent(g, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// upload writes a bundle into src/folder as an uploader does: every media
// file, then guide.json to a temporary name, renamed into place last.
func upload(t *testing.T, src, folder string, files map[string][]byte) {
	t.Helper()
	dir := filepath.Join(src, folder)
	for rel, data := range files {
		if rel == "guide.json" {
			continue
		}
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeRenamed(t, filepath.Join(dir, "guide.json"), files["guide.json"])
}

// writeRenamed writes data to a temporary file beside p and renames it to p.
func writeRenamed(t *testing.T, p string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, p); err != nil {
		t.Fatal(err)
	}
}

// referenceExport runs "guidepub export" of the bundle files with dev's URL
// settings and returns the public tree.
func referenceExport(t *testing.T, bin, base, folder string, files map[string][]byte) string {
	t.Helper()
	root := t.TempDir()
	src := filepath.Join(root, "src")
	for rel, data := range files {
		p := filepath.Join(src, folder, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(root, "out")
	cmd := exec.Command(bin, "export", "--src", src, "--out", out, "--private", filepath.Join(root, "private"),
		"--view-url", base, "--unbranded-url", base+"/u", "--embed-url", base+"/embed", "--base-url", base)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("guidepub export: %v\n%s", err, b)
	}
	return out
}

// documentsOf lists the guides' documents (not their compressed siblings,
// not media, not the stylesheet, which is no guide's) of a public tree.
func documentsOf(t *testing.T, out string) []string {
	t.Helper()
	var docs []string
	err := filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(out, p)
		rel = filepath.ToSlash(rel)
		if f, _, ok := site.PublicFileOf(rel); ok && f.Group == site.GroupShared {
			return nil // the stylesheet: no guide's, it stays when guides go
		}
		if site.IsDocument(rel) {
			docs = append(docs, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return docs
}

// servedAs reports whether every document of the reference tree out is
// served by dev with the same bytes.
func servedAs(t *testing.T, base, out string) error {
	t.Helper()
	docs := documentsOf(t, out)
	if len(docs) == 0 {
		t.Fatal("reference export wrote no documents")
	}
	for _, doc := range docs {
		want, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(doc)))
		if err != nil {
			t.Fatal(err)
		}
		code, got := get(t, base+"/"+doc)
		if code != http.StatusOK || !bytes.Equal(got, want) {
			return fmt.Errorf("%s: status %d, %d bytes, want 200 and the %d bytes of guidepub export", doc, code, len(got), len(want))
		}
	}
	return nil
}

// verifiedEvent checks a delivery's Standard Webhooks signature and returns
// its event.
func verifiedEvent(t *testing.T, d hookCall) site.ReadyEvent {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(devTestSecret)
	if err != nil {
		t.Fatal(err)
	}
	if err := wh.Verify(d.body, d.header); err != nil {
		t.Fatalf("delivery signature: %v (headers %v)", err, d.header)
	}
	var ev site.ReadyEvent
	if err := json.Unmarshal(d.body, &ev); err != nil {
		t.Fatalf("delivery body: %v", err)
	}
	return ev
}

// TestDev runs the built binary as a user would: "guidepub dev" on a source
// folder an uploader writes into, and on the sample bundles.
func TestDev(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildGuidepub(t)
	t.Run("uploads", func(t *testing.T) { testDevUploads(t, bin) })
	t.Run("samples", func(t *testing.T) { testDevSamples(t, bin) })
	t.Run("polling", func(t *testing.T) { testDevPolling(t, bin) })
	t.Run("second run", func(t *testing.T) { testDevSecondRun(t, bin) })
	t.Run("stopped while exporting", func(t *testing.T) { testDevStopWhileExporting(t, bin) })
	t.Run("failed hide", func(t *testing.T) { testDevFailedHide(t, bin) })
}

// testDevFailedHide hides the default view's address in an upload whose
// export cannot write the view's autofill (a folder stands at its name).
// The export fails, and what dev serves of the view (its pages in both
// languages, the alias's page and autofill, each served and so cached
// before) must not show the address any more: the export takes back the
// files it did not reach, and dev's static server, which trusts its cache
// until an export says what changed, is told what the failed one changed. Once the file can be written, the export is
// tried again (10 s later) and the whole view is served again.
func testDevFailedHide(t *testing.T, bin string) {
	const folder, view, postalCode = "301-king-st-e", "vKT301A", "N2G 2L3"
	root := t.TempDir()
	src, work := filepath.Join(root, "src"), filepath.Join(root, "work")
	if err := os.Mkdir(src, 0o755); err != nil {
		t.Fatal(err)
	}
	dev := startDev(t, bin, "--src", src, "--work-dir", work, "--debounce", "50ms")
	files, err := fixtures.BundleFiles(folder)
	if err != nil {
		t.Fatal(err)
	}
	upload(t, src, folder, files)
	served := func(p string) (int, []byte) { return get(t, dev.base+"/"+p) }
	// Once the upload's quick siblings are finished (its record lists none)
	// no export of it is left to reload dev's static server: what is served
	// next stays in its cache until an export says what changed.
	record := filepath.Join(work, "private", records.RecordsDir(0, 1), "gKT301KINGE1.json")
	eventually(t, "the upload's final bytes", func() bool {
		data, err := os.ReadFile(record)
		head, _, _ := bytes.Cut(data, []byte("\n"))
		return err == nil && !bytes.Contains(head, []byte(`"quick"`))
	})
	docs := []string{view + "/index.html", view + "/fr/index.html", "u/" + view + "/index.html", folder + "/index.html", folder + "/reso/autofill"}
	for _, p := range docs { // in dev's cache once served
		if code, body := served(p); code != http.StatusOK || !bytes.Contains(body, []byte(postalCode)) {
			t.Fatalf("%s: %d, without the address before the hide: the test shows nothing", p, code)
		}
	}

	autofill := filepath.Join(work, "out", view, "reso", "autofill")
	if err := os.Remove(autofill); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(autofill, "in-the-way"), 0o755); err != nil {
		t.Fatal(err)
	}
	var g map[string]any
	if err := json.Unmarshal(files["guide.json"], &g); err != nil {
		t.Fatal(err)
	}
	g["views"].([]any)[0].(map[string]any)["hidden"] = []any{"address"}
	data, err := json.Marshal(g)
	if err != nil {
		t.Fatal(err)
	}
	writeRenamed(t, filepath.Join(src, folder, "guide.json"), data)
	eventually(t, "the export failing", func() bool { return strings.Contains(dev.stderr.String(), "bundle not exported") })
	for _, p := range docs {
		if code, body := served(p); code == http.StatusOK && bytes.Contains(body, []byte(postalCode)) {
			t.Errorf("%s still shows the hidden address after the failed export", p)
		}
	}

	// Once the file can be written, the export is tried again without a
	// new upload, and the view is whole again, the address hidden. (The
	// watcher is left to settle first: a change seen during the failed
	// export is exported again a quiet period later, and fails the same.)
	time.Sleep(2 * time.Second)
	if err := os.RemoveAll(autofill); err != nil {
		t.Fatal(err)
	}
	for _, p := range append(docs, view+"/reso/autofill") {
		eventually(t, p+" served again without the address", func() bool {
			code, body := served(p)
			return code == http.StatusOK && !bytes.Contains(body, []byte(postalCode))
		})
	}
}

// testDevStopWhileExporting interrupts "guidepub dev" while it exports
// an upload: as soon as the export has put the upload's first file in
// place. The watcher finishes the export (an export is not cut short), so
// its ready event must be queued before the store closes: until
// 2026-11-27 the sidecar's shutdown closed the store beside it ("ready
// event not queued ... database is closed"), leaving the event to the
// next start.
func testDevStopWhileExporting(t *testing.T, bin string) {
	const folder, view, guideID = "301-king-st-e", "vKT301A", "gKT301KINGE1"
	root := t.TempDir()
	src, work := filepath.Join(root, "src"), filepath.Join(root, "work")
	if err := os.Mkdir(src, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "dev", "--addr", "127.0.0.1:0", "--src", src, "--work-dir", work)
	out := &fixtures.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill() })
	eventually(t, "guidepub dev ready", func() bool { return strings.Contains(out.String(), "guidepub dev: ready") })
	files, err := fixtures.BundleFiles(folder)
	if err != nil {
		t.Fatal(err)
	}
	upload(t, src, folder, files)
	first := filepath.Join(work, "out", view) // made with the export's first file of the view
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(time.Millisecond) {
		if _, err := os.Stat(first); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the upload's export wrote nothing:\n%s", out)
		}
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("guidepub dev exited with %v:\n%s", err, out)
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("guidepub dev did not stop on interrupt:\n%s", out)
	}
	log := out.String()
	_, after, _ := strings.Cut(log, "shutting down")
	if !strings.Contains(after, "guide exported folder="+folder) {
		t.Fatalf("the upload's export did not finish after the interrupt: the test shows nothing\n%s", log)
	}
	if strings.Contains(log, "ready event not queued") || strings.Contains(log, " ERR ") {
		t.Errorf("the export finished after the interrupt could not queue its event:\n%s", log)
	}
	queued := false
	for line := range strings.Lines(log) {
		queued = queued || strings.Contains(line, "delivery queued") && strings.Contains(line, "guide="+guideID+" ")
	}
	if !queued {
		t.Errorf("the ready event of %s was not queued:\n%s", guideID, log)
	}
}

// testDevPolling checks --poll: an upload is found by scanning, without
// file system events.
func testDevPolling(t *testing.T, bin string) {
	root := t.TempDir()
	src := filepath.Join(root, "src")
	if err := os.Mkdir(src, 0o755); err != nil {
		t.Fatal(err)
	}
	dev := startDev(t, bin, "--src", src, "--work-dir", filepath.Join(root, "work"), "--poll", "50ms", "--log-requests")
	eventually(t, "the watcher to say it polls", func() bool { return strings.Contains(dev.stderr.String(), `mode=poll`) })
	// --log-requests: a line for each request, the static server's and
	// the sidecar's.
	get(t, dev.base+"/vSTDENIS/data/status")
	get(t, dev.base+"/healthz")
	eventually(t, "the requests' log lines", func() bool {
		return strings.Contains(dev.stderr.String(), "INF request method=GET path=/vSTDENIS/data/status status=404") &&
			strings.Contains(dev.stderr.String(), "INF request method=GET path=/healthz route=\"GET /healthz\" status=200")
	})
	const folder = "rue-saint-denis"
	files := sampleBundle(t, folder, "https://hooks.example.com/ready")
	upload(t, src, folder, files)
	ref := referenceExport(t, bin, dev.base, folder, files)
	eventually(t, "the upload to be served", func() bool { return servedAs(t, dev.base, ref) == nil })
	if err := os.RemoveAll(filepath.Join(src, folder)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the bundle to be unpublished", func() bool {
		code, _ := get(t, dev.base+"/vSTDENIS/data/status")
		return code == http.StatusNotFound
	})
}

func testDevUploads(t *testing.T, bin string) {
	rc := &receiver{}
	hook := httptest.NewServer(rc)
	defer hook.Close()

	root := t.TempDir()
	src := filepath.Join(root, "src")
	if err := os.Mkdir(src, 0o755); err != nil {
		t.Fatal(err)
	}
	dev := startDev(t, bin, "--src", src, "--work-dir", filepath.Join(root, "work"), "--debounce", "50ms")
	const folder, guideID, alias = "301-king-st-e", "gKT301KINGE1", "301-king-st-e"
	status := dev.base + "/" + alias + "/" + site.StatusFile
	if code, _ := get(t, status); code != http.StatusNotFound {
		t.Fatalf("before the upload: %s answers %d, want 404", status, code)
	}

	// Upload: served with the bytes of "guidepub export", one signed event.
	files := sampleBundle(t, folder, hook.URL)
	upload(t, src, folder, files)
	ref := referenceExport(t, bin, dev.base, folder, files)
	eventually(t, "the upload to be served", func() bool { return servedAs(t, dev.base, ref) == nil })
	eventually(t, "the ready event", func() bool { return len(rc.deliveries()) >= 1 })
	first := rc.deliveries()[0]
	ev := verifiedEvent(t, first)
	if ev.Type != site.EventReady || ev.GuideID != guideID || ev.AuthToken == "" {
		t.Errorf("event = type %q guide %q authtoken %q, want ready %s with a token", ev.Type, ev.GuideID, ev.AuthToken, guideID)
	}

	// Change the bundle: new documents, a second event.
	var g map[string]any
	if err := json.Unmarshal(files["guide.json"], &g); err != nil {
		t.Fatal(err)
	}
	g["workOrderId"] = "WO5678"
	g["property"].(map[string]any)["streetName"] = "King Street East"
	changed := map[string][]byte{}
	for k, v := range files {
		changed[k] = v
	}
	changed["guide.json"], _ = json.MarshalIndent(g, "", "  ")
	writeRenamed(t, filepath.Join(src, folder, "guide.json"), changed["guide.json"])
	ref2 := referenceExport(t, bin, dev.base, folder, changed)
	eventually(t, "the change to be served", func() bool { return servedAs(t, dev.base, ref2) == nil })
	eventually(t, "a second ready event", func() bool { return len(rc.deliveries()) >= 2 })
	second := rc.deliveries()[1]
	ev2 := verifiedEvent(t, second)
	if ev2.WorkOrderID != "WO5678" || ev2.Property.StreetName != "King Street East" {
		t.Errorf("second event has work order %q, street %q: not the changed guide", ev2.WorkOrderID, ev2.Property.StreetName)
	}
	if first.header.Get("webhook-id") == second.header.Get("webhook-id") {
		t.Error("both events have the same webhook-id")
	}

	// A broken guide.json: reported, the published version stays, no event.
	writeRenamed(t, filepath.Join(src, folder, "guide.json"), []byte(`{"guideId": "gKT301KINGE1", "views": [`))
	eventually(t, "the broken upload to be reported", func() bool {
		return strings.Contains(dev.stderr.String(), "bundle not exported")
	})
	if err := servedAs(t, dev.base, ref2); err != nil {
		t.Errorf("after a broken upload: %v", err)
	}
	// Identical content again: nothing new is published or sent.
	writeRenamed(t, filepath.Join(src, folder, "guide.json"), changed["guide.json"])
	eventually(t, "the repaired upload to be accepted", func() bool {
		return strings.Contains(dev.stderr.String(), "bundle accepted again")
	})
	if err := servedAs(t, dev.base, ref2); err != nil {
		t.Errorf("after the repair: %v", err)
	}

	// Delete the bundle: its paths answer 404.
	if err := os.RemoveAll(filepath.Join(src, folder)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the bundle to be unpublished", func() bool {
		for _, doc := range documentsOf(t, ref2) {
			if code, _ := get(t, dev.base+"/"+doc); code != http.StatusNotFound {
				return false
			}
		}
		return true
	})
	if code, _ := get(t, dev.base+"/"+viewpage.StylesheetPath); code != http.StatusOK {
		t.Errorf("the stylesheet answers %d once no guide is left, want 200 (it is never removed)", code)
	}
	if n := len(rc.deliveries()); n != 2 {
		t.Errorf("receiver got %d deliveries, want 2 (broken, identical and deleted uploads send nothing)", n)
	}
}

func testDevSamples(t *testing.T, bin string) {
	work := filepath.Join(t.TempDir(), "work")
	dev := startDev(t, bin, "--work-dir", work)

	// The samples are copied once, served, and their events delivered to
	// dev's own receiver with a valid signature.
	for _, p := range []string{"/301-king-st-e/data/status", "/301-king-st-e/reso/autofill", "/vLDN14/data/status", "/healthz"} {
		if code, body := get(t, dev.base+p); code != http.StatusOK {
			t.Errorf("GET %s: %d %s", p, code, body)
		}
	}
	// Every page of every sample view opens, on the one listener (the
	// links the documents hand out).
	views, _ := filepath.Glob(filepath.Join(work, "out", "*", site.PageFile))
	if len(views) < 5 {
		t.Fatalf("dev published %d branded pages, want one per sample view", len(views))
	}
	for _, v := range views {
		id := filepath.Base(filepath.Dir(v))
		for _, p := range []string{"/" + id, "/u/" + id, "/embed/" + id} {
			if code, body := get(t, dev.base+p); code != http.StatusOK || !bytes.HasPrefix(body, []byte("<!DOCTYPE html>")) {
				t.Errorf("GET %s: %d %.60s, want the page", p, code, body)
			}
		}
	}
	// dev prints each view's three page URLs.
	if want := "pages of vKT301A: " + dev.base + "/vKT301A  " + dev.base + "/u/vKT301A  " + dev.base + "/embed/vKT301A"; !strings.Contains(dev.stdout.String(), want) {
		t.Errorf("dev did not print %q:\n%s", want, dev.stdout)
	}
	// An unclean path is a 404, never a redirect that carries the query.
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, p := range []string{"/private/g/../h/x.zip?accessToken=secret", "/api//v1/guides?x=1", "/./301-king-st-e?x=1"} {
		resp, err := noRedirect.Get(dev.base + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound || resp.Header.Get("Location") != "" {
			t.Errorf("GET %s: %d, Location %q; want 404 and no redirect", p, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
	eventually(t, "the samples' events at dev's receiver", func() bool {
		return strings.Count(dev.stderr.String(), `signature=valid`) >= 2
	})
	if strings.Contains(dev.stderr.String(), `signature=invalid`) {
		t.Error("a delivery with an invalid signature")
	}

	// The printed Portal API command works as printed.
	var curl string
	for _, line := range strings.Split(dev.stdout.String(), "\n") {
		if strings.Contains(line, "/api/v1/integrations/test") {
			curl = strings.TrimSpace(line)
			break
		}
	}
	appID := between(curl, "X-Svc-App-Id: ", "'")
	token := between(curl, "X-Svc-App-Token: ", "'")
	if appID == "" || token == "" {
		t.Fatalf("no Portal API command printed:\n%s", dev.stdout)
	}
	req, _ := http.NewRequest("POST", dev.base+"/api/v1/integrations/test", nil)
	req.Header.Set("X-Svc-App-Id", appID)
	req.Header.Set("X-Svc-App-Token", token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), appID) {
		t.Errorf("integration test: %d %s", resp.StatusCode, body)
	}

	// The printed scopes are those of the stored token.
	code, out, errs := runCLI(t, "token", "list", "--store", filepath.Join(work, devStoreFile), "--json")
	var toks []tokenInfo
	if code != 0 || json.Unmarshal([]byte(out), &toks) != nil {
		t.Fatalf("token list: exit %d\n%s%s", code, out, errs)
	}
	for _, tok := range toks {
		if tok.AppID == appID && !strings.Contains(dev.stdout.String(), "a token with scopes "+strings.Join(tok.Scopes, ",")+" for each owner") {
			t.Errorf("dev printed other scopes than the token's %v:\n%s", tok.Scopes, dev.stdout)
		}
	}

	testDevManageURL(t, dev, appID, token)
	testDevUploadExample(t, dev, work)
}

// testDevManageURL: the ready event's manageUrl answers, under dev, with a
// page about the guide; a guide that is not published is a 404.
func testDevManageURL(t *testing.T, dev *devProcess, appID, token string) {
	req, _ := http.NewRequest("GET", dev.base+"/api/v1/guides/gKT301KINGE1/events/ready/object", nil)
	req.Header.Set("X-Svc-App-Id", appID)
	req.Header.Set("X-Svc-App-Token", token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var ev site.ReadyEvent
	err = json.NewDecoder(resp.Body).Decode(&ev)
	resp.Body.Close()
	if err != nil || ev.URLs.ManageURL != dev.base+"/guides/gKT301KINGE1" {
		t.Fatalf("ready object: %v, manageUrl %q", err, ev.URLs.ManageURL)
	}
	code, page := get(t, ev.URLs.ManageURL)
	for _, want := range []string{"<!DOCTYPE html>", "manageUrl", "gKT301KINGE1", "user-1001", `href="/vKT301A"`, `href="/301-king-st-e"`} {
		if code != http.StatusOK || !strings.Contains(string(page), want) {
			t.Errorf("GET %s: %d, no %q:\n%s", ev.URLs.ManageURL, code, want, page)
		}
	}
	// A view's autofill is linked when it has one.
	code, page = get(t, dev.base+"/guides/gUS123MAPLE")
	if code != http.StatusOK || !strings.Contains(string(page), `href="/vMAPLE-main/reso/autofill"`) ||
		strings.Contains(string(page), `href="/vMAPLE-noauto/reso/autofill"`) {
		t.Errorf("GET /guides/gUS123MAPLE: %d, the autofill links are not the views':\n%s", code, page)
	}
	if code, _ := get(t, dev.base+"/guides/gNOSUCHGUIDE"); code != http.StatusNotFound {
		t.Errorf("the manage page of a guide not published: %d, want 404", code)
	}
}

// printedCurl returns the banner's curl command whose line contains
// substr, run as printed: its status and body.
func printedCurl(t *testing.T, out, substr string) (int, string) {
	t.Helper()
	var line string
	for _, l := range strings.Split(out, "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "curl") && strings.Contains(l, substr) {
			line = l
			break
		}
	}
	if line == "" {
		t.Fatalf("no curl with %q printed:\n%s", substr, out)
	}
	if _, err := exec.LookPath("curl"); err != nil {
		fixtures.Missing(t, "curl", "apt-get install curl")
	}
	b, err := exec.Command("bash", "-c", line+` -w '\n%{http_code}'`).Output()
	if err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	i := bytes.LastIndexByte(b, '\n')
	code, err := strconv.Atoi(string(b[i+1:]))
	if err != nil {
		t.Fatalf("%s printed %q", line, b)
	}
	return code, string(b[:max(i, 0)])
}

// testDevUploadExample follows the banner's upload step: the example's
// deliveries answer 404 before the upload, as the banner says, and list
// its delivery after; uploaded again unchanged, it is served again, no
// webhook goes out, and the log says why.
func testDevUploadExample(t *testing.T, dev *devProcess, work string) {
	out := dev.stdout.String()
	example := filepath.Join(work, devExamplesDir, devExample)
	if !strings.Contains(out, "cp -r "+example+" ") {
		t.Errorf("the example's upload is not printed:\n%s", out)
	}
	const deliveries = "/api/v1/guides/gMTL4321DENIS/events/deliveries"
	if !strings.Contains(between(out, "After the upload", "The second command"), deliveries) {
		t.Errorf("the example's deliveries are not printed under its upload:\n%s", out)
	}
	if code, body := printedCurl(t, out, deliveries); code != http.StatusNotFound {
		t.Errorf("before the upload, the example's deliveries answer %d %s; the banner says 404", code, body)
	}
	copyExample := func() {
		if err := os.CopyFS(filepath.Join(work, devSrcDir, devExample), os.DirFS(example)); err != nil {
			t.Fatal(err)
		}
	}
	served := func() bool { code, _ := get(t, dev.base+"/vSTDENIS/data/status"); return code == http.StatusOK }
	copyExample()
	eventually(t, "the copied example to be served", served)
	var got struct{ Deliveries []json.RawMessage }
	eventually(t, "the example's delivery", func() bool {
		code, body := printedCurl(t, out, deliveries)
		return code == http.StatusOK && json.Unmarshal([]byte(body), &got) == nil && len(got.Deliveries) == 1
	})
	eventually(t, "the example's webhook", func() bool {
		return strings.Contains(dev.stderr.String(), "guide=gMTL4321DENIS signature=valid")
	})

	if err := os.RemoveAll(filepath.Join(work, devSrcDir, devExample)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the example to be unpublished", func() bool { return !served() })
	copyExample()
	eventually(t, "the example to be served again", served)
	eventually(t, "the log to say why no event went out", func() bool {
		return strings.Contains(dev.stderr.String(), "ready event not sent: unchanged revision, not sent again guide=gMTL4321DENIS")
	})
	if n := strings.Count(dev.stderr.String(), "guide=gMTL4321DENIS signature=valid"); n != 1 {
		t.Errorf("the example's webhook received %d times, want once per revision", n)
	}
}

// between returns the text of s after the first start and before the next
// end, or "".
func between(s, start, end string) string {
	_, rest, ok := strings.Cut(s, start)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, end)
	return v
}

package deploy

import (
	"compress/gzip"
	"context"
	"debug/buildinfo"
	"debug/elf"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/guidepub/guidepub/sidecar/store/storetest"
	"github.com/guidepub/guidepub/site"
)

// TestBinaryIsStatic checks what the image relies on: the binary `make
// build` makes runs on an empty base (no ELF interpreter, no shared
// libraries) and is built with CGO_ENABLED=0 and -trimpath.
func TestBinaryIsStatic(t *testing.T) {
	bin := binary(t)
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("the binary names an ELF interpreter: it is not static")
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("the binary needs shared libraries %v", libs)
	}
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	if settings["CGO_ENABLED"] != "0" || settings["-trimpath"] != "true" {
		t.Errorf("build settings %v: want CGO_ENABLED=0 and -trimpath", settings)
	}
}

// imageSizes returns the image's size as the engine reports it
// (uncompressed) and the gzip-compressed size of its layers, what a
// registry stores and a host downloads.
func imageSizes(t *testing.T, eng, img string) (raw, compressed int64) {
	t.Helper()
	sz := strings.TrimSpace(ctr(t, eng, "image", "inspect", "--format", "{{.Size}}", img))
	raw, err := strconv.ParseInt(sz, 10, 64)
	if err != nil {
		t.Fatalf("image size %q: %v", sz, err)
	}
	cmd := exec.Command(eng, "save", img)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var n countWriter
	zw, _ := gzip.NewWriterLevel(&n, gzip.DefaultCompression)
	if _, err := io.Copy(zw, out); err != nil {
		t.Fatal(err)
	}
	zw.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%s save: %v", eng, err)
	}
	return raw, int64(n)
}

type countWriter int64

func (c *countWriter) Write(p []byte) (int, error) { *c += countWriter(len(p)); return len(p), nil }

func TestImageContents(t *testing.T) {
	eng := engine(t)
	img := image(t, eng)
	raw, compressed := imageSizes(t, eng, img)
	t.Logf("image %s: %.1f MB as stored by %s, %.1f MB gzip-compressed (what a registry stores and a host pulls)",
		img, float64(raw)/1e6, eng, float64(compressed)/1e6)
	if compressed > 26e6 {
		t.Errorf("compressed image is %.1f MB, goal under 26 MB (docs/container.md)", float64(compressed)/1e6)
	}
	var cfg []struct {
		Healthcheck *struct{ Test []string } // podman puts it here, docker in Config
		Config      struct {
			User        string
			Entrypoint  []string
			Cmd         []string
			Env         []string
			Healthcheck *struct{ Test []string }
		}
	}
	if err := json.Unmarshal([]byte(ctr(t, eng, "image", "inspect", img)), &cfg); err != nil || len(cfg) != 1 {
		t.Fatalf("image inspect: %v", err)
	}
	c := cfg[0].Config
	if c.Healthcheck == nil {
		c.Healthcheck = cfg[0].Healthcheck
	}
	if c.User != "65532:65532" {
		t.Errorf("user %q, want 65532:65532 (non-root)", c.User)
	}
	if strings.Join(c.Entrypoint, " ") != "/usr/local/bin/guidepub" || strings.Join(c.Cmd, " ") != "sidecar" {
		t.Errorf("entrypoint %q cmd %q", c.Entrypoint, c.Cmd)
	}
	if c.Healthcheck == nil || strings.Join(c.Healthcheck.Test, " ") != "CMD /usr/local/bin/guidepub healthcheck" {
		t.Errorf("health check %+v, want guidepub healthcheck", c.Healthcheck)
	}
	for _, e := range c.Env {
		k, _, _ := strings.Cut(e, "=")
		if !strings.HasPrefix(k, "GUIDEPUB_") && k != "SSL_CERT_FILE" && k != "PATH" {
			t.Errorf("environment %s: configuration is GUIDEPUB_* only", k)
		}
	}
	// Every command of the image runs (read-only, as the image's user).
	for _, cmd := range []string{"sidecar", "watch", "serve", "export", "publish", "token", "app", "healthcheck"} {
		out := ctr(t, eng, "run", "--rm", "--read-only", "--network", "none", img, cmd, "--help")
		if !strings.Contains(out, "guidepub "+cmd) {
			t.Errorf("%s --help in the image printed %.200q", cmd, out)
		}
	}
}

// logs returns what the container wrote to its standard output and error.
func logs(eng, name string) string {
	out, _ := exec.Command(eng, "logs", name).CombinedOutput()
	return string(out)
}

// freePort returns a loopback port nobody listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// hookReceiver is a webhook endpoint on the host that records deliveries;
// a delay holds each answer, to have a delivery in flight at SIGTERM.
type hookReceiver struct {
	srv   *http.Server
	url   string
	mu    sync.Mutex
	ids   map[string]int
	delay time.Duration
}

func newHookReceiver(t *testing.T) *hookReceiver {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := &hookReceiver{url: "http://" + l.Addr().String() + "/hook", ids: map[string]int{}}
	h.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		h.mu.Lock()
		d := h.delay
		h.mu.Unlock()
		time.Sleep(d)
		h.mu.Lock()
		h.ids[r.Header.Get("webhook-id")]++
		h.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	})}
	go h.srv.Serve(l)
	t.Cleanup(func() { h.srv.Close() })
	return h
}

func (h *hookReceiver) distinct() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.ids)
}

func waitFor(t *testing.T, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", limit, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// writeGuide writes a ready guide's record and event into a private tree,
// as the exporter would, with one webhook.
func writeGuide(t *testing.T, priv, guideID, owner, hook string) {
	t.Helper()
	rec := site.GuideRecord{GuideID: guideID, OwnerID: owner, WorkOrderID: "WO-1", DefaultViewID: guideID + "-v1",
		ViewIDs: []string{guideID + "-v1"}, Revision: "rev-1", Ready: true, Webhooks: []site.Webhook{{URL: hook}}}
	evt := site.ReadyEvent{Type: site.EventReady, GuideID: guideID, DefaultViewID: guideID + "-v1", WorkOrderID: "WO-1",
		URLs: site.URLs{PublicURL: "https://view.example/" + guideID + "-v1"}}
	for p, v := range map[string]any{site.RecordPath(guideID): rec, site.EventPath(guideID): evt} {
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		full := filepath.Join(priv, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func portal(t *testing.T, method, url, appID, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	req.Header.Set("X-Svc-App-Id", appID)
	req.Header.Set("X-Svc-App-Token", token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestSidecarInContainer runs the sidecar in the image as a deployment
// would: read-only root, the image's user, host network, the host's
// PostgreSQL. It checks the health endpoints, creates a token in a second
// container, calls the Portal API, has a dispatch delivered to a receiver
// on the host, then stops the container with SIGTERM while a delivery is in
// flight: it must exit cleanly within its shutdown timeout, and after a
// restart every dispatched event has arrived.
func TestSidecarInContainer(t *testing.T) {
	eng := engine(t)
	img := image(t, eng)
	dsn := storetest.Postgres(t)
	priv := t.TempDir()
	hooks := newHookReceiver(t)
	writeGuide(t, priv, "g-container", "alice", hooks.url)
	// The container's user reads the tree the host wrote.
	if err := os.Chmod(priv, 0o755); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	name := "guidepub-sidecar-" + randomName()
	run := []string{"run", "-d", "--name", name, "--read-only", "--network", "host", "--tmpfs", "/tmp",
		"-v", priv + ":/data/private:ro",
		"-e", "GUIDEPUB_STORE=" + dsn, "-e", fmt.Sprintf("GUIDEPUB_ADDR=127.0.0.1:%d", port),
		"-e", "GUIDEPUB_BASE_URL=" + base, "-e", "GUIDEPUB_ALLOW_PRIVATE_TARGETS=true", img}
	ctr(t, eng, run...)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("container logs:\n%s", logs(eng, name))
		}
		ctrErr(eng, "rm", "--force", "--volumes", name) // and the anonymous volume of the image's VOLUME
	})
	waitFor(t, "the sidecar's /healthz", 60*time.Second, func() bool {
		resp, err := http.Get(base + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
	if user := strings.TrimSpace(ctr(t, eng, "top", name, "huser")); !strings.Contains(user, "65532") {
		t.Errorf("the sidecar runs as %q, want the image's user 65532", user)
	}
	if _, err := ctrErr(eng, "exec", name, "/usr/local/bin/guidepub", "healthcheck"); err != nil {
		t.Errorf("guidepub healthcheck inside the container: %v", err)
	}

	out := ctr(t, eng, "run", "--rm", "--read-only", "--network", "host", "-e", "GUIDEPUB_STORE="+dsn, img,
		"token", "create", "--owner", "alice", "--scopes", "guide.events", "--json")
	var cred struct{ AppID, Token string }
	if err := json.Unmarshal([]byte(out), &cred); err != nil || cred.Token == "" {
		t.Fatalf("token create printed %q (%v)", out, err)
	}
	if code, body := portal(t, "POST", base+"/api/v1/integrations/test", cred.AppID, cred.Token); code != 200 || !strings.Contains(body, cred.AppID) {
		t.Fatalf("integrations/test: %d %s", code, body)
	}
	dispatch := base + "/api/v1/guides/g-container/events/ready/dispatch"
	if code, body := portal(t, "POST", dispatch, cred.AppID, cred.Token); code != 202 {
		t.Fatalf("dispatch: %d %s", code, body)
	}
	waitFor(t, "the dispatched event at the host's receiver", 30*time.Second, func() bool { return hooks.distinct() == 1 })

	// A second dispatch, answered slowly: it is in flight when SIGTERM comes.
	hooks.mu.Lock()
	hooks.delay = 3 * time.Second
	hooks.mu.Unlock()
	if code, body := portal(t, "POST", dispatch, cred.AppID, cred.Token); code != 202 {
		t.Fatalf("second dispatch: %d %s", code, body)
	}
	time.Sleep(500 * time.Millisecond)
	start := time.Now()
	ctr(t, eng, "stop", "--time", "60", name) // SIGTERM, SIGKILL only after 60 s
	took := time.Since(start)
	t.Logf("stopped %s after SIGTERM", took.Round(10*time.Millisecond))
	if took > 45*time.Second { // the sidecar's shutdown timeout is 40 s
		t.Errorf("stopping took %s, more than the shutdown timeout", took)
	}
	if code := strings.TrimSpace(ctr(t, eng, "inspect", "--format", "{{.State.ExitCode}}", name)); code != "0" {
		t.Errorf("exit code after SIGTERM %s, want 0 (a graceful stop)", code)
	}
	if !strings.Contains(logs(eng, name), "shutting down") {
		t.Errorf("the logs do not show a graceful shutdown")
	}
	hooks.mu.Lock()
	hooks.delay = 0
	hooks.mu.Unlock()
	ctr(t, eng, "start", name)
	waitFor(t, "both dispatched events after a restart", 60*time.Second, func() bool { return hooks.distinct() == 2 })
}

// TestWatchInContainer runs watch in the image on folders of the host: a
// bundle copied in is exported to the mounted output, owned by the user the
// container runs as, with the exporter's permissions (0644 public, 0600
// private, 0755 folders).
func TestWatchInContainer(t *testing.T) {
	eng := engine(t)
	img := image(t, eng)
	root := t.TempDir()
	src, out, priv := filepath.Join(root, "bundles"), filepath.Join(root, "public"), filepath.Join(root, "private")
	uid, gid := os.Getuid(), os.Getgid()
	if uid == 0 {
		uid, gid = 4242, 4242 // an uploader's account, not root
	}
	for _, d := range []string{src, out, priv} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(d, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	name := "guidepub-watch-" + randomName()
	ctr(t, eng, "run", "-d", "--name", name, "--read-only", "--network", "none", "--user", fmt.Sprintf("%d:%d", uid, gid),
		"-v", src+":/data/bundles", "-v", out+":/data/public", "-v", priv+":/data/private", img, "watch", "--jobs", "2")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("container logs:\n%s", logs(eng, name))
		}
		ctrErr(eng, "rm", "--force", "--volumes", name) // and the anonymous volume of the image's VOLUME
	})
	time.Sleep(time.Second) // the first (empty) export
	// Upload by copy, as a user would.
	if b, err := exec.Command("cp", "-r", filepath.Join(repoRoot, "fixtures", "bundles", "301-king-st-e"), src+"/").CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, b)
	}
	status := filepath.Join(out, "vKT301A", "data", "status")
	waitFor(t, "the exported status document", 60*time.Second, func() bool { _, err := os.Stat(status); return err == nil })
	waitFor(t, "the guide's record", 30*time.Second, func() bool {
		_, err := os.Stat(filepath.Join(priv, "exported", "gKT301KINGE1.json"))
		return err == nil
	})
	files := 0
	check := func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		st := fi.Sys().(*syscall.Stat_t)
		if int(st.Uid) != uid || int(st.Gid) != gid {
			t.Errorf("%s is owned by %d:%d, want %d:%d", p, st.Uid, st.Gid, uid, gid)
		}
		// Public files are world-readable; private ones are the owner's
		// only (so the sidecar must run as the watcher's user).
		want := os.FileMode(0o644)
		switch {
		case fi.IsDir():
			want = 0o755
		case strings.HasPrefix(p, priv):
			want = 0o600
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s has mode %v, want %v", p, fi.Mode().Perm(), want)
		}
		files++
		return nil
	}
	for _, d := range []string{out, priv} {
		if err := filepath.Walk(d, check); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d files exported by the container, all owned by %d:%d", files, uid, gid)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if err := exec.CommandContext(ctx, eng, "stop", "--time", "60", name).Run(); err != nil {
		t.Errorf("stop: %v", err)
	}
	if code := strings.TrimSpace(ctr(t, eng, "inspect", "--format", "{{.State.ExitCode}}", name)); code != "0" {
		t.Errorf("watch exit code after SIGTERM %s, want 0", code)
	}
}

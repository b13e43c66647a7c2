package serve

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/fixtures"
)

// freeAddr returns a loopback address with a port nobody listens on now.
func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// nginxBinary returns the nginx executable, or calls fixtures.Missing.
func nginxBinary(t testing.TB) string {
	t.Helper()
	if p, err := exec.LookPath("nginx"); err == nil {
		return p
	}
	if _, err := os.Stat("/usr/sbin/nginx"); err == nil {
		return "/usr/sbin/nginx"
	}
	fixtures.Missing(t, "nginx", "install the Debian package nginx-light (apt-get install nginx-light)")
	return ""
}

// startNginx runs nginx in the foreground with the server block that
// `guidepub serve --print-config nginx` writes for root, and returns its
// base URL. It is stopped when the test ends.
func startNginx(t testing.TB, root string) string {
	t.Helper()
	url, _ := startNginxWith(t, root, 2, nil)
	return url
}

// startNginxWith is startNginx with the number of worker processes, and
// wrap (such as taskset -c 0) put before the nginx command line. It also
// returns the master's process.
func startNginxWith(t testing.TB, root string, workers int, wrap []string) (string, *os.Process) {
	t.Helper()
	bin := nginxBinary(t)
	prefix := t.TempDir()
	addr := freeAddr(t)
	var server bytes.Buffer
	if err := WriteConfig(&server, "nginx", ConfigOptions{Dir: root, Listen: addr, Sidecar: freeAddr(t)}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(prefix, "guidepub.conf"), server.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	user := ""
	if os.Geteuid() == 0 {
		user = "user root;" // the test tree is private to this user
	}
	conf := fmt.Sprintf(`%s
daemon off;
worker_processes %[3]d;
pid %[2]s/nginx.pid;
error_log %[2]s/error.log warn;
events { worker_connections 1024; }
http {
    access_log off;
    sendfile on;
    keepalive_requests 100000;
    client_body_temp_path %[2]s/body;
    proxy_temp_path %[2]s/proxy;
    fastcgi_temp_path %[2]s/fastcgi;
    uwsgi_temp_path %[2]s/uwsgi;
    scgi_temp_path %[2]s/scgi;
    include %[2]s/guidepub.conf;
}
`, user, prefix, workers)
	confPath := filepath.Join(prefix, "nginx.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append(slices.Clone(wrap), bin, "-p", prefix, "-c", confPath, "-e", filepath.Join(prefix, "error.log"))
	cmd := exec.Command(args[0], args[1:]...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start nginx: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt) // fast shutdown
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err == nil {
			c.Close()
			return "http://" + addr, cmd.Process
		}
		select {
		case err := <-exited:
			log, _ := os.ReadFile(filepath.Join(prefix, "error.log"))
			t.Fatalf("nginx exited: %v\n%s\n%s", err, stderr.String(), log)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("nginx does not answer on %s", addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestNginxParity serves one tree with guidepub serve and with nginx
// configured by WriteConfig, and compares the headers clients rely on.
func TestNginxParity(t *testing.T) {
	tt := newTestTree()
	root := osTree(t, tt)
	nginxURL := startNginx(t, root)
	_, hs, client := newTestServer(t, fsCase{"os", afero.NewOsFs(), root}, testConfig())

	compared := []string{"Content-Type", "Content-Encoding", "Vary", "Cache-Control", "X-Content-Type-Options"}
	tests := []struct {
		method, path, accept string
		status               int
	}{
		{"GET", "/v1/data/summary", "gzip", 200},
		{"GET", "/v1/data/summary", "", 200},
		{"GET", "/v1/data/status", "gzip, deflate", 200},
		{"HEAD", "/v1/data/summary", "gzip", 200},
		{"GET", "/v1/reso/autofill", "gzip", 200},
		{"GET", "/alias/data/status", "gzip", 200},
		{"GET", "/v1/doc/plan.pdf", "gzip", 200},
		{"GET", "/v1/doc/photo.jpg", "", 200},
		{"GET", "/v1/doc/file.gz", "gzip", 200},
		{"GET", "/v1/nothing", "gzip", 404},
		{"GET", "/v1/doc/nothing.jpg", "", 404},
		{"GET", "/v1/doc/nothing.pdf", "", 404},
		{"GET", "/v1/data/.tmp-x", "", 404},
		{"GET", "/.hidden", "", 404},
		{"GET", "/v1/data/summary.gz", "", 404},
		{"GET", "/v1/data/", "", 404},
		{"GET", "/v1/doc/", "", 404},
		{"GET", "/", "", 404},
		{"GET", "/v1/doc/link.jpg", "", 404},
		{"POST", "/v1/data/status", "", 405},
	}
	for _, tc := range tests {
		t.Run(tc.method+" "+tc.path+" "+tc.accept, func(t *testing.T) {
			h := map[string]string{"Accept-Encoding": tc.accept}
			if tc.accept == "" {
				h = nil
			}
			ours, ourBody := do(t, client, tc.method, hs.URL+tc.path, h)
			theirs, theirBody := do(t, client, tc.method, nginxURL+tc.path, h)
			if ours.StatusCode != tc.status || theirs.StatusCode != tc.status {
				t.Fatalf("status: guidepub %d, nginx %d, want %d (nginx body %q)", ours.StatusCode, theirs.StatusCode, tc.status, theirBody)
			}
			for _, k := range compared {
				if a, b := ours.Header.Values(k), theirs.Header.Values(k); strings.Join(a, ", ") != strings.Join(b, ", ") {
					t.Errorf("%s: guidepub %q, nginx %q", k, a, b)
				}
			}
			if tc.status == 405 {
				if a, b := ours.Header.Get("Allow"), theirs.Header.Get("Allow"); a != b {
					t.Errorf("Allow: guidepub %q, nginx %q", a, b)
				}
			}
			if !bytes.Equal(ourBody, theirBody) {
				t.Errorf("bodies differ: guidepub %d bytes, nginx %d bytes (%.60q / %.60q)", len(ourBody), len(theirBody), ourBody, theirBody)
			}
			if tc.status == 200 && theirs.Header.Get("ETag") == "" {
				t.Errorf("nginx sent no ETag")
			}
		})
	}
	// nginx decodes %2F before matching, so it serves what guidepub
	// refuses; both stay inside the root. Recorded, not asserted equal.
	for _, p := range []string{"/v1%2Fdata%2Fstatus"} {
		ours, _ := do(t, client, "GET", hs.URL+p, nil)
		theirs, _ := do(t, client, "GET", nginxURL+p, nil)
		t.Logf("%s: guidepub %d, nginx %d", p, ours.StatusCode, theirs.StatusCode)
	}
}

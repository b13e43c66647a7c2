package serve

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/fixtures"
	"github.com/guidepub/guidepub/site"
	"github.com/guidepub/guidepub/site/viewpage"
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
	// done is closed when nginx has exited, with its error in waitErr: a
	// channel closed once, so both the start loop and the clean-up can
	// see it (a failed start used to leave the clean-up waiting forever).
	done := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt) // fast shutdown
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
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
		case <-done:
			log, _ := os.ReadFile(filepath.Join(prefix, "error.log"))
			t.Fatalf("nginx exited: %v\n%s\n%s", waitErr, stderr.String(), log)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("nginx does not answer on %s", addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestNginxParity serves one tree with guidepub serve and with nginx
// configured by WriteConfig (the server block of nginx.conf.tmpl), and
// compares the headers clients rely on.
func TestNginxParity(t *testing.T) {
	tt := newTestTree()
	tt.media["v1/index.html"] = []byte("<p>branded</p>")
	tt.media["v1/fr/index.html"] = []byte("<p>fr</p>")
	tt.media["u/v1/index.html"] = []byte("<p>u</p>")
	tt.media["embed/v1/zh/index.html"] = []byte("<p>embed zh</p>")
	tt.docs[viewpage.StylesheetPath] = viewpage.Stylesheet()
	root := osTree(t, tt)
	nginxURL := startNginx(t, root)
	_, hs, client := newTestServer(t, fsCase{"os", afero.NewOsFs(), root}, testConfig())

	compared := []string{"Content-Type", "Content-Encoding", "Vary", "Cache-Control", "X-Content-Type-Options", "Content-Security-Policy", "X-Frame-Options", "Location"}
	const browser = "text/html,application/xhtml+xml,*/*;q=0.8"
	tests := []struct {
		method, path, accept string
		status               int
		html                 bool   // sent with a browser's Accept
		rng                  string // a Range header
	}{
		{"GET", "/v1/fr", "", 200, true, ""},
		{"GET", "/u/v1", "", 200, true, ""},
		{"GET", "/embed/v1/zh", "", 200, true, ""},
		{"GET", "/v1/", "", 301, true, ""},
		{"GET", "/v1/fr/", "", 301, true, ""},
		{"GET", "/embed/v1/zh/?a=b", "", 301, true, ""},
		{"GET", "/nothing", "", 404, true, ""},
		{"GET", "/v1/doc/nothing.jpg", "", 404, true, ""},
		{"GET", "/v1/de", "", 404, true, ""},
		{"GET", "/nothing", "", 404, false, ""},
		{"GET", "/v1/data/summary", "gzip", 200, false, ""},
		{"GET", "/v1/data/summary", "", 200, false, ""},
		{"GET", "/v1/data/status", "gzip, deflate", 200, false, ""},
		{"HEAD", "/v1/data/summary", "gzip", 200, false, ""},
		{"GET", "/v1/reso/autofill", "gzip", 200, false, ""},
		{"GET", "/alias/data/status", "gzip", 200, false, ""},
		{"GET", "/v1/doc/plan.pdf", "gzip", 200, false, ""},
		{"GET", "/v1/doc/photo.jpg", "", 200, false, ""},
		{"GET", "/v1/doc/file.gz", "gzip", 200, false, ""},
		{"GET", "/v1/nothing", "gzip", 404, false, ""},
		{"GET", "/v1/doc/nothing.jpg", "", 404, false, ""},
		{"GET", "/v1/doc/nothing.pdf", "", 404, false, ""},
		{"GET", "/v1/data/.tmp-x", "", 404, false, ""},
		{"GET", "/.hidden", "", 404, false, ""},
		{"GET", "/v1/data/summary.gz", "", 404, false, ""},
		{"GET", "/v1/data/", "", 404, false, ""},
		{"GET", "/v1/doc/", "", 404, false, ""},
		{"GET", "/", "", 404, false, ""},
		{"GET", "/v1/doc/link.jpg", "", 404, false, ""},
		{"POST", "/v1/data/status", "", 405, false, ""},
		{"GET", "/" + viewpage.StylesheetPath, "gzip", 200, false, ""},
		{"GET", "/" + viewpage.StylesheetPath, "", 200, false, ""},
		{"HEAD", "/" + viewpage.StylesheetPath, "gzip", 200, false, ""},
		{"GET", "/" + viewpage.StylesheetPath + ".gz", "gzip", 404, false, ""},
		{"GET", "/" + site.AssetsDir + "/view.0123.css", "", 404, false, ""},
		// A range past the end: nginx's range filter refuses it after
		// the location's headers were added, and its error page must
		// not add them a second time.
		{"GET", "/v1/doc/photo.jpg", "", 416, false, "bytes=1000000-"},
		{"GET", "/v1/data/summary", "", 416, false, "bytes=1000000-"},
		{"GET", "/v1/doc/photo.jpg", "", 206, false, "bytes=0-1"},
	}
	noRedirect := *client
	noRedirect.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	client = &noRedirect
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.method, " ", tc.path, " ", tc.accept, " html=", tc.html), func(t *testing.T) {
			h := map[string]string{"Accept-Encoding": tc.accept}
			if tc.accept == "" {
				h = map[string]string{}
			}
			if tc.html {
				h["Accept"] = browser
			}
			if tc.rng != "" {
				h["Range"] = tc.rng
			}
			ours, ourBody := do(t, client, tc.method, hs.URL+tc.path, h)
			theirs, theirBody := do(t, client, tc.method, nginxURL+tc.path, h)
			if ours.StatusCode != tc.status || theirs.StatusCode != tc.status {
				t.Fatalf("status: guidepub %d, nginx %d, want %d (nginx body %q)", ours.StatusCode, theirs.StatusCode, tc.status, theirBody)
			}
			if tc.status == 301 {
				// nginx writes its own redirect body; what counts is where.
				if a, b := ours.Header.Get("Location"), theirs.Header.Get("Location"); a != b || a == "" {
					t.Errorf("Location: guidepub %q, nginx %q", a, b)
				}
				return
			}
			for _, k := range compared {
				if n := len(theirs.Header.Values(k)); n > 1 {
					t.Errorf("nginx sent %s %d times: %q", k, n, theirs.Header.Values(k))
				}
				if k == "Cache-Control" && tc.status == http.StatusRequestedRangeNotSatisfiable {
					// nginx cannot take back the location's Cache-Control
					// (docs/hosting.md); guidepub sends no-store.
					continue
				}
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

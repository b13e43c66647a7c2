package main

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/guidepub/guidepub/fixtures"
)

// TestSignInBehindNginx runs the sidecar behind nginx configured by
// `guidepub serve --print-config nginx --sidecar` (which sends
// X-Forwarded-For), with --trusted-proxies naming nginx's address: six
// wrong passwords for an owner from one client get that client refused,
// and the owner, from another client, signs in. Without
// --trusted-proxies every client is nginx to the sidecar, and she is
// refused too: what the shipped deployment did before.
func TestSignInBehindNginx(t *testing.T) {
	bin := nginxPath(t)
	priv := t.TempDir()
	storeFile := filepath.Join(priv, defaultStoreFile)
	code, out, errs := runCLI(t, "app", "create", "--create", "--store", storeFile, "--owner", "integrator-1", "--name", "Listing Sync",
		"--redirect-uri", "http://127.0.0.1:9/callback", "--scopes", "guide.events", "--json")
	var app struct{ ClientID, ClientSecret string }
	if code != 0 || json.Unmarshal([]byte(out), &app) != nil {
		t.Fatalf("app create: exit %d\n%s%s", code, out, errs)
	}
	withStdin(t, "a long passphrase for alice\n", func() {
		if code, out, errs := runCLI(t, "owner", "password", "--store", storeFile, "--owner", "alice"); code != 0 {
			t.Fatalf("owner password: exit %d\n%s%s", code, out, errs)
		}
	})
	for _, tc := range []struct {
		name  string
		flags []string
		alice int // alice's answer from her own address
	}{
		{"trusted", []string{"--trusted-proxies", "127.0.0.1"}, http.StatusSeeOther},
		{"not trusted", nil, http.StatusTooManyRequests},
	} {
		t.Run(tc.name, func(t *testing.T) {
			side := startCommand(t, append([]string{"sidecar", "--addr", "127.0.0.1:0", "--private", priv}, tc.flags...)...)
			base := startNginxFor(t, bin, side)
			conf := oauth2.Config{ClientID: app.ClientID, RedirectURL: "http://127.0.0.1:9/callback",
				Endpoint: oauth2.Endpoint{AuthURL: base + "/oauth/authorize"}, Scopes: []string{"guide.events"}}
			authURL := conf.AuthCodeURL("state-1234567890", oauth2.S256ChallengeOption(oauth2.GenerateVerifier()))

			attacker := newSignInBrowser(t, "127.0.0.3", base, authURL)
			for i := range 6 {
				want := http.StatusUnauthorized
				if i == 5 {
					want = http.StatusTooManyRequests
				}
				if got := attacker.signIn(t, "alice", fmt.Sprintf("wrong password %d", i)); got != want {
					t.Fatalf("wrong password %d from the attacker: status %d, want %d", i+1, got, want)
				}
			}
			alice := newSignInBrowser(t, "127.0.0.201", base, authURL)
			if got := alice.signIn(t, "alice", "a long passphrase for alice"); got != tc.alice {
				t.Fatalf("alice from her own address: status %d, want %d", got, tc.alice)
			}
		})
	}
}

// nginxPath returns the nginx executable, or calls fixtures.Missing.
func nginxPath(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"nginx", "/usr/sbin/nginx"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	fixtures.Missing(t, "nginx", "install the Debian package nginx-light (apt-get install nginx-light)")
	return ""
}

// startNginxFor runs nginx in the foreground with the server block that
// `guidepub serve --print-config nginx --sidecar sidecar` writes, and
// returns its base URL. It is stopped when the test ends.
func startNginxFor(t *testing.T, bin, sidecar string) string {
	t.Helper()
	prefix := t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	code, server, errs := runCLI(t, "serve", "--print-config", "nginx", "--dir", t.TempDir(), "--addr", addr, "--sidecar", sidecar)
	if code != 0 {
		t.Fatalf("print-config: exit %d\n%s", code, errs)
	}
	user := ""
	if os.Geteuid() == 0 {
		user = "user root;"
	}
	conf := fmt.Sprintf(`%s
daemon off;
worker_processes 1;
pid %[2]s/nginx.pid;
error_log %[2]s/error.log warn;
events { worker_connections 64; }
http {
    access_log off;
    client_body_temp_path %[2]s/body;
    proxy_temp_path %[2]s/proxy;
    fastcgi_temp_path %[2]s/fastcgi;
    uwsgi_temp_path %[2]s/uwsgi;
    scgi_temp_path %[2]s/scgi;
%[3]s
}
`, user, prefix, server)
	confPath := filepath.Join(prefix, "nginx.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-p", prefix, "-c", confPath, "-e", filepath.Join(prefix, "error.log"))
	if err := cmd.Start(); err != nil {
		t.Fatalf("start nginx: %v", err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	for deadline := time.Now().Add(10 * time.Second); ; {
		if c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond); err == nil {
			c.Close()
			return "http://" + addr
		}
		select {
		case <-done:
			log, _ := os.ReadFile(filepath.Join(prefix, "error.log"))
			t.Fatalf("nginx exited:\n%s", log)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("nginx did not listen within 10 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// signInBrowser is a browser whose connections come from one loopback
// address, holding the sign-in form it was given.
type signInBrowser struct {
	client *http.Client
	action string
	form   url.Values
}

// newSignInBrowser opens authURL from ip through base and keeps the
// sign-in form it is sent to.
func newSignInBrowser(t *testing.T, ip, base, authURL string) *signInBrowser {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	b := &signInBrowser{client: &http.Client{Jar: jar,
		Transport:     &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	resp, err := b.client.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/oauth/signin") {
		t.Fatalf("authorize without a session: %d Location %q, want a 303 to the sign-in page", resp.StatusCode, loc)
	}
	resp, err = b.client.Get(base + loc)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	b.form = url.Values{}
	for _, m := range regexp.MustCompile(`<input type="hidden" name="([a-z]+)" value="([^"]*)">`).FindAllStringSubmatch(string(page), -1) {
		b.form.Set(m[1], html.UnescapeString(m[2]))
	}
	a := regexp.MustCompile(`<form method="post" action="([^"]*)">`).FindStringSubmatch(string(page))
	if a == nil {
		t.Fatalf("no sign-in form:\n%s", page)
	}
	b.action = base + html.UnescapeString(a[1])
	return b
}

// signIn posts the form as owner with password and returns the status.
func (b *signInBrowser) signIn(t *testing.T, owner, password string) int {
	t.Helper()
	f := url.Values{}
	for k, v := range b.form {
		f[k] = v
	}
	f.Set("username", owner)
	f.Set("password", password)
	resp, err := b.client.PostForm(b.action, f)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

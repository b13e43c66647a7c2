package main

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/guidepub/guidepub/fixtures"
)

// readOAuthDoc returns docs/oauth.md.
func readOAuthDoc(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "docs", "oauth.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// shBlockAfter returns the ```sh block of doc whose text (or the line just
// before it) contains marker, or fails the test.
func shBlockAfter(t *testing.T, doc, marker string) string {
	t.Helper()
	for _, block := range strings.Split(doc, "```sh\n")[1:] {
		body, _, ok := strings.Cut(block, "```")
		if ok && strings.Contains(body, marker) {
			return body
		}
	}
	t.Fatalf("docs/oauth.md has no sh block with %q", marker)
	return ""
}

// TestOAuthDocExample: the worked example of docs/oauth.md agrees with
// itself: every code_verifier it passes is the one whose S256 is the
// challenge of its authorize URL, for the same client.
func TestOAuthDocExample(t *testing.T) {
	doc := readOAuthDoc(t)
	challenges := regexp.MustCompile(`code_challenge=([A-Za-z0-9_-]+)`).FindAllStringSubmatch(doc, -1)
	verifiers := regexp.MustCompile(`code_verifier=([A-Za-z0-9_-]{43,})`).FindAllStringSubmatch(doc, -1)
	if len(challenges) == 0 || len(verifiers) < 2 {
		t.Fatalf("docs/oauth.md: %d challenges and %d verifiers, want an authorize URL and its exchanges", len(challenges), len(verifiers))
	}
	for _, c := range challenges {
		for _, v := range verifiers {
			if got := oauth2.S256ChallengeFromVerifier(v[1]); got != c[1] {
				t.Errorf("code_verifier=%s has challenge %s, but the authorize URL sends %s", v[1], got, c[1])
			}
		}
	}
	ids := regexp.MustCompile(`gpc_[A-Za-z0-9]{16}`).FindAllString(doc, -1)
	slices.Sort(ids)
	if ids = slices.Compact(ids); len(ids) != 1 {
		t.Errorf("the worked example names several client ids: %v", ids)
	}
}

// oauthCurlScript is the walk-through of docs/oauth.md as a script.
var oauthCurlScript = filepath.Join(repoRoot, oauthCurlScriptPath)

// oauthSidecar is a real sidecar on loopback with an owner's password set,
// for the curl walk-through.
type oauthSidecar struct {
	base, priv string
}

// The owner and password the walk-through signs in with.
const (
	curlOwner    = "user-2002"
	curlPassword = "a long passphrase for user-2002"
)

// startOAuthSidecar starts a sidecar on a fresh private tree, with
// curlOwner's password set by "owner password"; it stops with the test.
func startOAuthSidecar(t *testing.T) *oauthSidecar {
	t.Helper()
	priv := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	var code int
	var out, errs string
	withStdin(t, curlPassword+"\n", func() {
		code, out, errs = runCLI(t, "owner", "password", "--private", priv, "--create", "--owner", curlOwner)
	})
	if code != 0 {
		t.Fatalf("owner password: exit %d\n%s%s", code, out, errs)
	}
	cfg := newSidecarConfig(priv, filepath.Join(priv, defaultStoreFile), nil)
	cfg.BaseURL, cfg.NoRequestLog = base, true
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runSidecar(ctx, cfg, ln, slog.New(slog.DiscardHandler)) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("the sidecar did not stop")
		}
	})
	return &oauthSidecar{base: base, priv: priv}
}

// createApp runs "app create --json" with args on s's store.
func (s *oauthSidecar) createApp(t *testing.T, args ...string) (app struct{ ClientID, ClientSecret, AuthorizeURL, CodeVerifier string }) {
	t.Helper()
	code, out, errs := runCLI(t, append([]string{"app", "create", "--private", s.priv, "--owner", "integrator-1",
		"--redirect-uri", "http://127.0.0.1:9000/callback", "--base-url", s.base, "--json"}, args...)...)
	if code != 0 || json.Unmarshal([]byte(out), &app) != nil {
		t.Fatalf("app create: exit %d\n%s%s", code, out, errs)
	}
	return app
}

// runCurlScript runs docs/oauth-curl.sh with sh and env (and PATH alone
// from this process), returning its standard output and error.
func runCurlScript(t *testing.T, env map[string]string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := exec.Command("sh", oauthCurlScript)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var o, e strings.Builder
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.String(), e.String(), err
}

// TestOAuthCurlScript runs docs/oauth-curl.sh, the curl walk-through of
// docs/oauth.md, with sh and the real curl against a real sidecar, with
// the values "app create --json" printed and the variables the doc's
// command sets: it signs in, allows, exchanges the code and ends with the
// Portal API's answer for the app; for a public app too. A wrong password
// stops it with the sign-in's answer.
func TestOAuthCurlScript(t *testing.T) {
	for _, tool := range []string{"sh", "curl", "sed", "mktemp"} {
		if _, err := exec.LookPath(tool); err != nil {
			fixtures.Missing(t, tool, "apt-get install "+tool)
		}
	}
	s := startOAuthSidecar(t)
	app := s.createApp(t, "--name", "Listing Sync", "--scopes", "guide.events,guide.read")
	env := map[string]string{"AUTHORIZE_URL": app.AuthorizeURL, "VERIFIER": app.CodeVerifier,
		"CLIENT_SECRET": app.ClientSecret, "OWNER": curlOwner, "PASSWORD": curlPassword}

	// The doc's command sets exactly the variables the walk-through runs with.
	cmdBlock := shBlockAfter(t, readOAuthDoc(t), "sh docs/oauth-curl.sh")
	var asked []string
	for _, m := range regexp.MustCompile(`(?m)(?:^|\s)([A-Z_]+)=`).FindAllStringSubmatch(cmdBlock, -1) {
		asked = append(asked, m[1])
	}
	slices.Sort(asked)
	if names := slices.Sorted(maps.Keys(env)); !slices.Equal(asked, names) {
		t.Errorf("docs/oauth.md sets %v for docs/oauth-curl.sh; it runs with %v", asked, names)
	}

	out, errs, err := runCurlScript(t, env)
	checkCurlScript(t, "confidential app", out, errs, err, app.ClientID, "guide.events guide.read")

	public := s.createApp(t, "--name", "Desk App", "--public", "--scopes", "guide.events")
	out, errs, err = runCurlScript(t, map[string]string{"AUTHORIZE_URL": public.AuthorizeURL, "VERIFIER": public.CodeVerifier,
		"OWNER": curlOwner, "PASSWORD": curlPassword})
	checkCurlScript(t, "public app", out, errs, err, public.ClientID, "guide.events")

	env["PASSWORD"] = "not the password of user-2002"
	out, errs, err = runCurlScript(t, env)
	if code := exitStatus(err); code != 1 || out != "" || !strings.Contains(errs, "sign-in as user-2002 answered 401: The owner name or password is wrong.") {
		t.Errorf("a wrong password: exit %d (%v), want 1 and the sign-in's answer\n%s%s", code, err, out, errs)
	}
	delete(env, "VERIFIER")
	if _, errs, err = runCurlScript(t, env); exitStatus(err) != 2 || !strings.Contains(errs, "set VERIFIER") {
		t.Errorf("no VERIFIER: %v, want exit 2 naming it\n%s", err, errs)
	}
}

// checkCurlScript checks what docs/oauth-curl.sh printed: the token
// endpoint's answer with the scopes allowed, then the Portal API's.
func checkCurlScript(t *testing.T, name, out, errs string, err error, clientID, scope string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	var tok struct {
		AccessToken  string `json:"access_token"`
		RefreshToken string `json:"refresh_token"`
		Scope        string `json:"scope"`
	}
	if err != nil || len(lines) != 2 || json.Unmarshal([]byte(lines[0]), &tok) != nil ||
		tok.AccessToken == "" || tok.RefreshToken == "" || tok.Scope != scope || lines[1] != `{"appId":"`+clientID+`"}` {
		t.Errorf("%s: docs/oauth-curl.sh: %v\n%s%s\nwant the tokens (scope %q) and {\"appId\":%q}", name, err, out, errs, scope, clientID)
	}
}

// exitStatus returns the exit status err reports (0 for nil, -1 when it
// does not say).
func exitStatus(err error) int {
	var ee *exec.ExitError
	if err == nil {
		return 0
	}
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

package main

import (
	"context"
	"encoding/json"
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

// TestOAuthDocCurlOnly runs the curl-only walk-through of docs/oauth.md,
// as written, against a real sidecar, with the values "app create --json"
// and "owner password" give: it must end with the Portal API's answer for
// the app. The names the doc asks the reader to set are the ones set here.
func TestOAuthDocCurlOnly(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "sed", "mktemp"} {
		if _, err := exec.LookPath(tool); err != nil {
			fixtures.Missing(t, tool, "apt-get install "+tool)
		}
	}
	doc := readOAuthDoc(t)
	script := shBlockAfter(t, doc, "# curl only:")
	values := shBlockAfter(t, doc, "AUTHORIZE_URL=")

	priv := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	code, out, errs := runCLI(t, "app", "create", "--private", priv, "--create", "--owner", "integrator-1", "--name", "Listing Sync",
		"--redirect-uri", "http://127.0.0.1:9000/callback", "--scopes", "guide.events,guide.read", "--base-url", base, "--json")
	var app struct{ ClientID, ClientSecret, AuthorizeURL, CodeVerifier string }
	if code != 0 || json.Unmarshal([]byte(out), &app) != nil {
		t.Fatalf("app create: exit %d\n%s%s", code, out, errs)
	}
	const password = "a long passphrase for user-2002"
	withStdin(t, password+"\n", func() { code, out, errs = runCLI(t, "owner", "password", "--private", priv, "--owner", "user-2002") })
	if code != 0 {
		t.Fatalf("owner password: exit %d\n%s%s", code, out, errs)
	}

	cfg := newSidecarConfig(priv, filepath.Join(priv, defaultStoreFile), nil)
	cfg.BaseURL, cfg.NoRequestLog = base, true
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runSidecar(ctx, cfg, ln, slog.New(slog.DiscardHandler)) }()
	defer func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("the sidecar did not stop")
		}
	}()

	env := map[string]string{
		"BASE": base, "AUTHORIZE_URL": app.AuthorizeURL, "CLIENT_ID": app.ClientID, "CLIENT_SECRET": app.ClientSecret,
		"VERIFIER": app.CodeVerifier, "OWNER": "user-2002", "PASSWORD": password,
	}
	var asked []string
	for _, m := range regexp.MustCompile(`(?m)(?:^|\s)([A-Z_]+)=`).FindAllStringSubmatch(values, -1) {
		asked = append(asked, m[1])
	}
	slices.Sort(asked)
	if names := slices.Sorted(maps.Keys(env)); !slices.Equal(asked, names) {
		t.Fatalf("docs/oauth.md asks the reader to set %v; the walk-through runs with %v", asked, names)
	}
	cmd := exec.Command("bash", "-eu", "-o", "pipefail", "-c", script)
	cmd.Env = os.Environ()
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	got, err := cmd.CombinedOutput()
	if want := `{"appId":"` + app.ClientID + `"}`; err != nil || strings.TrimSpace(string(got)) != want {
		t.Fatalf("the curl-only walk-through: %v\n%s\nwant %s", err, got, want)
	}
}

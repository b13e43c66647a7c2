package sidecar

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guidepub/guidepub/fixtures"
)

// oauthClientDir holds the npm project of the strict OAuth client the
// tests run (package.json and its lockfile; node_modules is installed by
// npm ci when missing).
var oauthClientDir = filepath.Join("testdata", "oauthclient")

// nodeClient returns the absolute folder of the npm project, running npm
// ci there when node_modules is missing. It skips (or fails, see
// fixtures.Missing) when node or npm is absent or the install fails.
func nodeClient(t *testing.T) string {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			fixtures.Missing(t, tool, err.Error()+" (install Node.js 20 or later and npm)")
		}
	}
	dir, err := filepath.Abs(oauthClientDir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "oauth4webapi")); err != nil {
		cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			fixtures.Missing(t, "npm package oauth4webapi", fmt.Sprintf("npm ci in %s: %v\n%s", dir, err, out))
		}
	}
	return dir
}

// TestOAuthStrictClient runs the whole flow with oauth4webapi, a strict
// third-party client (testdata/oauthclient/flow.mjs): discovery,
// authorization without state and with a short one (sign-in and consent
// in its own cookie-keeping browser), the code exchange with PKCE and
// client_secret_basic, a Portal API call, a refresh, a revocation, a
// reused refresh token, and the Portal API's Bearer challenges (a revoked
// token: invalid_token; a token without guide.events:
// insufficient_scope) as the client parses them. Any deviation from the RFCs that such a client
// checks fails it.
func TestOAuthStrictClient(t *testing.T) {
	dir := nodeClient(t)
	forEachBackend(t, func(t *testing.T, dsn string) {
		e := newOAuthEnv(t, dsn)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "node", filepath.Join(dir, "flow.mjs"))
		cmd.Dir = dir
		cmd.Env = append(os.Environ(),
			"ISSUER="+e.http.URL, "CLIENT_ID="+e.clientID, "CLIENT_SECRET="+e.app.ClientSecret,
			"REDIRECT_URI="+e.app.RedirectURL, "OWNER=alice", "PASSWORD="+alicePassword, "SCOPE=guide.events",
			"NARROW_SCOPE=guide.list")
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("node flow.mjs: %v\n%s%s", err, stdout.String(), stderr.String())
		}
		if !strings.Contains(stdout.String(), `"ok":true`) {
			t.Fatalf("node flow.mjs did not report success:\n%s%s", stdout.String(), stderr.String())
		}
		t.Log(strings.TrimSpace(stdout.String()))
	})
}

package sidecar

import (
	"context"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/guidepub/guidepub/fixtures"
	"golang.org/x/oauth2"
)

// TestOAuthInChromium drives the sign-in and consent pages in headless
// Chromium as a person would: type the owner name and password, press
// Sign in, press Allow; then the app exchanges the code it was sent back
// with and calls the Portal API.
func TestOAuthInChromium(t *testing.T) {
	bin, err := exec.LookPath("chromium")
	if err != nil {
		fixtures.Missing(t, "Chromium", "install the Debian packages chromium and chromium-driver")
		return
	}
	e := newOAuthEnv(t, storetestSQLite(t))
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		// No UserDataDir: chromedp makes a temporary one and removes it once
		// the browser has exited; a t.TempDir could still be written to by
		// Chromium's helpers when the test's clean-up runs.
		chromedp.ExecPath(bin), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-quic", true), chromedp.Flag("disable-dev-shm-usage", true))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, 90*time.Second)
	defer cancelT()

	verifier := oauth2.GenerateVerifier()
	var signInTitle, consentText, landed string
	var consentShot []byte
	steps := []struct {
		name    string
		actions []chromedp.Action
	}{
		{"open the app's authorization link", []chromedp.Action{
			chromedp.Navigate(e.app.AuthCodeURL("state-from-chromium", oauth2.S256ChallengeOption(verifier))),
			chromedp.WaitVisible(`#username`, chromedp.ByQuery),
			chromedp.Title(&signInTitle),
		}},
		{"sign in", []chromedp.Action{
			chromedp.SendKeys(`#username`, "alice", chromedp.ByQuery),
			chromedp.SendKeys(`#password`, alicePassword, chromedp.ByQuery),
			chromedp.Submit(`#password`, chromedp.ByQuery),
		}},
		{"read the consent page", []chromedp.Action{
			chromedp.WaitVisible(`button[value=allow]`, chromedp.ByQuery),
			chromedp.Text(`main`, &consentText, chromedp.ByQuery),
			chromedp.FullScreenshot(&consentShot, 100),
		}},
		{"allow", []chromedp.Action{chromedp.Click(`button[value=allow]`, chromedp.ByQuery, chromedp.NodeVisible)}},
	}
	for _, st := range steps {
		if err := chromedp.Run(ctx, st.actions...); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
	}
	// The browser follows the redirect to the app; read where it landed
	// once the navigation is over.
	for !strings.HasPrefix(landed, e.callback.URL) {
		if ctx.Err() != nil {
			t.Fatalf("the browser never reached the app; last at %q", landed)
		}
		_ = chromedp.Run(ctx, chromedp.Location(&landed))
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.HasPrefix(signInTitle, "Sign in") {
		t.Errorf("sign-in page title %q", signInTitle)
	}
	for _, want := range []string{"Listing Sync", "alice", "Receive your guides' events"} {
		if !strings.Contains(consentText, want) {
			t.Errorf("consent page lacks %q:\n%s", want, consentText)
		}
	}
	// GUIDEPUB_TEST_SCREENSHOTS=DIR keeps the consent page's picture.
	if dir := os.Getenv("GUIDEPUB_TEST_SCREENSHOTS"); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, "oauth-consent.png"), consentShot, 0o644); err != nil {
			t.Error(err)
		}
	}
	u, err := url.Parse(landed)
	if err != nil {
		t.Fatal(err)
	}
	if u.Query().Get("state") != "state-from-chromium" {
		t.Fatalf("landed on %s, want the state back", landed)
	}
	tok, err := e.app.Exchange(context.Background(), u.Query().Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatalf("exchange: %v", err)
	}
	if code, body := e.portal("GET", eventPath, tok.AccessToken); code != 200 {
		t.Fatalf("Portal API with the browser-approved token: %d %s", code, body)
	}
}

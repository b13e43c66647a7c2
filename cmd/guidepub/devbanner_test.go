package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// devLogLine matches one of dev's log lines: a time, a level, a message.
var devLogLine = regexp.MustCompile(`^\d\d:\d\d:\d\d (INF|WRN|ERR|DBG) `)

// bannerLines returns the lines of dev's banner in out (from the views to
// "guidepub dev: ready"), failing the test when there is none.
func bannerLines(t *testing.T, out string) []string {
	t.Helper()
	lines := strings.Split(out, "\n")
	start := slices.Index(lines, "Views (public, no credentials):")
	end := slices.Index(lines, "guidepub dev: ready")
	if start < 0 || end < start {
		t.Fatalf("no banner in:\n%s", out)
	}
	return lines[start : end+1]
}

// TestDevTerminal runs dev with standard output and error on one pipe, as
// on a terminal: its log lines are short human lines, not JSON; the
// banner comes whole, after the start's log lines (the samples' webhooks
// received); requests are not logged.
func TestDevTerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildGuidepub(t)
	dev := startDevWith(t, bin, true, "--work-dir", filepath.Join(t.TempDir(), "work"))
	out := dev.stdout.String()
	banner := bannerLines(t, out)
	for _, l := range banner {
		if devLogLine.MatchString(l) {
			t.Errorf("a log line cuts the banner: %q", l)
		}
	}
	before, _, _ := strings.Cut(out, "Views (public, no credentials):")
	if n := len(regexp.MustCompile(`(?m)^\d\d:\d\d:\d\d INF webhook received .*signature=valid`).FindAllString(before, -1)); n != 2 {
		t.Errorf("%d samples' webhooks logged before the banner, want 2:\n%s", n, out)
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "{") {
			t.Errorf("a JSON line on dev's terminal: %s", l)
		}
	}

	for _, p := range []string{"/healthz", "/301-king-st-e/data/status", "/api/v1/openapi.json"} {
		if code, _ := get(t, dev.base+p); code != http.StatusOK {
			t.Fatalf("GET %s: %d", p, code)
		}
	}
	time.Sleep(300 * time.Millisecond)
	if after := strings.TrimPrefix(dev.stdout.String(), out); strings.Contains(after, " request ") {
		t.Errorf("requests logged without --log-requests:\n%s", after)
	}

	t.Run("slow webhook", func(t *testing.T) { testDevBannerWaits(t, bin) })
}

// testDevBannerWaits: a webhook that takes a second to answer the first
// export's ready event still has its delivery logged before the banner.
func testDevBannerWaits(t *testing.T, bin string) {
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(time.Second)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer hook.Close()
	root := t.TempDir()
	src := filepath.Join(root, "src")
	upload(t, src, "301-king-st-e", sampleBundle(t, "301-king-st-e", hook.URL+"/ready"))
	dev := startDevWith(t, bin, true, "--src", src, "--work-dir", filepath.Join(root, "work"))
	out := dev.stdout.String()
	bannerLines(t, out)
	before, _, _ := strings.Cut(out, "Views (public, no credentials):")
	if !strings.Contains(before, "INF webhook delivered") {
		t.Errorf("the slow webhook's delivery is not logged before the banner:\n%s", out)
	}
}

// printedToken returns the token dev printed for owner.
func printedToken(t *testing.T, out, owner string) devToken {
	t.Helper()
	line := between(out, "  owner "+owner+": ", "\n")
	_, value, _ := strings.Cut(line, "X-Svc-App-Token: ")
	tok := devToken{AppID: between(line, "X-Svc-App-Id: ", " "), Token: value}
	if tok.AppID == "" || tok.Token == "" {
		t.Fatalf("no token printed for %s:\n%s", owner, out)
	}
	return tok
}

// testDevSecondRun runs dev twice on one work folder, on two addresses.
// The second run points the samples' webhooks at itself, says so, and
// their ready events reach its receiver. It prints the tokens and the
// sample app of the first, whose secrets the work folder keeps in a file
// only its user reads, and makes no more; a token revoked by hand in
// between is replaced.
func testDevSecondRun(t *testing.T, bin string) {
	work := filepath.Join(t.TempDir(), "work")
	owners := []string{"user-1001", "user-2002", "user-3003"}
	first := map[string]devToken{}
	var firstApp, firstBase string
	t.Run("first run", func(t *testing.T) {
		dev := startDev(t, bin, "--work-dir", work)
		for _, o := range owners {
			first[o] = printedToken(t, dev.stdout.String(), o)
		}
		firstApp = between(dev.stdout.String(), "(client id ", ",")
		firstBase = dev.base
	})
	fi, err := os.Stat(filepath.Join(work, devCredsFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("%s: %v, mode %v; want 0600", devCredsFile, err, fi.Mode().Perm())
	}
	store := filepath.Join(work, devStoreFile)
	if code, out, errs := runCLI(t, "token", "revoke", "--store", store, first["user-2002"].AppID); code != 0 {
		t.Fatalf("token revoke: %d\n%s%s", code, out, errs)
	}

	dev := startDev(t, bin, "--work-dir", work)
	if dev.base == firstBase {
		t.Skipf("the second run got the first one's address, %s", firstBase)
	}
	if want := "now point at " + dev.base + devReceiverPath; !strings.Contains(dev.stdout.String(), want) {
		t.Errorf("stdout does not say %q:\n%s", want, dev.stdout)
	}
	eventually(t, "the samples' events at the new address", func() bool {
		return strings.Count(dev.stderr.String(), `signature=valid`) >= 2
	})
	for _, o := range owners {
		got := printedToken(t, dev.stdout.String(), o)
		if same := got == first[o]; same != (o != "user-2002") {
			t.Errorf("owner %s: first run %v, second %v; want the same token unless revoked", o, first[o], got)
		}
	}
	if app := between(dev.stdout.String(), "(client id ", ","); app == "" || app != firstApp {
		t.Errorf("sample app %q, first run's %q: want the same", app, firstApp)
	}
	code, out, errs := runCLI(t, "token", "list", "--store", store, "--json")
	var toks []tokenInfo
	if code != 0 || json.Unmarshal([]byte(out), &toks) != nil {
		t.Fatalf("token list: %d\n%s%s", code, out, errs)
	}
	active := 0
	for _, tok := range toks {
		if tok.Status == "active" {
			active++
		}
	}
	if len(toks) != 4 || active != 3 {
		t.Errorf("after two runs and a revocation: %d tokens, %d active; want 4 and 3:\n%s", len(toks), active, out)
	}
	code, out, _ = runCLI(t, "app", "list", "--store", store, "--json")
	if code != 0 || strings.Count(out, `"clientId"`) != 1 {
		t.Errorf("app list after two runs: %s; want one app", out)
	}
}

package main

import (
	"context"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/oauth2"

	"github.com/guidepub/guidepub/fixtures"
)

// TestDevOAuth follows dev's sample OAuth app as printed; then registers an
// OAuth app and an owner password with the guidepub binary, completes the
// authorization code flow against the running "guidepub dev" with
// golang.org/x/oauth2 as the app and a cookie jar as the owner's browser,
// and calls the Portal API with the token.
func TestDevOAuth(t *testing.T) {
	bin := buildGuidepub(t)
	work := filepath.Join(t.TempDir(), "work")
	dev := startDev(t, bin, "--work-dir", work)
	storeFile := filepath.Join(work, defaultStoreFile)
	// First, before user-1001's password changes below.
	t.Run("dev's sample app", func(t *testing.T) { testDevOAuthSample(t, dev) })

	var landed url.Values
	cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		landed = r.URL.Query()
		io.WriteString(w, "ok")
	}))
	defer cb.Close()

	out, err := exec.Command(bin, "app", "create", "--store", storeFile, "--owner", "integrator-1", "--name", "Listing Sync",
		"--redirect-uri", cb.URL+"/callback", "--scopes", "guide.events,guide.read", "--json").Output()
	if err != nil {
		t.Fatalf("app create: %v", err)
	}
	var app struct{ ClientID, ClientSecret string }
	if err := json.Unmarshal(out, &app); err != nil {
		t.Fatal(err)
	}
	pw := exec.Command(bin, "owner", "password", "--store", storeFile, "--owner", "user-1001")
	pw.Stdin = strings.NewReader("a long passphrase for user-1001\n")
	if out, err := pw.CombinedOutput(); err != nil {
		t.Fatalf("owner password: %v\n%s", err, out)
	}

	// The app discovers the endpoints from the metadata.
	var md struct {
		Authorization string `json:"authorization_endpoint"`
		Token         string `json:"token_endpoint"`
	}
	resp, err := http.Get(dev.base + "/.well-known/oauth-authorization-server")
	if err != nil {
		t.Fatal(err)
	}
	json.NewDecoder(resp.Body).Decode(&md)
	resp.Body.Close()
	conf := oauth2.Config{ClientID: app.ClientID, ClientSecret: app.ClientSecret, RedirectURL: cb.URL + "/callback",
		Endpoint: oauth2.Endpoint{AuthURL: md.Authorization, TokenURL: md.Token}, Scopes: []string{"guide.events"}}
	if !strings.HasPrefix(md.Authorization, dev.base) {
		t.Fatalf("metadata %+v does not name dev's own endpoints (%s)", md, dev.base)
	}

	owner := newBrowser(t, dev.base)
	verifier := oauth2.GenerateVerifier()
	signIn := owner.get(conf.AuthCodeURL("state-of-the-app", oauth2.S256ChallengeOption(verifier)))
	consent := owner.submit(signIn, url.Values{"username": {"user-1001"}, "password": {"a long passphrase for user-1001"}})
	owner.submit(consent, url.Values{"decision": {"allow"}, "grant": {"guide.events"}})
	if landed.Get("state") != "state-of-the-app" || landed.Get("code") == "" {
		t.Fatalf("the app got %v", landed)
	}
	tok, err := conf.Exchange(context.Background(), landed.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatalf("exchange: %v", err)
	}
	req, _ := http.NewRequest("POST", dev.base+"/api/v1/integrations/test", nil)
	req.Header.Set("X-Svc-App-Id", app.ClientID)
	req.Header.Set("X-Svc-App-Token", tok.AccessToken)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), app.ClientID) {
		t.Fatalf("integrations/test: %d %s", resp.StatusCode, b)
	}
}

// testDevOAuthSample follows what dev printed for its sample app as a
// person would: the authorize URL in a browser (a cookie jar), sign-in
// with the printed password, Allow; then the exchange command that dev's
// redirect URI page shows, pasted into a shell, and the Portal API call.
func testDevOAuthSample(t *testing.T, dev *devProcess) {
	if _, err := exec.LookPath("curl"); err != nil {
		fixtures.Missing(t, "curl", "apt-get install curl")
	}
	out := dev.stdout.String()
	var authorize string
	for _, l := range strings.Split(out, "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, dev.base+"/oauth/authorize?") {
			authorize = l
		}
	}
	ownerID, password := between(out, "sign in as ", " (password: "), between(out, "(password: ", ")")
	if authorize == "" || ownerID != "user-1001" || password == "" {
		t.Fatalf("no authorize URL, owner and password printed:\n%s", out)
	}
	owner := newBrowser(t, dev.base)
	consent := owner.submit(owner.get(authorize), url.Values{"username": {ownerID}, "password": {password}})
	landed := owner.submit(consent, url.Values{"decision": {"allow"}, "grant": devScopes}) // the boxes, ticked
	pre := regexp.MustCompile(`(?s)<pre>(.*?)</pre>`).FindAllStringSubmatch(landed, -1)
	if len(pre) != 2 || !strings.Contains(pre[0][1], "/oauth/token") {
		t.Fatalf("the redirect URI's page shows no exchange command:\n%s", landed)
	}
	exchange := html.UnescapeString(pre[0][1])
	got, err := exec.Command("bash", "-c", exchange).Output()
	var tok struct {
		AccessToken string `json:"access_token"`
		Scope       string
	}
	if err != nil || json.Unmarshal(got, &tok) != nil || tok.AccessToken == "" || tok.Scope != "guide.events guide.read guide.list" {
		t.Fatalf("%s: %v\n%s", exchange, err, got)
	}
	api := html.UnescapeString(pre[1][1])
	api = api[strings.Index(api, "curl"):] // after the ACCESS_TOKEN= line
	cmd := exec.Command("bash", "-c", api)
	cmd.Env = append(os.Environ(), "ACCESS_TOKEN="+tok.AccessToken)
	got, err = cmd.Output()
	clientID := between(out, "(client id ", ",")
	if err != nil || !strings.Contains(string(got), `"appId":"`+clientID+`"`) {
		t.Fatalf("%s: %v\n%s", api, err, got)
	}

	// The same grant with curl alone, as the banner prints it, pasted in
	// the repository's root.
	var script string
	for _, l := range strings.Split(out, "\n") {
		if l = strings.TrimSpace(l); strings.HasSuffix(l, " sh "+oauthCurlScriptPath) {
			script = l
		}
	}
	sh := exec.Command("sh", "-c", script)
	sh.Dir = repoRoot
	got, err = sh.Output()
	if script == "" || err != nil || !strings.HasSuffix(string(got), `{"appId":"`+clientID+`"}`+"\n") {
		t.Fatalf("the banner's curl-alone command %q: %v\n%s", script, err, got)
	}
}

// browser is an owner's browser on the sign-in and consent pages: it
// keeps cookies, and submits a page's form with its hidden fields.
type browser struct {
	t      *testing.T
	base   string
	client *http.Client
}

// newBrowser returns a browser for the sidecar at base: it sends a
// browser's Accept with every request.
func newBrowser(t *testing.T, base string) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, base: base, client: &http.Client{Jar: jar, Transport: acceptHTML{http.DefaultTransport}}}
}

// acceptHTML sends a browser's Accept with each request.
type acceptHTML struct{ rt http.RoundTripper }

func (a acceptHTML) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
	return a.rt.RoundTrip(r)
}

var (
	hiddenField = regexp.MustCompile(`<input type="hidden" name="([a-z]+)" value="([^"]*)">`)
	formAction  = regexp.MustCompile(`<form method="post" action="([^"]*)">`)
)

// get returns the page at u, after redirects.
func (b *browser) get(u string) string {
	b.t.Helper()
	resp, err := b.client.Get(u)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return string(body)
}

// submit posts the form of page with its hidden fields and set, and
// returns the page it ends on, after redirects.
func (b *browser) submit(page string, set url.Values) string {
	b.t.Helper()
	f := url.Values{}
	for _, m := range hiddenField.FindAllStringSubmatch(page, -1) {
		f.Set(m[1], html.UnescapeString(m[2]))
	}
	for k, v := range set {
		f[k] = v
	}
	a := formAction.FindStringSubmatch(page)
	if a == nil {
		b.t.Fatalf("no form:\n%s", page)
	}
	resp, err := b.client.PostForm(b.base+html.UnescapeString(a[1]), f)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return string(body)
}

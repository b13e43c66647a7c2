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
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/oauth2"
)

// TestDevOAuth registers an OAuth app and an owner password with the
// guidepub binary, then completes the authorization code flow against a
// running "guidepub dev" with golang.org/x/oauth2 as the app and a cookie
// jar as the owner's browser, and calls the Portal API with the token.
func TestDevOAuth(t *testing.T) {
	bin := buildGuidepub(t)
	work := filepath.Join(t.TempDir(), "work")
	dev := startDev(t, bin, "--work-dir", work)
	storeFile := filepath.Join(work, defaultStoreFile)

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

	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	fields := regexp.MustCompile(`<input type="hidden" name="([a-z]+)" value="([^"]*)">`)
	action := regexp.MustCompile(`<form method="post" action="([^"]*)">`)
	submit := func(page string, set url.Values) string {
		t.Helper()
		f := url.Values{}
		for _, m := range fields.FindAllStringSubmatch(page, -1) {
			f.Set(m[1], html.UnescapeString(m[2]))
		}
		for k, v := range set {
			f[k] = v
		}
		a := action.FindStringSubmatch(page)
		if a == nil {
			t.Fatalf("no form:\n%s", page)
		}
		resp, err := browser.PostForm(dev.base+html.UnescapeString(a[1]), f)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return string(b)
	}
	verifier := oauth2.GenerateVerifier()
	resp, err = browser.Get(conf.AuthCodeURL("state-of-the-app", oauth2.S256ChallengeOption(verifier)))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	consent := submit(string(b), url.Values{"username": {"user-1001"}, "password": {"a long passphrase for user-1001"}})
	submit(consent, url.Values{"decision": {"allow"}, "grant": {"guide.events"}})
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
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), app.ClientID) {
		t.Fatalf("integrations/test: %d %s", resp.StatusCode, b)
	}
}

package sidecar

import (
	"context"
	"encoding/json"
	"errors"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/guidepub/guidepub/sidecar/oauth"
	"github.com/guidepub/guidepub/sidecar/store"
	"github.com/guidepub/guidepub/site/clock/clocktest"
	"github.com/spf13/afero"
	"golang.org/x/oauth2"
)

// oauthEnv is a real sidecar with the authorization server, on a loopback
// HTTP server, an OAuth app whose redirect URI is a callback server, and an
// owner (alice) with a password.
type oauthEnv struct {
	*env
	http     *httptest.Server
	auth     *oauth.Server
	app      oauth2.Config
	clientID string
	callback *callback
}

const alicePassword = "correct horse battery staple"

// callback is the app's redirect URI: it records what the browser brings.
type callback struct {
	*httptest.Server
	mu   sync.Mutex
	last url.Values
}

func (c *callback) query() url.Values {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last
}

func newOAuthEnv(t testing.TB, dsn string, scopes ...string) *oauthEnv {
	t.Helper()
	return newOAuthEnvWith(t, dsn, nil, scopes...)
}

// newOAuthEnvWith is newOAuthEnv with the authorization server's
// configuration changed by mod (when not nil).
func newOAuthEnvWith(t testing.TB, dsn string, mod func(*oauth.Config), scopes ...string) *oauthEnv {
	t.Helper()
	e := &oauthEnv{env: newEnv(t, dsn, nil)}
	ctx := context.Background()
	ocfg := oauth.DefaultConfig()
	ocfg.Now = e.clock.Now
	ocfg.Logger = slog.New(slog.DiscardHandler)
	if mod != nil {
		mod(&ocfg)
	}
	// The HTTP server's URL is only known once it runs: serve through a
	// handler set below.
	var h http.Handler
	e.http = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	t.Cleanup(e.http.Close)
	ocfg.Issuer = e.http.URL
	var err error
	e.auth, err = oauth.New(ctx, ocfg, e.store)
	if err != nil {
		t.Fatalf("oauth.New: %v", err)
	}
	srv, err := New(Config{PrivateFS: afero.NewOsFs(), PrivateDir: e.dir, Clock: clocktest.NowFunc(e.clock.Now),
		Logger: ocfg.Logger, OAuth: e.auth}, e.store, e.queue, e.events)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	h = srv
	e.callback = &callback{}
	e.callback.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.callback.mu.Lock()
		e.callback.last = r.URL.Query()
		e.callback.mu.Unlock()
		io.WriteString(w, "app callback")
	}))
	t.Cleanup(e.callback.Close)
	if len(scopes) == 0 {
		scopes = []string{"guide.events", "guide.list"}
	}
	e.clientID, err = oauth.NewClientID()
	if err != nil {
		t.Fatal(err)
	}
	secret, hash, err := oauth.NewClientSecret()
	if err != nil {
		t.Fatal(err)
	}
	if err := e.store.CreateApp(ctx, store.App{ClientID: e.clientID, OwnerID: "integrator", Name: "Listing Sync",
		SecretHash: hash, RedirectURIs: []string{e.callback.URL + "/cb"}, Scopes: scopes, CreatedAt: e.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	pw, err := oauth.HashPassword(alicePassword)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.store.SetOwnerPassword(ctx, "alice", pw, e.clock.Now()); err != nil {
		t.Fatal(err)
	}
	e.app = oauth2.Config{
		ClientID: e.clientID, ClientSecret: secret, RedirectURL: e.callback.URL + "/cb",
		Endpoint: oauth2.Endpoint{AuthURL: e.http.URL + oauth.PathAuthorize, TokenURL: e.http.URL + oauth.PathToken,
			AuthStyle: oauth2.AuthStyleInHeader},
		Scopes: []string{"guide.events"},
	}
	return e
}

// browser is a person's browser: it keeps cookies and follows redirects
// until it reaches the app's callback.
type browser struct {
	t      *testing.T
	client *http.Client
}

func newBrowser(t *testing.T) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, client: &http.Client{Jar: jar}}
}

func (b *browser) get(u string) (*http.Response, string) {
	b.t.Helper()
	resp, err := b.client.Get(u)
	if err != nil {
		b.t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

func (b *browser) post(u string, form url.Values) (*http.Response, string) {
	b.t.Helper()
	resp, err := b.client.PostForm(u, form)
	if err != nil {
		b.t.Fatalf("POST %s: %v", u, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

var (
	inputRe  = regexp.MustCompile(`<input type="hidden" name="([a-z]+)" value="([^"]*)">`)
	actionRe = regexp.MustCompile(`<form method="post" action="([^"]*)">`)
)

// form returns a page's hidden fields and its form's action.
func form(t *testing.T, page string) (url.Values, string) {
	t.Helper()
	v := url.Values{}
	for _, m := range inputRe.FindAllStringSubmatch(page, -1) {
		v.Set(m[1], html.UnescapeString(m[2]))
	}
	m := actionRe.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no form in page:\n%s", page)
	}
	return v, html.UnescapeString(m[1])
}

// authorize runs the browser part: sign in (when needed), then consent
// with decision and the granted scopes. It returns the callback's query.
func (e *oauthEnv) authorize(t *testing.T, b *browser, authURL, decision string, grant ...string) url.Values {
	t.Helper()
	resp, page := b.get(authURL)
	if strings.Contains(resp.Request.URL.Path, oauth.PathSignIn) {
		f, action := form(t, page)
		if !strings.Contains(page, `autocomplete="username"`) || !strings.Contains(page, `autocomplete="current-password"`) {
			t.Fatalf("sign-in form lacks autocomplete fields:\n%s", page)
		}
		f.Set("username", "alice")
		f.Set("password", alicePassword)
		resp, page = b.post(e.http.URL+action, f)
	}
	if resp.StatusCode != http.StatusOK || !strings.Contains(page, "Listing Sync") {
		t.Fatalf("consent page: %d\n%s", resp.StatusCode, page)
	}
	f, action := form(t, page)
	f.Set("decision", decision)
	for _, g := range grant {
		f.Add("grant", g)
	}
	resp, page = b.post(e.http.URL+action, f)
	if resp.Request.URL.Host != strings.TrimPrefix(e.callback.URL, "http://") {
		t.Fatalf("after consent the browser is at %s (%d), not the app:\n%s", resp.Request.URL, resp.StatusCode, page)
	}
	return e.callback.query()
}

// grant runs a whole authorization and code exchange and returns the token.
func (e *oauthEnv) grant(t *testing.T, b *browser, grant ...string) *oauth2.Token {
	t.Helper()
	verifier := oauth2.GenerateVerifier()
	q := e.authorize(t, b, e.app.AuthCodeURL("state-1234567890", oauth2.S256ChallengeOption(verifier)), "allow", grant...)
	if q.Get("state") != "state-1234567890" || q.Get("code") == "" {
		t.Fatalf("callback query %v, want the state back and a code", q)
	}
	tok, err := e.app.Exchange(context.Background(), q.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatalf("exchange: %v", err)
	}
	return tok
}

// portal calls the Portal API with an OAuth access token.
func (e *oauthEnv) portal(method, path, token string) (int, string) {
	e.t.Helper()
	req, _ := http.NewRequest(method, e.http.URL+path, nil)
	req.Header.Set(HeaderAppID, e.clientID)
	req.Header.Set(HeaderAppToken, token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

const eventPath = "/api/v1/guides/" + guideReady + "/events/ready/object?taskId=" + workOrder

func wantStatus(t *testing.T, what string, got int, body string, want int) {
	t.Helper()
	if got != want {
		t.Fatalf("%s: status %d, want %d; body %s", what, got, want, body)
	}
}

func wantRFCError(t *testing.T, err error, code string) {
	t.Helper()
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) || re.ErrorCode != code {
		t.Fatalf("error %v, want the RFC error %q", err, code)
	}
}

func TestOAuthFlow(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		e := newOAuthEnv(t, dsn)
		b := newBrowser(t)
		tok := e.grant(t, b, "guide.events")
		if tok.RefreshToken == "" || tok.AccessToken == "" {
			t.Fatalf("token %+v lacks an access or refresh token", tok)
		}

		code, body := e.portal("POST", "/api/v1/integrations/test", tok.AccessToken)
		wantStatus(t, "integrations/test", code, body, 200)
		var it struct {
			AppID string `json:"appId"`
		}
		json.Unmarshal([]byte(body), &it)
		if it.AppID != e.clientID {
			t.Fatalf("integrations/test appId %q, want the client id %q", it.AppID, e.clientID)
		}
		code, body = e.portal("GET", eventPath, tok.AccessToken)
		wantStatus(t, "event object", code, body, 200)
		code, body = e.portal("GET", "/api/v1/guides/"+guideOther+"/events/ready/object?taskId="+workOrder, tok.AccessToken)
		wantStatus(t, "another owner's guide", code, body, 403)

		// Refresh: a new pair; the old access token stops working.
		old := *tok
		tok.Expiry = time.Now().Add(-time.Minute)
		fresh, err := e.app.TokenSource(context.Background(), tok).Token()
		if err != nil {
			t.Fatalf("refresh: %v", err)
		}
		if fresh.RefreshToken == old.RefreshToken || fresh.AccessToken == old.AccessToken {
			t.Fatal("refresh did not rotate both tokens")
		}
		code, body = e.portal("GET", eventPath, old.AccessToken)
		wantStatus(t, "access token before the refresh", code, body, 401)
		code, body = e.portal("GET", eventPath, fresh.AccessToken)
		wantStatus(t, "refreshed access token", code, body, 200)

		// Reusing the spent refresh token revokes the whole grant.
		_, err = e.app.TokenSource(context.Background(), &oauth2.Token{RefreshToken: old.RefreshToken}).Token()
		wantRFCError(t, err, "invalid_grant")
		code, body = e.portal("GET", eventPath, fresh.AccessToken)
		wantStatus(t, "access token of a grant whose refresh token was reused", code, body, 401)
		_, err = e.app.TokenSource(context.Background(), &oauth2.Token{RefreshToken: fresh.RefreshToken}).Token()
		wantRFCError(t, err, "invalid_grant")

		// Revocation (RFC 7009) of an access token.
		tok = e.grant(t, b, "guide.events")
		resp, err := http.PostForm(e.http.URL+oauth.PathRevoke, url.Values{"token": {tok.AccessToken},
			"token_type_hint": {"access_token"}, "client_id": {e.clientID}, "client_secret": {e.app.ClientSecret}})
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("revoke: %v %v", resp, err)
		}
		code, body = e.portal("GET", eventPath, tok.AccessToken)
		wantStatus(t, "revoked access token", code, body, 401)

		// Expiry on the injected clock.
		tok = e.grant(t, b, "guide.events")
		e.clock.Advance(59 * time.Minute)
		code, body = e.portal("GET", eventPath, tok.AccessToken)
		wantStatus(t, "access token at 59 minutes", code, body, 200)
		e.clock.Advance(2 * time.Minute)
		code, body = e.portal("GET", eventPath, tok.AccessToken)
		wantStatus(t, "access token at 61 minutes", code, body, 401)
		var unknown errorBody
		json.Unmarshal([]byte(body), &unknown)
		code, body2 := e.portal("GET", eventPath, "ory_at_unknown.token")
		wantStatus(t, "unknown access token", code, body2, 401)
		if body != body2 {
			t.Fatalf("expired and unknown tokens answer differently:\n%s\n%s", body, body2)
		}

		// Scope not granted: 403.
		tok = e.grant(t, b, "guide.list")
		code, body = e.portal("GET", eventPath, tok.AccessToken)
		wantStatus(t, "token without guide.events", code, body, 403)

		// App revoked: every token of it stops at once.
		tok = e.grant(t, b, "guide.events")
		if err := e.store.RevokeApp(context.Background(), e.clientID, e.clock.Now()); err != nil {
			t.Fatal(err)
		}
		code, body = e.portal("GET", eventPath, tok.AccessToken)
		wantStatus(t, "token of a revoked app", code, body, 401)
	})
}

func TestOAuthFailures(t *testing.T) {
	e := newOAuthEnv(t, storetestSQLite(t))
	b := newBrowser(t)
	ctx := context.Background()

	t.Run("wrong redirect URI is never redirected to", func(t *testing.T) {
		bad := e.app
		bad.RedirectURL = e.callback.URL + "/elsewhere"
		client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := client.Get(bad.AuthCodeURL("state-1234567890", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 400 || resp.Header.Get("Location") != "" {
			t.Fatalf("status %d Location %q, want 400 and no redirect", resp.StatusCode, resp.Header.Get("Location"))
		}
	})

	t.Run("PKCE is required", func(t *testing.T) {
		client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := client.Get(e.app.AuthCodeURL("state-1234567890"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		loc, _ := url.Parse(resp.Header.Get("Location"))
		if resp.StatusCode != 303 && resp.StatusCode != 302 || loc.Query().Get("error") != "invalid_request" || loc.Query().Get("state") != "state-1234567890" {
			t.Fatalf("status %d Location %s, want a redirect with invalid_request and the state", resp.StatusCode, loc)
		}
	})

	t.Run("plain PKCE is refused", func(t *testing.T) {
		client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := client.Get(e.app.AuthCodeURL("state-1234567890",
			oauth2.SetAuthURLParam("code_challenge", strings.Repeat("a", 43)), oauth2.SetAuthURLParam("code_challenge_method", "plain")))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		loc, _ := url.Parse(resp.Header.Get("Location"))
		if loc.Query().Get("error") != "invalid_request" {
			t.Fatalf("Location %s, want invalid_request", loc)
		}
	})

	t.Run("scope beyond the app's", func(t *testing.T) {
		wide := e.app
		wide.Scopes = []string{"guide.events", "guide.billing"}
		client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := client.Get(wide.AuthCodeURL("state-1234567890", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		loc, _ := url.Parse(resp.Header.Get("Location"))
		if loc.Query().Get("error") != "invalid_scope" {
			t.Fatalf("Location %s, want invalid_scope", loc)
		}
	})

	t.Run("owner denies", func(t *testing.T) {
		q := e.authorize(t, b, e.app.AuthCodeURL("state-1234567890", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())), "deny")
		if q.Get("error") != "access_denied" || q.Get("state") != "state-1234567890" || q.Get("code") != "" {
			t.Fatalf("callback %v, want access_denied with the state and no code", q)
		}
	})

	codeFor := func(t *testing.T) (code, verifier string) {
		verifier = oauth2.GenerateVerifier()
		q := e.authorize(t, b, e.app.AuthCodeURL("state-1234567890", oauth2.S256ChallengeOption(verifier)), "allow", "guide.events")
		return q.Get("code"), verifier
	}

	t.Run("missing code_verifier", func(t *testing.T) {
		code, _ := codeFor(t)
		_, err := e.app.Exchange(ctx, code)
		wantRFCError(t, err, "invalid_grant")
	})

	t.Run("wrong code_verifier", func(t *testing.T) {
		code, _ := codeFor(t)
		_, err := e.app.Exchange(ctx, code, oauth2.VerifierOption(oauth2.GenerateVerifier()))
		wantRFCError(t, err, "invalid_grant")
	})

	t.Run("code reused revokes its tokens", func(t *testing.T) {
		code, verifier := codeFor(t)
		tok, err := e.app.Exchange(ctx, code, oauth2.VerifierOption(verifier))
		if err != nil {
			t.Fatal(err)
		}
		_, err = e.app.Exchange(ctx, code, oauth2.VerifierOption(verifier))
		wantRFCError(t, err, "invalid_grant")
		st, body := e.portal("GET", eventPath, tok.AccessToken)
		wantStatus(t, "token from a reused code", st, body, 401)
		_, err = e.app.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
		wantRFCError(t, err, "invalid_grant")
	})

	t.Run("wrong client secret", func(t *testing.T) {
		code, verifier := codeFor(t)
		bad := e.app
		bad.ClientSecret = "gpcs_wrong"
		_, err := bad.Exchange(ctx, code, oauth2.VerifierOption(verifier))
		wantRFCError(t, err, "invalid_client")
	})

	t.Run("consent without the CSRF token", func(t *testing.T) {
		_, page := b.get(e.app.AuthCodeURL("state-1234567890", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())))
		f, action := form(t, page)
		f.Del("csrf")
		f.Set("decision", "allow")
		resp, _ := b.post(e.http.URL+action, f)
		// Refused on the sidecar: the browser was not sent to the app.
		if resp.StatusCode != 403 || resp.Request.URL.Host != strings.TrimPrefix(e.http.URL, "http://") {
			t.Fatalf("status %d at %s, want 403 and no redirect", resp.StatusCode, resp.Request.URL)
		}
	})

	t.Run("sixth wrong password from one browser for one owner is refused unchecked", func(t *testing.T) {
		fresh := newBrowser(t)
		authURL := e.app.AuthCodeURL("state-1234567890", oauth2.S256ChallengeOption(oauth2.GenerateVerifier()))
		_, page := fresh.get(authURL)
		f, action := form(t, page)
		f.Set("username", "alice")
		for i := range 5 {
			f.Set("password", "wrong password number")
			resp, _ := fresh.post(e.http.URL+action, f)
			if resp.StatusCode != 401 {
				t.Fatalf("wrong password %d: status %d, want 401", i+1, resp.StatusCode)
			}
		}
		f.Set("password", alicePassword) // right, but not checked
		resp, page := fresh.post(e.http.URL+action, f)
		if resp.StatusCode != 429 || !strings.Contains(page, "Too many failed sign-ins") {
			t.Fatalf("sixth attempt: status %d, want 429\n%s", resp.StatusCode, page)
		}
		e.clock.Advance(15*time.Minute - time.Second)
		if resp, _ = fresh.post(e.http.URL+action, f); resp.StatusCode != 429 {
			t.Fatalf("within the 15 minutes: status %d, want 429", resp.StatusCode)
		}
		e.clock.Advance(time.Second)
		resp, _ = fresh.post(e.http.URL+action, f)
		if resp.StatusCode != 200 {
			t.Fatalf("15 minutes later: status %d, want the consent page", resp.StatusCode)
		}
	})
}

func TestOAuthMetadata(t *testing.T) {
	e := newOAuthEnv(t, storetestSQLite(t))
	resp, err := http.Get(e.http.URL + oauth.PathMetadata)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var md map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&md); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{
		"issuer": e.http.URL, "authorization_endpoint": e.http.URL + oauth.PathAuthorize,
		"token_endpoint": e.http.URL + oauth.PathToken, "revocation_endpoint": e.http.URL + oauth.PathRevoke,
	} {
		if md[k] != want {
			t.Errorf("%s = %v, want %s", k, md[k], want)
		}
	}
	if m, _ := md["code_challenge_methods_supported"].([]any); len(m) != 1 || m[0] != "S256" {
		t.Errorf("code_challenge_methods_supported = %v, want [S256]", md["code_challenge_methods_supported"])
	}
}

// TestOAuthTwoSidecars: a token issued by one sidecar is accepted by
// another on the same PostgreSQL database, and a refresh on the second
// rotates what the first accepts.
func TestOAuthTwoSidecars(t *testing.T) {
	dsn := backends[1].dsn(t)
	a := newOAuthEnv(t, dsn)
	tok := a.grant(t, newBrowser(t), "guide.events")

	ctx := context.Background()
	logger := slog.New(slog.DiscardHandler)
	st, err := store.Open(ctx, dsn, logger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ocfg := oauth.DefaultConfig()
	ocfg.Now, ocfg.Logger = a.clock.Now, logger
	ocfg.Issuer = "http://127.0.0.1:1" // the second sidecar's own address does not matter here
	auth, err := oauth.New(ctx, ocfg, st)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Config{PrivateFS: afero.NewOsFs(), PrivateDir: a.dir, Clock: clocktest.NowFunc(a.clock.Now), Logger: logger, OAuth: auth},
		st, a.queue, a.events)
	if err != nil {
		t.Fatal(err)
	}
	b := httptest.NewServer(srv)
	t.Cleanup(b.Close)
	call := func(token string) int {
		req, _ := http.NewRequest("GET", b.URL+eventPath, nil)
		req.Header.Set(HeaderAppID, a.clientID)
		req.Header.Set(HeaderAppToken, token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := call(tok.AccessToken); got != 200 {
		t.Fatalf("second sidecar: status %d for the first one's token, want 200", got)
	}
	second := a.app
	second.Endpoint.TokenURL = b.URL + oauth.PathToken
	tok.Expiry = time.Now().Add(-time.Minute)
	fresh, err := second.TokenSource(ctx, tok).Token()
	if err != nil {
		t.Fatalf("refresh on the second sidecar: %v", err)
	}
	if got, _ := a.portal("GET", eventPath, fresh.AccessToken); got != 200 {
		t.Fatalf("first sidecar: status %d for a token refreshed on the second, want 200", got)
	}
	if got, _ := a.portal("GET", eventPath, tok.AccessToken); got != 401 {
		t.Fatalf("first sidecar: status %d for the rotated-out token, want 401", got)
	}
}

// TestOAuthBearer checks that an OAuth access token is also accepted as
// Authorization: Bearer (RFC 6750 §2.1), what standard clients send, with
// or without X-Svc-App-Id, and that golang.org/x/oauth2's own client works
// with the Portal API unchanged.
func TestOAuthBearer(t *testing.T) {
	e := newOAuthEnv(t, storetestSQLite(t))
	b := newBrowser(t)
	tok := e.grant(t, b, "guide.events")
	call := func(hdr ...string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", e.http.URL+eventPath, nil)
		for i := 0; i < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, string(body)
	}
	for _, tc := range []struct {
		name   string
		hdr    []string
		status int
		error  string // the challenge's error attribute
	}{
		{"bearer", []string{"Authorization", "Bearer " + tok.AccessToken}, 200, ""},
		{"scheme in lower case", []string{"Authorization", "bearer " + tok.AccessToken}, 200, ""},
		{"bearer with its client id", []string{"Authorization", "Bearer " + tok.AccessToken, HeaderAppID, e.clientID}, 200, ""},
		{"bearer with another client id", []string{"Authorization", "Bearer " + tok.AccessToken, HeaderAppID, "gpc_00000000000000000000"}, 401, "invalid_token"},
		{"bearer with an API token id", []string{"Authorization", "Bearer " + tok.AccessToken, HeaderAppID, "gpa_0000000000000000"}, 401, "invalid_token"},
		{"unknown bearer token", []string{"Authorization", "Bearer ory_at_unknown.token"}, 401, "invalid_token"},
		{"empty bearer token", []string{"Authorization", "Bearer "}, 401, "invalid_token"},
		{"token twice", []string{"Authorization", "Bearer " + tok.AccessToken, HeaderAppID, e.clientID, HeaderAppToken, tok.AccessToken}, 400, "invalid_request"},
		{"basic is not a token", []string{"Authorization", "Basic " + tok.AccessToken}, 401, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := call(tc.hdr...)
			wantStatus(t, tc.name, resp.StatusCode, body, tc.status)
			ch := resp.Header.Get("WWW-Authenticate")
			want := ""
			if tc.status != 200 {
				want = `Bearer realm="guidepub"`
				if tc.error != "" {
					want += `, error="` + tc.error + `"`
				}
			}
			if ch != want {
				t.Fatalf("WWW-Authenticate %q, want %q", ch, want)
			}
		})
	}

	// x/oauth2's Client sends the token as Authorization: Bearer, and
	// nothing else.
	resp, err := e.app.Client(t.Context(), tok).Post(e.http.URL+"/api/v1/integrations/test", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	wantStatus(t, "x/oauth2 client", resp.StatusCode, string(body), 200)
	if !strings.Contains(string(body), e.clientID) {
		t.Fatalf("integrations/test answered %s, want the client id", body)
	}

	// Revoked: the same 401 as any unknown token.
	if code, _, _ := tokenCall(t, e.http.URL+oauth.PathRevoke, url.Values{"token": {tok.AccessToken}}, e.clientID, e.app.ClientSecret); code != 200 {
		t.Fatalf("revoke: %d", code)
	}
	resp2, body2 := call("Authorization", "Bearer "+tok.AccessToken)
	wantStatus(t, "revoked bearer token", resp2.StatusCode, body2, 401)
}

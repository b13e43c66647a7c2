package openapi_test

import (
	"context"
	"encoding/base64"
	"html"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3filter"
	"golang.org/x/oauth2"

	"github.com/guidepub/guidepub/sidecar/oauth"
	"github.com/guidepub/guidepub/sidecar/store"
)

// The sign-in, consent and error pages are HTML, documented as strings.
func init() { openapi3filter.RegisterBodyDecoder("text/html", openapi3filter.FileBodyDecoder) }

// specOAuthServer is the authorization server of the OpenAPI test's sidecar.
func specOAuthServer(t *testing.T, st *store.Store) *oauth.Server {
	t.Helper()
	cfg := oauth.DefaultConfig()
	cfg.Issuer = "http://127.0.0.1" // only named in the metadata
	cfg.Logger = slog.New(slog.DiscardHandler)
	auth, err := oauth.New(context.Background(), cfg, st)
	if err != nil {
		t.Fatal(err)
	}
	return auth
}

var (
	specHidden = regexp.MustCompile(`<input type="hidden" name="([a-z]+)" value="([^"]*)">`)
	specAction = regexp.MustCompile(`<form method="post" action="([^"]*)">`)
)

// specForm returns a page's hidden fields and form action.
func specForm(t *testing.T, page []byte) (url.Values, string) {
	t.Helper()
	f := url.Values{}
	for _, m := range specHidden.FindAllStringSubmatch(string(page), -1) {
		f.Set(m[1], html.UnescapeString(m[2]))
	}
	a := specAction.FindStringSubmatch(string(page))
	if a == nil {
		t.Fatalf("no form in %s", specTruncate(page))
	}
	return f, html.UnescapeString(a[1])
}

// specOAuth calls every documented operation of the authorization server
// and each documented status, with a browser that keeps cookies and does
// not follow redirects.
func specOAuth(t *testing.T, c *specChecker, base string, st *store.Store) {
	ctx := context.Background()
	redirect := "http://127.0.0.1:9/callback" // never followed
	clientID, _ := oauth.NewClientID()
	secret, hash, _ := oauth.NewClientSecret()
	if err := st.CreateApp(ctx, store.App{ClientID: clientID, OwnerID: "integrator", Name: "Spec App", SecretHash: hash,
		RedirectURIs: []string{redirect}, Scopes: []string{"guide.events"}, CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	pw, _ := oauth.HashPassword("spec owner's password")
	if err := st.SetOwnerPassword(ctx, "spec-owner", pw, time.Now()); err != nil {
		t.Fatal(err)
	}
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	app := oauth2.Config{ClientID: clientID, ClientSecret: secret, RedirectURL: redirect, Scopes: []string{"guide.events"},
		Endpoint: oauth2.Endpoint{AuthURL: base + oauth.PathAuthorize, TokenURL: base + oauth.PathToken}}
	verifier := oauth2.GenerateVerifier()
	authURL := app.AuthCodeURL("spec-state-123", oauth2.S256ChallengeOption(verifier))

	c.do(t, specCall{method: "GET", url: base + oauth.PathMetadata, want: 200, validReq: true})
	c.do(t, specCall{method: "GET", url: base + oauth.PathAuthorize + "?response_type=code&client_id=gpc_nosuchclient&code_challenge=x&code_challenge_method=S256", want: 401})
	bad := app
	bad.RedirectURL = "http://127.0.0.1:9/elsewhere"
	c.do(t, specCall{method: "GET", url: bad.AuthCodeURL("spec-state-123", oauth2.S256ChallengeOption(verifier)), want: 400})
	_, resp := c.do(t, specCall{method: "GET", url: authURL, client: browser, want: 303, validReq: true})
	signIn := base + resp.Header.Get("Location")
	page, _ := c.do(t, specCall{method: "GET", url: signIn, client: browser, want: 200, validReq: true})
	c.do(t, specCall{method: "GET", url: base + oauth.PathSignIn + "?next=https://evil.example/", client: browser, want: 400})
	f, action := specForm(t, page)
	f.Set("username", "spec-owner")
	f.Set("password", "spec owner's password")
	c.do(t, specCall{method: "POST", url: base + action, form: url.Values{"username": f["username"], "password": f["password"], "next": f["next"]}, client: browser, want: 403})
	next := f.Get("next")
	f.Set("next", "https://evil.example/")
	c.do(t, specCall{method: "POST", url: base + action, form: f, client: browser, want: 400})
	f.Set("next", next)
	c.do(t, specCall{method: "POST", url: base + action, form: f, client: browser, want: 303})

	consent, _ := c.do(t, specCall{method: "GET", url: authURL, client: browser, want: 200})
	cf, consentAction := specForm(t, consent)
	c.do(t, specCall{method: "POST", url: base + consentAction, form: url.Values{"decision": {"allow"}}, client: browser, want: 403})
	badConsent := cf
	c.do(t, specCall{method: "POST", url: bad.AuthCodeURL("spec-state-123", oauth2.S256ChallengeOption(verifier)),
		form: url.Values{"decision": {"allow"}, "csrf": badConsent["csrf"]}, client: browser, want: 400})
	cf.Set("decision", "allow")
	cf.Add("grant", "guide.events")
	_, resp = c.do(t, specCall{method: "POST", url: base + consentAction, form: cf, client: browser, want: 303})
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || loc.Query().Get("code") == "" {
		t.Fatalf("consent sent the browser to %q, want the app with a code", resp.Header.Get("Location"))
	}
	code := loc.Query().Get("code")

	exchange := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirect},
		"code_verifier": {verifier}, "client_id": {clientID}, "client_secret": {secret}}
	wrong := url.Values{}
	for k, v := range exchange {
		wrong[k] = v
	}
	wrong.Set("client_secret", "gpcs_wrong")
	c.do(t, specCall{method: "POST", url: base + oauth.PathToken, form: wrong, want: 401})
	body, _ := c.do(t, specCall{method: "POST", url: base + oauth.PathToken, form: exchange, want: 200, validReq: true})
	// The access token as a bearer token (RFC 6750), alone.
	if at := regexp.MustCompile(`"access_token":"([^"]+)"`).FindSubmatch(body); at != nil {
		c.do(t, specCall{method: "POST", url: base + "/api/v1/integrations/test", header: http.Header{"Authorization": {"Bearer " + string(at[1])}}, want: 200, validReq: true})
		c.do(t, specCall{method: "POST", url: base + "/api/v1/integrations/test", header: http.Header{"Authorization": {"Bearer ory_at_x.y"}}, want: 401})
	} else {
		t.Fatalf("no access token in %s", body)
	}
	c.do(t, specCall{method: "POST", url: base + oauth.PathToken, form: exchange, want: 400}) // the code again
	tok := regexp.MustCompile(`"refresh_token":"([^"]+)"`).FindSubmatch(body)
	if tok == nil {
		t.Fatalf("no refresh token in %s", body)
	}
	c.do(t, specCall{method: "POST", url: base + oauth.PathToken, form: url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"ory_rt_x.y"}}, want: 401}) // no client authentication
	revoke := url.Values{"token": {string(tok[1])}, "client_id": {clientID}, "client_secret": {secret}}
	basic := http.Header{"Authorization": {"Basic " + base64.StdEncoding.EncodeToString([]byte(clientID+":"+secret))}}
	c.do(t, specCall{method: "POST", url: base + oauth.PathRevoke, form: url.Values{}, header: basic, want: 400}) // no token
	c.do(t, specCall{method: "POST", url: base + oauth.PathRevoke, form: url.Values{"token": revoke["token"], "client_id": {clientID}, "client_secret": {"gpcs_wrong"}}, want: 401})
	c.do(t, specCall{method: "POST", url: base + oauth.PathRevoke, form: revoke, want: 200, validReq: true})

	// Last, as it blocks this address: five wrong passwords, then a refusal.
	f.Set("password", "not the password")
	for range 5 {
		c.do(t, specCall{method: "POST", url: base + action, form: f, client: browser, want: 401})
	}
	c.do(t, specCall{method: "POST", url: base + action, form: f, client: browser, want: 429})
}

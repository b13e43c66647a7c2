package sidecar

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/guidepub/guidepub/sidecar/oauth"
	"github.com/guidepub/guidepub/sidecar/store"
	"golang.org/x/oauth2"
)

// noRedirect is a client that shows redirects instead of following them.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// tokenCall posts form to an endpoint, with Basic credentials when user is
// set, and returns the status, the headers and the JSON error code.
func tokenCall(t *testing.T, endpoint string, form url.Values, user, pass string) (int, http.Header, string) {
	t.Helper()
	code, hdr, errCode, _ := tokenError(t, endpoint, form, user, pass)
	return code, hdr, errCode
}

// TestOAuthStrictDeviations pins what a strict client (RFC 6749, 7009,
// RFC 9700) expects where fosite's defaults differ.
func TestOAuthStrictDeviations(t *testing.T) {
	e := newOAuthEnv(t, storetestSQLite(t))
	b := newBrowser(t)

	t.Run("state is optional and comes back exactly when sent", func(t *testing.T) {
		for _, state := range []string{"", "s", "short"} {
			verifier := oauth2.GenerateVerifier()
			u := e.app.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier))
			if state == "" {
				u = strings.Replace(u, "&state=", "", 1)
			}
			q := e.authorize(t, b, u, "allow", "guide.events")
			if q.Get("code") == "" || q.Get("error") != "" {
				t.Fatalf("state %q: callback %v, want a code", state, q)
			}
			if _, sent := q["state"]; sent != (state != "") || q.Get("state") != state {
				t.Fatalf("state %q: callback %v, want the state back exactly when it was sent", state, q)
			}
			if _, err := e.app.Exchange(t.Context(), q.Get("code"), oauth2.VerifierOption(verifier)); err != nil {
				t.Fatalf("state %q: exchange: %v", state, err)
			}
			q = e.authorize(t, b, u, "deny")
			if _, sent := q["state"]; q.Get("error") != "access_denied" || sent != (state != "") || q.Get("state") != state {
				t.Fatalf("state %q, denied: callback %v, want access_denied and the state back exactly when sent", state, q)
			}
		}
	})

	t.Run("unsupported grant types", func(t *testing.T) {
		for _, gt := range []string{"client_credentials", "password", "foo", "urn:ietf:params:oauth:grant-type:device_code"} {
			code, _, errCode := tokenCall(t, e.http.URL+oauth.PathToken,
				url.Values{"grant_type": {gt}, "username": {"alice"}, "password": {alicePassword}}, e.clientID, e.app.ClientSecret)
			if code != 400 || errCode != "unsupported_grant_type" {
				t.Errorf("grant_type=%s: %d %q, want 400 unsupported_grant_type", gt, code, errCode)
			}
		}
	})

	t.Run("invalid_client after Basic authentication carries WWW-Authenticate", func(t *testing.T) {
		for _, ep := range []struct {
			path string
			form url.Values
		}{
			{oauth.PathToken, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"ory_rt_x.y"}}},
			{oauth.PathRevoke, url.Values{"token": {"ory_rt_x.y"}}},
		} {
			code, hdr, errCode := tokenCall(t, e.http.URL+ep.path, ep.form, e.clientID, "gpcs_wrong")
			if code != 401 || errCode != "invalid_client" || !strings.HasPrefix(hdr.Get("WWW-Authenticate"), "Basic ") {
				t.Errorf("%s with a wrong secret: %d %q WWW-Authenticate %q, want 401 invalid_client with a Basic challenge",
					ep.path, code, errCode, hdr.Get("WWW-Authenticate"))
			}
		}
	})

	t.Run("revocation without token", func(t *testing.T) {
		code, _, errCode := tokenCall(t, e.http.URL+oauth.PathRevoke, url.Values{"token_type_hint": {"access_token"}}, e.clientID, e.app.ClientSecret)
		if code != 400 || errCode != "invalid_request" {
			t.Fatalf("revoke without token: %d %q, want 400 invalid_request", code, errCode)
		}
	})

	t.Run("response_mode other than query", func(t *testing.T) {
		for _, mode := range []string{"form_post", "fragment"} {
			u := e.app.AuthCodeURL("state-1234567890", oauth2.S256ChallengeOption(oauth2.GenerateVerifier()),
				oauth2.SetAuthURLParam("response_mode", mode))
			resp, err := noRedirect.Get(u)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			loc, _ := url.Parse(resp.Header.Get("Location"))
			if resp.StatusCode != 303 || loc == nil || loc.Query().Get("error") != "invalid_request" ||
				loc.Query().Get("state") != "state-1234567890" || loc.Fragment != "" || strings.Contains(string(body), "<form") {
				t.Fatalf("response_mode=%s: %d Location %q\n%s\nwant a 303 to the redirect URI with invalid_request in the query",
					mode, resp.StatusCode, resp.Header.Get("Location"), body)
			}
		}
	})
}

// tokenError posts form to an endpoint (with Basic credentials when user
// is set) and returns the status, the headers and the JSON error.
func tokenError(t *testing.T, endpoint string, form url.Values, user, pass string) (int, http.Header, string, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", endpoint, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if user != "" {
		req.SetBasicAuth(url.QueryEscape(user), url.QueryEscape(pass))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e struct {
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	body, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(body, &e); err != nil && resp.StatusCode != 200 {
		t.Fatalf("%s answered %d %q, not a JSON error", endpoint, resp.StatusCode, body)
	}
	return resp.StatusCode, resp.Header, e.Error, e.Description
}

// TestOAuthErrorDescriptions: where fosite's error_description names
// another cause than the real one, guidepub's says what happened.
func TestOAuthErrorDescriptions(t *testing.T) {
	e := newOAuthEnv(t, storetestSQLite(t))
	b := newBrowser(t)
	token, revoke := e.http.URL+oauth.PathToken, e.http.URL+oauth.PathRevoke
	for _, tc := range []struct {
		name        string
		endpoint    string
		form        func() url.Values
		status      int
		code        string
		want, never string // in the description, and never in it
	}{
		{"a revoked refresh token", token, func() url.Values {
			tok := e.grant(t, b, "guide.events")
			if code, _, _, _ := tokenError(t, revoke, url.Values{"token": {tok.RefreshToken}}, e.clientID, e.app.ClientSecret); code != 200 {
				t.Fatalf("revoke: %d", code)
			}
			return url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}}
		}, 400, "invalid_grant", "revoked", "was already used"},
		{"no code_verifier", token, func() url.Values {
			q := e.authorize(t, b, e.app.AuthCodeURL("state-1234567890", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())), "allow", "guide.events")
			return url.Values{"grant_type": {"authorization_code"}, "code": {q.Get("code")}, "redirect_uri": {e.app.RedirectURL}}
		}, 400, "invalid_grant", "code_verifier is missing", "43 characters"},
		{"revocation without token", revoke, func() url.Values { return url.Values{"token_type_hint": {"access_token"}} },
			400, "invalid_request", "token parameter is missing", "redirect_uri"},
		{"revocation with an empty body", revoke, func() url.Values { return url.Values{} },
			400, "invalid_request", "token parameter is missing", "redirect_uri"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, _, code, desc := tokenError(t, tc.endpoint, tc.form(), e.clientID, e.app.ClientSecret)
			if status != tc.status || code != tc.code || !strings.Contains(desc, tc.want) || strings.Contains(desc, tc.never) {
				t.Fatalf("%d %s %q; want %d %s saying %q, never %q", status, code, desc, tc.status, tc.code, tc.want, tc.never)
			}
		})
	}

	// RFC 6749 §5.2: a request without client authentication is
	// invalid_client (401), with a challenge (RFC 9110 §15.5.2).
	for _, ep := range []struct {
		path string
		form url.Values
	}{
		{oauth.PathToken, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"ory_rt_x.y"}}},
		{oauth.PathRevoke, url.Values{"token": {"ory_rt_x.y"}}},
	} {
		status, hdr, code, desc := tokenError(t, e.http.URL+ep.path, ep.form, "", "")
		if status != 401 || code != "invalid_client" || !strings.HasPrefix(hdr.Get("WWW-Authenticate"), "Basic ") {
			t.Errorf("%s without client credentials: %d %s %q WWW-Authenticate %q, want 401 invalid_client with a Basic challenge",
				ep.path, status, code, desc, hdr.Get("WWW-Authenticate"))
		}
	}
}

// TestOAuthRevokeAccessRevokesRefresh: revoking an access token revokes
// its grant's refresh token too (RFC 7009 §2.1 allows it), as
// docs/oauth.md says; revoking a refresh token revokes its access tokens.
func TestOAuthRevokeAccessRevokesRefresh(t *testing.T) {
	e := newOAuthEnv(t, storetestSQLite(t))
	b := newBrowser(t)
	for _, revoked := range []string{"access_token", "refresh_token"} {
		tok := e.grant(t, b, "guide.events")
		value := map[string]string{"access_token": tok.AccessToken, "refresh_token": tok.RefreshToken}[revoked]
		if code, _, _, _ := tokenError(t, e.http.URL+oauth.PathRevoke, url.Values{"token": {value}}, e.clientID, e.app.ClientSecret); code != 200 {
			t.Fatalf("revoke the %s: %d", revoked, code)
		}
		code, body := e.portal("GET", eventPath, tok.AccessToken)
		wantStatus(t, "access token after revoking the "+revoked, code, body, 401)
		status, _, errCode, _ := tokenError(t, e.http.URL+oauth.PathToken,
			url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}}, e.clientID, e.app.ClientSecret)
		if status != 400 || errCode != "invalid_grant" {
			t.Fatalf("refresh after revoking the %s: %d %s, want 400 invalid_grant", revoked, status, errCode)
		}
	}
}

// authorizeRedirect sends an authorization request without following
// redirects and returns the status, the Location's query (nil without
// one) and the body.
func authorizeRedirect(t *testing.T, u string) (int, url.Values, string) {
	t.Helper()
	resp, err := noRedirect.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.Header.Get("Location") == "" {
		return resp.StatusCode, nil, string(body)
	}
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, loc.Query(), string(body)
}

// TestOAuthCodeChallengeShape: an S256 code_challenge is the base64url
// SHA-256 of the verifier, 43 characters of the unreserved set (RFC 7636
// §4.1, §4.2); any other is invalid_request, before sign-in and at the
// consent, and no code is issued for it.
func TestOAuthCodeChallengeShape(t *testing.T) {
	e := newOAuthEnv(t, storetestSQLite(t))
	challenge := func(c string) string {
		return e.app.AuthCodeURL("state-1234567890", oauth2.SetAuthURLParam("code_challenge", c),
			oauth2.SetAuthURLParam("code_challenge_method", "S256"))
	}
	for _, c := range []string{"short", strings.Repeat("a", 42), strings.Repeat("a", 44), strings.Repeat("a", 128),
		strings.Repeat("a", 42) + "+", strings.Repeat("a", 42) + "=", strings.Repeat("a", 42) + "~", strings.Repeat("a", 42) + " "} {
		status, q, body := authorizeRedirect(t, challenge(c))
		if status != 303 || q.Get("error") != "invalid_request" || q.Get("state") != "state-1234567890" || q.Get("code") != "" {
			t.Errorf("code_challenge %q: %d %v\n%s\nwant a 303 to the app with invalid_request", c, status, q, body)
		}
	}

	// The consent form posts the authorization request again: a challenge
	// changed on the way is refused there too.
	b := newBrowser(t)
	resp, page := b.get(e.app.AuthCodeURL("state-1234567890", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())))
	if strings.Contains(resp.Request.URL.Path, oauth.PathSignIn) {
		f, action := form(t, page)
		f.Set("username", "alice")
		f.Set("password", alicePassword)
		_, page = b.post(e.http.URL+action, f)
	}
	f, action := form(t, page)
	f.Set("decision", "allow")
	f.Add("grant", "guide.events")
	u, _ := url.Parse(e.http.URL + action)
	q := u.Query()
	q.Set("code_challenge", "short")
	u.RawQuery = q.Encode()
	b.post(u.String(), f)
	if got := e.callback.query(); got.Get("error") != "invalid_request" || got.Get("code") != "" {
		t.Fatalf("consent with code_challenge=short: callback %v, want invalid_request and no code", got)
	}
}

// TestOAuthRepeatedParameters: a parameter sent twice is invalid_request
// at the authorization endpoint (RFC 6749 §3.1), the token endpoint
// (§3.2) and the revocation endpoint (RFC 7009 §2.1, which takes §3.2's
// rules); a repeated client_id or redirect_uri is answered on a page,
// never by a redirect (§4.1.2.1).
func TestOAuthRepeatedParameters(t *testing.T) {
	e := newOAuthEnv(t, storetestSQLite(t))
	b := newBrowser(t)
	verifier := oauth2.GenerateVerifier()
	valid := e.app.AuthCodeURL("state-1234567890", oauth2.S256ChallengeOption(verifier))
	for _, tc := range []struct {
		param, value string
		page         bool // answered on a page, not redirected
	}{
		{"client_id", e.clientID, true},
		{"client_id", "gpc_00000000000000000000", true},
		{"redirect_uri", e.app.RedirectURL, true},
		{"scope", "guide.events", false},
		{"response_type", "code", false},
		{"code_challenge", oauth2.S256ChallengeFromVerifier(verifier), false},
		{"state", "state-1234567890", false},
	} {
		status, q, body := authorizeRedirect(t, valid+"&"+tc.param+"="+url.QueryEscape(tc.value))
		switch {
		case tc.page && (status != 400 || q != nil):
			t.Errorf("%s twice: %d %v, want 400 on a page, no redirect\n%s", tc.param, status, q, body)
		case !tc.page && (status != 303 || q.Get("error") != "invalid_request" || q.Get("code") != ""):
			t.Errorf("%s twice: %d %v, want a 303 to the app with invalid_request\n%s", tc.param, status, q, body)
		}
	}

	code := func() string {
		q := e.authorize(t, b, valid, "allow", "guide.events")
		if q.Get("code") == "" {
			t.Fatalf("callback %v, want a code", q)
		}
		return q.Get("code")
	}
	exchange := url.Values{"grant_type": {"authorization_code"}, "redirect_uri": {e.app.RedirectURL},
		"code_verifier": {verifier}, "client_id": {e.clientID}, "client_secret": {e.app.ClientSecret}}
	for _, param := range []string{"client_id", "grant_type", "code_verifier", "code"} {
		form := url.Values{}
		for k, v := range exchange {
			form[k] = append([]string(nil), v...)
		}
		form.Set("code", code())
		form.Add(param, form.Get(param))
		status, _, errCode := tokenCall(t, e.http.URL+oauth.PathToken, form, "", "")
		if status != 400 || errCode != "invalid_request" {
			t.Errorf("token request with %s twice: %d %q, want 400 invalid_request", param, status, errCode)
		}
	}
	tok := e.grant(t, b, "guide.events")
	status, _, errCode := tokenCall(t, e.http.URL+oauth.PathRevoke,
		url.Values{"token": {tok.RefreshToken, tok.RefreshToken}}, e.clientID, e.app.ClientSecret)
	if status != 400 || errCode != "invalid_request" {
		t.Errorf("revocation with token twice: %d %q, want 400 invalid_request", status, errCode)
	}
}

// newPublicApp registers a public app (no secret) with e's redirect URI
// and returns its client, which authenticates with client_id alone.
func newPublicApp(t *testing.T, e *oauthEnv) oauth2.Config {
	t.Helper()
	id, err := oauth.NewClientID()
	if err != nil {
		t.Fatal(err)
	}
	if err := e.store.CreateApp(t.Context(), store.App{ClientID: id, OwnerID: "integrator", Name: "Listing Sync",
		RedirectURIs: []string{e.app.RedirectURL}, Scopes: []string{"guide.events"}, CreatedAt: e.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	app := e.app
	app.ClientID, app.ClientSecret = id, ""
	app.Endpoint.AuthStyle = oauth2.AuthStyleInParams
	return app
}

// TestOAuthPublicClientSecret: a public app has no secret, so one that
// presents a secret (in HTTP Basic or in the form) is refused like a
// confidential app's wrong secret: 401 invalid_client with a Basic
// challenge (RFC 6749 §2.3.1, §5.2). Without a secret it gets tokens.
func TestOAuthPublicClientSecret(t *testing.T) {
	e := newOAuthEnv(t, storetestSQLite(t))
	b := newBrowser(t)
	pub := newPublicApp(t, e)
	code := func() (string, string) {
		verifier := oauth2.GenerateVerifier()
		q := e.authorize(t, b, pub.AuthCodeURL("state-1234567890", oauth2.S256ChallengeOption(verifier)), "allow", "guide.events")
		if q.Get("code") == "" {
			t.Fatalf("callback %v, want a code", q)
		}
		return q.Get("code"), verifier
	}
	exchange := func(c, verifier string) url.Values {
		return url.Values{"grant_type": {"authorization_code"}, "code": {c}, "redirect_uri": {pub.RedirectURL}, "code_verifier": {verifier}}
	}
	for _, tc := range []struct {
		name       string
		user, pass string // HTTP Basic, when user is set
		form       url.Values
	}{
		{"a made-up secret in HTTP Basic", pub.ClientID, "gpcs_madeup", nil},
		{"a made-up secret in the form", "", "", url.Values{"client_id": {pub.ClientID}, "client_secret": {"gpcs_madeup"}}},
	} {
		c, verifier := code()
		form := exchange(c, verifier)
		for k, v := range tc.form {
			form[k] = v
		}
		status, hdr, errCode := tokenCall(t, e.http.URL+oauth.PathToken, form, tc.user, tc.pass)
		if status != 401 || errCode != "invalid_client" || !strings.HasPrefix(hdr.Get("WWW-Authenticate"), "Basic ") {
			t.Errorf("token request with %s: %d %q WWW-Authenticate %q, want 401 invalid_client with a Basic challenge",
				tc.name, status, errCode, hdr.Get("WWW-Authenticate"))
		}
	}
	c, verifier := code()
	tok, err := pub.Exchange(t.Context(), c, oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatalf("exchange with client_id alone: %v", err)
	}
	status, hdr, errCode := tokenCall(t, e.http.URL+oauth.PathRevoke, url.Values{"token": {tok.RefreshToken}}, pub.ClientID, "gpcs_madeup")
	if status != 401 || errCode != "invalid_client" || !strings.HasPrefix(hdr.Get("WWW-Authenticate"), "Basic ") {
		t.Errorf("revocation with a made-up secret in HTTP Basic: %d %q WWW-Authenticate %q, want 401 invalid_client with a Basic challenge",
			status, errCode, hdr.Get("WWW-Authenticate"))
	}
	if status, _, errCode := tokenCall(t, e.http.URL+oauth.PathRevoke,
		url.Values{"token": {tok.RefreshToken}, "client_id": {pub.ClientID}}, "", ""); status != 200 {
		t.Errorf("revocation with client_id alone: %d %q, want 200", status, errCode)
	}
}

// TestOAuthOneClientAuthentication: a confidential app that
// authenticates twice in one token request, HTTP Basic and client_secret
// in the form (both right), is refused with invalid_request (RFC 6749
// §2.3: one method per request; §5.2); each method alone gets tokens.
func TestOAuthOneClientAuthentication(t *testing.T) {
	e := newOAuthEnv(t, storetestSQLite(t))
	b := newBrowser(t)
	code := func() (string, string) {
		verifier := oauth2.GenerateVerifier()
		q := e.authorize(t, b, e.app.AuthCodeURL("state-1234567890", oauth2.S256ChallengeOption(verifier)), "allow", "guide.events")
		if q.Get("code") == "" {
			t.Fatalf("callback %v, want a code", q)
		}
		return q.Get("code"), verifier
	}
	exchange := func(c, verifier string) url.Values {
		return url.Values{"grant_type": {"authorization_code"}, "code": {c}, "redirect_uri": {e.app.RedirectURL}, "code_verifier": {verifier}}
	}
	c, verifier := code()
	form := exchange(c, verifier)
	form.Set("client_id", e.app.ClientID)
	form.Set("client_secret", e.app.ClientSecret)
	if status, _, errCode := tokenCall(t, e.http.URL+oauth.PathToken, form, e.app.ClientID, e.app.ClientSecret); status != 400 || errCode != "invalid_request" {
		t.Errorf("token request authenticated twice: %d %q, want 400 invalid_request", status, errCode)
	}
	for _, basic := range []bool{true, false} {
		c, verifier := code()
		form, user, pass := exchange(c, verifier), "", ""
		if basic {
			user, pass = e.app.ClientID, e.app.ClientSecret
		} else {
			form.Set("client_id", e.app.ClientID)
			form.Set("client_secret", e.app.ClientSecret)
		}
		if status, _, errCode := tokenCall(t, e.http.URL+oauth.PathToken, form, user, pass); status != 200 {
			t.Errorf("token request with HTTP Basic %v alone: %d %q, want 200", basic, status, errCode)
		}
	}
}

// TestOAuthInsufficientScope: a bearer token without the scope a request
// needs is answered 403 with the RFC 6750 §3.1 challenge naming the scope;
// the same token in X-Svc-App-Token gets the 403 without a challenge (no
// Bearer scheme was used), as does a bearer token for another owner's
// guide (its scopes are not what is missing).
func TestOAuthInsufficientScope(t *testing.T) {
	e := newOAuthEnv(t, storetestSQLite(t))
	b := newBrowser(t)
	list := e.grant(t, b, "guide.list")
	events := e.grant(t, b, "guide.events")
	call := func(token string, bearer bool, path string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", e.http.URL+path, nil)
		if bearer {
			req.Header.Set("Authorization", "Bearer "+token)
		} else {
			req.Header.Set(HeaderAppID, e.clientID)
			req.Header.Set(HeaderAppToken, token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("WWW-Authenticate")
	}
	other := "/api/v1/guides/" + guideOther + "/events/ready/object?taskId=" + workOrder
	for _, tc := range []struct {
		name      string
		token     string
		bearer    bool
		path      string
		challenge string
	}{
		{"bearer without guide.events", list.AccessToken, true, eventPath,
			`Bearer realm="guidepub", error="insufficient_scope", scope="guide.events"`},
		{"header token without guide.events", list.AccessToken, false, eventPath, ""},
		{"bearer for another owner's guide", events.AccessToken, true, other, ""},
	} {
		status, ch := call(tc.token, tc.bearer, tc.path)
		if status != 403 || ch != tc.challenge {
			t.Errorf("%s: %d WWW-Authenticate %q, want 403 with %q", tc.name, status, ch, tc.challenge)
		}
	}
}

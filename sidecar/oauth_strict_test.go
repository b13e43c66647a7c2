package sidecar

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/guidepub/guidepub/sidecar/oauth"
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

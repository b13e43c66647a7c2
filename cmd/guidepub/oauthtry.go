package main

import (
	"crypto/rand"
	"fmt"
	"io"
	"strings"

	"golang.org/x/oauth2"

	"github.com/guidepub/guidepub/sidecar/oauth"
)

// oauthTry is a ready-to-paste run of the authorization code grant for one
// app: an authorize URL with a fresh PKCE pair and state, and the curl
// commands that exchange the code and call the Portal API with the access
// token. "app create" and dev print it (docs/oauth.md walks it).
type oauthTry struct {
	base         string // the sidecar's base URL, without a trailing /
	clientID     string
	clientSecret string // "" for a public app
	redirectURI  string
	scopes       []string
	verifier     string // PKCE code_verifier; the URL carries its S256 challenge
	state        string
}

// newOAuthTry returns a try of the app with a fresh PKCE verifier and
// state (golang.org/x/oauth2 makes the verifier, as an app would).
func newOAuthTry(base, clientID, clientSecret, redirectURI string, scopes []string) oauthTry {
	return oauthTry{
		base: strings.TrimRight(base, "/"), clientID: clientID, clientSecret: clientSecret,
		redirectURI: redirectURI, scopes: scopes,
		verifier: oauth2.GenerateVerifier(), state: rand.Text()[:12],
	}
}

// authorizeURL is where the app sends the owner's browser.
func (t oauthTry) authorizeURL() string {
	conf := oauth2.Config{ClientID: t.clientID, RedirectURL: t.redirectURI, Scopes: t.scopes,
		Endpoint: oauth2.Endpoint{AuthURL: t.base + oauth.PathAuthorize}}
	return conf.AuthCodeURL(t.state, oauth2.S256ChallengeOption(t.verifier))
}

// exchangeCommand is the curl that trades code for tokens; code "" stands
// as "$CODE", for the reader to set.
func (t oauthTry) exchangeCommand(code string) string {
	if code == "" {
		code = "$CODE"
	}
	client := "-d client_id=" + t.clientID
	if t.clientSecret != "" {
		client = "-u '" + t.clientID + ":" + t.clientSecret + "'"
	}
	return fmt.Sprintf(`curl -s %s -d grant_type=authorization_code -d "code=%s" --data-urlencode 'redirect_uri=%s' -d code_verifier=%s %s%s`,
		client, code, t.redirectURI, t.verifier, t.base, oauth.PathToken)
}

// apiCommand is the curl that calls the Portal API with "$ACCESS_TOKEN".
func (t oauthTry) apiCommand() string {
	return fmt.Sprintf(`curl -s -X POST -H 'X-Svc-App-Id: %s' -H "X-Svc-App-Token: $ACCESS_TOKEN" %s/api/v1/integrations/test`,
		t.clientID, t.base)
}

// print writes the three steps, each line after indent. signIn says whom
// to sign in as; landing says what the browser shows after Allow.
func (t oauthTry) print(w io.Writer, indent, signIn, landing string) {
	p := func(format string, a ...any) { fmt.Fprintf(w, indent+format+"\n", a...) }
	p("1. Open this URL in a browser, sign in as %s and press Allow:", signIn)
	p("     %s", t.authorizeURL())
	p("2. %s", landing)
	p("   Set CODE to it and exchange it for tokens (within 10 minutes; a code works once):")
	p("     CODE=ory_ac_…")
	p("     %s", t.exchangeCommand(""))
	p("3. Set ACCESS_TOKEN to the answer's access_token and call the Portal API:")
	p("     ACCESS_TOKEN=ory_at_…")
	p("     %s", t.apiCommand())
}

// oauthCurlScriptPath is the path, from the repository's root, of the script
// that plays the grant with curl alone (docs/oauth.md).
const oauthCurlScriptPath = "docs/oauth-curl.sh"

// scriptCommand is the command that runs the whole grant with curl alone,
// signing in as owner with password (password "" stands as "$PASSWORD",
// for the reader to set).
func (t oauthTry) scriptCommand(owner, password string) string {
	pw := `"$PASSWORD"`
	if password != "" {
		pw = shellQuote(password)
	}
	secret := ""
	if t.clientSecret != "" {
		secret = " CLIENT_SECRET=" + shellQuote(t.clientSecret)
	}
	return fmt.Sprintf("AUTHORIZE_URL=%s VERIFIER=%s%s OWNER=%s PASSWORD=%s sh %s",
		shellQuote(t.authorizeURL()), t.verifier, secret, shellQuote(owner), pw, oauthCurlScriptPath)
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

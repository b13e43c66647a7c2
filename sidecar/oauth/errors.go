package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"

	"github.com/ory/fosite"
)

// guidepub's own error descriptions, where fosite's name another cause
// than the real one (docs/oauth.md#errors).
const (
	descRefreshInactive = "The refresh token is no longer valid: it was revoked, or already used " +
		"(each refresh spends the refresh token it uses), or its app was revoked."
	descNoVerifier = "The code_verifier is missing: every authorization code is redeemed with the PKCE " +
		"code_verifier whose challenge was sent to the authorization endpoint (RFC 7636)."
	descNoToken  = "The token parameter is missing (RFC 7009 section 2.1)."
	descNoClient = "The client did not authenticate: send the client id and secret with HTTP Basic, " +
		"or client_id (and client_secret) in the form."
)

// errNoClient answers a token or revocation request without client
// authentication (RFC 6749 §5.2: invalid_client, 401); fosite calls it
// invalid_request.
var errNoClient = withDescription(fosite.ErrInvalidClient, descNoClient)

// errNoToken answers a revocation request without token (RFC 7009 §2.1
// makes it required; fosite would answer 200).
var errNoToken = withDescription(fosite.ErrInvalidRequest, descNoToken)

// withDescription returns err's RFC 6749 error with description d in
// place of fosite's description and hint, wrapping err.
func withDescription(err error, d string) *fosite.RFC6749Error {
	e := *fosite.ErrorToRFC6749Error(err)
	e.DescriptionField, e.HintField = d, ""
	return e.WithWrap(err)
}

// publicClientsWithoutSecret is fosite's client authentication, which
// for a public client (one without a secret) checks no secret at all, so
// that any secret sent with its id passes; here a public client that
// sends a secret, in HTTP Basic or in the form, is invalid_client, as a
// confidential client's wrong secret is (RFC 6749 §2.3.1: a public client
// has no secret to send). No secret is compared: a public client has none.
// A request that authenticates the client twice, HTTP Basic and a secret
// in the form, is invalid_request (RFC 6749 §2.3, §5.2), whatever the
// client.
func publicClientsWithoutSecret(f *fosite.Fosite) fosite.ClientAuthenticationStrategy {
	return func(ctx context.Context, r *http.Request, form url.Values) (fosite.Client, error) {
		if _, _, basic := r.BasicAuth(); basic && form.Has("client_secret") {
			// RFC 6749 §2.3: one method of client authentication per
			// request; §5.2 names a second one invalid_request.
			return nil, fosite.ErrInvalidRequest.WithHint("Authenticate the client once: HTTP Basic or client_secret in the form, not both.")
		}
		c, err := f.DefaultClientAuthenticationStrategy(ctx, r, form)
		if err != nil || !c.IsPublic() {
			return c, err
		}
		_, secret, basic := r.BasicAuth()
		if (basic && secret != "") || form.Get("client_secret") != "" {
			return nil, fosite.ErrInvalidClient.WithHint("A public client has no secret: send its client_id alone.")
		}
		return c, nil
	}
}

// clientAuthenticates reports whether a token or revocation request
// carries client authentication: HTTP Basic, or client_id in the form
// (with client_secret, or alone for a public app).
func clientAuthenticates(r *http.Request) bool {
	_, _, basic := r.BasicAuth()
	return basic || r.PostForm.Get("client_id") != ""
}

// describeTokenError puts guidepub's description on a token request's
// error where fosite's names another cause: a refresh token that is
// inactive is "already used" to fosite even when it was revoked; a
// missing code_verifier is "shorter than 43 characters". fosite's default
// hint about redirect URIs is dropped wherever it is not the cause.
func describeTokenError(r *http.Request, err error) error {
	form := r.PostForm
	switch {
	case errors.Is(err, fosite.ErrInactiveToken) && form.Get("grant_type") == "refresh_token":
		return withDescription(err, descRefreshInactive)
	case errors.Is(err, fosite.ErrInvalidGrant) && form.Get("grant_type") == "authorization_code" && form.Get("code_verifier") == "":
		return withDescription(err, descNoVerifier)
	}
	return dropDefaultHint(err)
}

// dropDefaultHint removes fosite's default invalid_request hint ("…
// exactly whitelisted the redirect_uri you specified"), which it adds to
// every invalid_request it has no hint for, whatever the cause.
func dropDefaultHint(err error) error {
	rfc := fosite.ErrorToRFC6749Error(err)
	if rfc.HintField != fosite.ErrInvalidRequest.HintField {
		return err
	}
	e := *rfc
	e.HintField = ""
	return e.WithWrap(err)
}

// writeRevocationError answers a refused revocation request with err's
// JSON error, its description included: fosite's WriteRevocationResponse
// writes the generic invalid_request or invalid_client instead.
func writeRevocationError(w http.ResponseWriter, err error) {
	rfc := fosite.ErrorToRFC6749Error(dropDefaultHint(err))
	body, _ := json.Marshal(map[string]string{"error": rfc.ErrorField, "error_description": rfc.GetDescription()})
	h := w.Header()
	h.Set("Content-Type", "application/json;charset=UTF-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Pragma", "no-cache")
	w.WriteHeader(rfc.CodeField)
	w.Write(body)
}

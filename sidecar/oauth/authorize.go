package oauth

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/guidepub/guidepub/sidecar/store"
	"github.com/ory/fosite"
)

// handleAuthorize is the authorization endpoint (RFC 6749 §4.1.1). A valid
// request from a signed-in owner gets the consent page; without a session
// the owner is sent to sign in first. An invalid client or redirect URI is
// shown on a page and never redirected to (§4.1.2.1); other errors go back
// to the registered redirect URI with the request's state.
func (s *Server) handleAuthorize(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	ar, err := s.provider.NewAuthorizeRequest(ctx, r)
	if err == nil {
		err = checkPKCE(ar)
	}
	if err != nil {
		s.authorizeError(w, r, ar, err)
		return
	}
	owner := s.cookies.session(r)
	if owner == "" {
		http.Redirect(w, r, PathSignIn+"?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
		return
	}
	csrf, err := s.cookies.csrfToken(w, r)
	if err != nil {
		s.serverError(w, err)
		return
	}
	d := pageData{
		Title: "Allow access?", AppName: s.appName(ctx, ar.GetClient().GetID()), Owner: owner, CSRF: csrf,
		Action: PathAuthorize + "?" + r.URL.RawQuery,
	}
	for _, sc := range ar.GetRequestedScopes() {
		d.Scopes = append(d.Scopes, scopeLine{Name: sc, Words: ScopeDescription(sc)})
	}
	render(w, http.StatusOK, "consent", d, "'self' "+origin(ar.GetRedirectURI()))
}

// handleConsent takes the owner's decision. It needs a session and the
// form's CSRF token; the granted scopes are the ticked ones among those
// requested.
func (s *Server) handleConsent(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if err := r.ParseForm(); err != nil || !s.cookies.checkCSRF(r) {
		render(w, http.StatusForbidden, "error", pageData{Title: "Request refused",
			Error: "This form has expired or did not come from this page."}, "")
		return
	}
	ar, err := s.provider.NewAuthorizeRequest(ctx, r)
	if err != nil {
		s.authorizeError(w, r, ar, err)
		return
	}
	owner := s.cookies.session(r)
	if owner == "" {
		http.Redirect(w, r, PathSignIn+"?next="+url.QueryEscape(PathAuthorize+"?"+r.URL.RawQuery), http.StatusSeeOther)
		return
	}
	if r.PostForm.Get("decision") != "allow" {
		s.provider.WriteAuthorizeError(ctx, w, ar, fosite.ErrAccessDenied.WithHint("The owner denied the request."))
		return
	}
	for _, g := range r.PostForm["grant"] {
		if ar.GetRequestedScopes().Has(g) {
			ar.GrantScope(g)
		}
	}
	resp, err := s.provider.NewAuthorizeResponse(ctx, ar, &fosite.DefaultSession{Subject: owner, Username: owner})
	if err != nil {
		s.authorizeError(w, r, ar, err)
		return
	}
	s.logger.Info("oauth grant approved", "clientId", ar.GetClient().GetID(), "owner", owner, "scopes", ar.GetGrantedScopes())
	s.provider.WriteAuthorizeResponse(ctx, w, ar, resp)
}

// checkPKCE refuses, before anyone signs in, a request without an S256
// code challenge (fosite would only refuse it after consent).
func checkPKCE(ar fosite.AuthorizeRequester) error {
	f := ar.GetRequestForm()
	if f.Get("code_challenge") == "" {
		return fosite.ErrInvalidRequest.WithHint("A PKCE code_challenge is required (S256).")
	}
	if f.Get("code_challenge_method") != "S256" {
		return fosite.ErrInvalidRequest.WithHint("The code_challenge_method must be S256.")
	}
	return nil
}

func (s *Server) authorizeError(w http.ResponseWriter, r *http.Request, ar fosite.AuthorizeRequester, err error) {
	s.logRFCError("authorization refused", err)
	if ar == nil || !ar.IsRedirectURIValid() {
		rfc := fosite.ErrorToRFC6749Error(err)
		msg := rfc.DescriptionField
		if rfc.HintField != "" {
			msg += " " + rfc.HintField
		}
		render(w, rfc.CodeField, "error", pageData{Title: "This request cannot be completed", Error: msg}, "")
		return
	}
	s.provider.WriteAuthorizeError(r.Context(), w, ar, err)
}

// handleSignInPage shows the sign-in form for the authorization request in
// next.
func (s *Server) handleSignInPage(w http.ResponseWriter, r *http.Request) {
	next := r.URL.Query().Get("next")
	s.signInForm(w, r, http.StatusOK, next, "", "")
}

func (s *Server) signInForm(w http.ResponseWriter, r *http.Request, status int, next, username, msg string) {
	clientID, ok := authorizeClient(next)
	if !ok {
		render(w, http.StatusBadRequest, "error", pageData{Title: "This request cannot be completed",
			Error: "Sign-in is only reached from an app's authorization request."}, "")
		return
	}
	csrf, err := s.cookies.csrfToken(w, r)
	if err != nil {
		s.serverError(w, err)
		return
	}
	render(w, status, "signin", pageData{Title: "Sign in", AppName: s.appName(r.Context(), clientID),
		CSRF: csrf, Next: next, Username: username, Error: msg}, "")
}

// handleSignIn checks an owner's password. Failures are throttled per
// owner and per address: past the limit an attempt is refused without
// checking the password. An unknown owner costs the same as a wrong
// password, and gets the same answer.
func (s *Server) handleSignIn(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil || !s.cookies.checkCSRF(r) {
		render(w, http.StatusForbidden, "error", pageData{Title: "Request refused",
			Error: "This form has expired or did not come from this page."}, "")
		return
	}
	next, username := r.PostForm.Get("next"), strings.TrimSpace(r.PostForm.Get("username"))
	keys := []string{"owner:" + username, "addr:" + remoteIP(r)}
	if blocked, _ := s.throttle.blocked(keys...); blocked {
		s.logger.Warn("oauth sign-in throttled", "owner", username, "addr", remoteIP(r))
		s.signInForm(w, r, http.StatusTooManyRequests, next, username,
			"Too many failed sign-ins. Wait a minute and try again.")
		return
	}
	ok, err := s.checkOwner(r.Context(), username, r.PostForm.Get("password"))
	if err != nil {
		s.serverError(w, err)
		return
	}
	if !ok {
		s.throttle.fail(keys...)
		s.logger.Info("oauth sign-in failed", "owner", username, "addr", remoteIP(r))
		s.signInForm(w, r, http.StatusUnauthorized, next, username, "The owner name or password is wrong.")
		return
	}
	if _, ok := authorizeClient(next); !ok {
		s.signInForm(w, r, http.StatusBadRequest, next, username, "")
		return
	}
	s.cookies.setSession(w, r, username)
	http.Redirect(w, r, next, http.StatusSeeOther)
}

func (s *Server) checkOwner(ctx context.Context, owner, password string) (bool, error) {
	hash, err := s.store.OwnerPassword(ctx, owner)
	unknown := errors.Is(err, store.ErrNotFound)
	if err != nil && !unknown {
		return false, err
	}
	if unknown || owner == "" {
		hash = dummyHash()
	}
	ok, err := CheckPassword(hash, password)
	if err != nil {
		return false, err
	}
	return ok && !unknown && owner != "", nil
}

// authorizeClient returns the client id of next when next is a local
// authorization request, the only place sign-in may send a browser back to.
func authorizeClient(next string) (string, bool) {
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.Path != PathAuthorize || strings.HasPrefix(next, "//") {
		return "", false
	}
	id := u.Query().Get("client_id")
	return id, id != ""
}

func (s *Server) appName(ctx context.Context, clientID string) string {
	a, err := s.store.App(ctx, clientID)
	if err != nil || a.Name == "" {
		return "An app"
	}
	return a.Name
}

func (s *Server) serverError(w http.ResponseWriter, err error) {
	s.logger.Error("oauth page failed", "err", err)
	render(w, http.StatusInternalServerError, "error", pageData{Title: "Something went wrong",
		Error: "The server could not complete this request."}, "")
}

func origin(u *url.URL) string {
	if u == nil {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

func remoteIP(r *http.Request) string {
	if h, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return h
	}
	return r.RemoteAddr
}

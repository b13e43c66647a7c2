package oauth

import (
	"context"
	"errors"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

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
	ar, err := s.newAuthorizeRequest(r)
	if err != nil {
		s.authorizeError(w, r, ar, err)
		return
	}
	owner := s.session(r)
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
	ar, err := s.newAuthorizeRequest(r)
	if err != nil {
		s.authorizeError(w, r, ar, err)
		return
	}
	owner := s.session(r)
	if owner == "" {
		http.Redirect(w, r, PathSignIn+"?next="+url.QueryEscape(PathAuthorize+"?"+r.URL.RawQuery), http.StatusSeeOther)
		return
	}
	if r.PostForm.Get("decision") != "allow" {
		s.authorizeError(w, r, ar, fosite.ErrAccessDenied.WithHint("The owner denied the request."))
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
	if ar.GetState() == "" {
		// fosite sends state= even when the client sent none.
		resp.GetParameters().Del("state")
	}
	s.logger.Info("oauth grant approved", "clientId", ar.GetClient().GetID(), "owner", owner, "scopes", ar.GetGrantedScopes())
	s.provider.WriteAuthorizeResponse(ctx, w, ar, resp)
}

// checkPKCE refuses, before anyone signs in, a request without an S256
// code challenge (fosite would only refuse it after consent), or with one
// that cannot be an S256 challenge: the base64url SHA-256 of a verifier,
// without padding, is 43 characters of A–Z, a–z, 0–9, "-" and "_" (RFC
// 7636 §4.2, Appendix A); fosite takes any string, and issues a code no
// verifier can redeem.
func checkPKCE(ar fosite.AuthorizeRequester) error {
	f := ar.GetRequestForm()
	c := f.Get("code_challenge")
	if c == "" {
		return fosite.ErrInvalidRequest.WithHint("A PKCE code_challenge is required (S256).")
	}
	if f.Get("code_challenge_method") != "S256" {
		return fosite.ErrInvalidRequest.WithHint("The code_challenge_method must be S256.")
	}
	if len(c) != s256ChallengeLen || strings.ContainsFunc(c, func(r rune) bool { return !isBase64URL(r) }) {
		return fosite.ErrInvalidRequest.WithHint("The code_challenge must be the base64url SHA-256 of the code_verifier: " +
			"43 characters of A-Z, a-z, 0-9, - and _, without padding (RFC 7636 section 4.2).")
	}
	return nil
}

// s256ChallengeLen is the length of a SHA-256 in base64url without padding.
const s256ChallengeLen = 43

func isBase64URL(r rune) bool {
	return 'A' <= r && r <= 'Z' || 'a' <= r && r <= 'z' || '0' <= r && r <= '9' || r == '-' || r == '_'
}

// consentFields are the consent form's own fields, posted with the
// authorization request in its query; grant is ticked once per scope.
var consentFields = []string{"csrf", "decision", "grant"}

// repeated returns the first parameter of form, in sorted order, that has
// more than one value, skipping except; "" when there is none.
func repeated(form url.Values, except ...string) string {
	keys := slices.Sorted(maps.Keys(form))
	for _, k := range keys {
		if len(form[k]) > 1 && !slices.Contains(except, k) {
			return k
		}
	}
	return ""
}

// errRepeated is the invalid_request of a request that sent param more
// than once (RFC 6749 §3.1, §3.2).
func errRepeated(param string) error {
	return fosite.ErrInvalidRequest.WithHintf("The %s parameter was sent more than once (RFC 6749 sections 3.1 and 3.2).", param)
}

// stateStandIn replaces a state shorter than fosite's minimum while fosite
// parses a request.
const stateStandIn = "guidepub-state-stand-in"

// newAuthorizeRequest is fosite's NewAuthorizeRequest with state optional,
// parameters sent once and PKCE checked (checkPKCE). Every client must use
// PKCE, which binds the code to the client's request as state would (RFC
// 9700 §2.1), so state may be absent or of any length and is returned
// exactly as sent. fosite refuses one shorter than 8 characters with
// invalid_state (not an RFC 6749 code), and its minimum cannot be lowered,
// so a shorter state is swapped for a stand-in while fosite parses the
// request, then put back. fosite reads the first of a repeated parameter;
// RFC 6749 §3.1 forbids repeating one, so that is invalid_request, with
// no requester (answered on a page, never redirected: §4.1.2.1) when the
// repeated parameter is client_id or redirect_uri.
func (s *Server) newAuthorizeRequest(r *http.Request) (fosite.AuthorizeRequester, error) {
	if err := r.ParseForm(); err != nil {
		return nil, fosite.ErrInvalidRequest.WithHint("The request could not be parsed.").WithWrap(err)
	}
	ar, err := s.parseAuthorizeRequest(r)
	if p := repeated(r.Form, consentFields...); p != "" {
		if p == "client_id" || p == "redirect_uri" {
			ar = nil
		}
		return ar, errRepeated(p)
	}
	if err == nil {
		err = checkPKCE(ar)
	}
	return ar, err
}

// parseAuthorizeRequest is fosite's NewAuthorizeRequest on r's parsed
// form, with a state shorter than fosite's minimum swapped for a stand-in.
func (s *Server) parseAuthorizeRequest(r *http.Request) (fosite.AuthorizeRequester, error) {
	state, sent := r.Form["state"]
	short := len(r.Form.Get("state")) < fosite.MinParameterEntropy
	if short {
		r.Form.Set("state", stateStandIn)
	}
	ar, err := s.provider.NewAuthorizeRequest(r.Context(), r)
	if short {
		if sent {
			r.Form["state"] = state
		} else {
			delete(r.Form, "state")
		}
		if a, ok := ar.(*fosite.AuthorizeRequest); ok {
			a.State = r.Form.Get("state")
		}
	}
	return ar, err
}

// authorizeError answers a refused authorization request. Without a valid
// client and redirect URI it is a page, never a redirect (RFC 6749
// §4.1.2.1); otherwise the error goes back to the redirect URI in the
// query, the only response mode offered, whatever response_mode asked
// for, with state exactly when the client sent one.
func (s *Server) authorizeError(w http.ResponseWriter, r *http.Request, ar fosite.AuthorizeRequester, err error) {
	s.logRFCError("authorization refused", err)
	if errors.Is(err, fosite.ErrUnsupportedResponseMode) {
		err = fosite.ErrInvalidRequest.WithHint("Only response_mode=query is supported.").WithWrap(err)
	}
	rfc := fosite.ErrorToRFC6749Error(err)
	if ar == nil || !ar.IsRedirectURIValid() {
		msg := rfc.DescriptionField
		if rfc.HintField != "" {
			msg += " " + rfc.HintField
		}
		render(w, rfc.CodeField, "error", pageData{Title: "This request cannot be completed", Error: msg}, "")
		return
	}
	u := *ar.GetRedirectURI()
	u.Fragment = ""
	q := u.Query()
	for k, v := range rfc.ToValues() {
		q[k] = v
	}
	if st := ar.GetState(); st != "" {
		q.Set("state", st)
	}
	u.RawQuery = q.Encode()
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Location", u.String())
	w.WriteHeader(http.StatusSeeOther)
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

// MaxOwnerName is the longest owner name, in bytes, that can sign in: a
// sign-in with a longer one is refused before the throttle counts or
// keeps anything, so what a stranger sends as a name takes no memory past
// its request.
const MaxOwnerName = 256

// maxSignInForm bounds the body of a sign-in form; a larger one is
// refused (413) unread.
const maxSignInForm = 64 << 10

// maxDrain and drainWait bound what is read and thrown away of a form
// refused as too large, and for how long: a connection closed with unread
// bytes is reset by the kernel, and the client, still sending its form,
// then gets a reset instead of the 413 page (most clients, one time in
// four here). Reading the rest first costs no memory; a form larger than
// maxDrain, or slower than drainWait, still gets the reset.
const (
	maxDrain  = 4 << 20
	drainWait = 5 * time.Second
)

// drainRefused reads and discards what is left of body, within maxDrain
// and drainWait.
func drainRefused(w http.ResponseWriter, body io.Reader) {
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(drainWait))
	_, _ = io.CopyN(io.Discard, body, maxDrain)
}

// logNamePrefix is how much of a name too long to sign in is logged.
const logNamePrefix = 32

// handleSignIn checks an owner's password. Every attempt is counted per
// (owner, client), per client and per owner before its password is
// checked: past a client's limits its attempt is refused (429) without
// checking the password, however many arrive together; past the owner's,
// it waits a growing, capped delay first, and is checked. A right password
// gives its attempt back. The check itself waits for its share of the hash
// memory budget, or is answered 503 (docs/oauth.md#throttling). An unknown
// owner costs the same as a wrong password, and gets the same answer.
func (s *Server) handleSignIn(w http.ResponseWriter, r *http.Request) {
	body := r.Body
	r.Body = http.MaxBytesReader(w, body, maxSignInForm)
	if err := r.ParseForm(); err != nil || !s.cookies.checkCSRF(r) {
		if tooLarge := (*http.MaxBytesError)(nil); errors.As(err, &tooLarge) {
			drainRefused(w, body)
			render(w, http.StatusRequestEntityTooLarge, "error", pageData{Title: "Request refused",
				Error: "This form is too large to be a sign-in."}, "")
			return
		}
		render(w, http.StatusForbidden, "error", pageData{Title: "Request refused",
			Error: "This form has expired or did not come from this page."}, "")
		return
	}
	next, username := r.PostForm.Get("next"), strings.TrimSpace(r.PostForm.Get("username"))
	addr := s.clients.of(r)
	if len(username) > MaxOwnerName {
		// No owner has this name: refused unchecked, counting and keeping
		// nothing, neither logged nor shown back in full.
		s.logger.Info("oauth sign-in failed: the owner name is longer than any owner's",
			"owner", strings.ToValidUTF8(username[:logNamePrefix], "")+"…", "bytes", len(username), "addr", addr)
		s.signInForm(w, r, http.StatusUnauthorized, next, "", "The owner name or password is wrong.")
		return
	}
	attempt, delay, until := s.throttle.admit(username, addr)
	if attempt == nil {
		s.logger.Warn("oauth sign-in throttled", "owner", username, "addr", addr)
		w.Header().Set("Retry-After", retryAfter(until.Sub(s.cfg.Now())))
		s.signInForm(w, r, http.StatusTooManyRequests, next, username,
			"Too many failed sign-ins from here. Try again later.")
		return
	}
	if delay > 0 {
		s.logger.Info("oauth sign-in slowed: the owner has many failed sign-ins", "owner", username, "addr", addr, "delay", delay)
		if !sleep(r.Context(), delay) {
			attempt.giveBack()
			return // the browser went away while waiting
		}
	}
	hash, ok, err := s.checkOwner(r.Context(), username, r.PostForm.Get("password"))
	if errors.Is(err, errBusy) {
		attempt.giveBack()
		s.logger.Warn("oauth sign-in refused: password checks busy", "owner", username, "addr", addr)
		w.Header().Set("Retry-After", retryAfter(s.cfg.PasswordHashWait))
		s.signInForm(w, r, http.StatusServiceUnavailable, next, username,
			"Too many sign-ins at once. Try again in a few seconds.")
		return
	}
	if err != nil {
		attempt.giveBack()
		if r.Context().Err() != nil {
			return // the browser went away while waiting
		}
		s.serverError(w, err)
		return
	}
	if !ok {
		s.logger.Info("oauth sign-in failed", "owner", username, "addr", addr)
		s.signInForm(w, r, http.StatusUnauthorized, next, username, "The owner name or password is wrong.")
		return
	}
	attempt.giveBack()
	if _, ok := authorizeClient(next); !ok {
		s.signInForm(w, r, http.StatusBadRequest, next, username, "")
		return
	}
	s.cookies.setSession(w, r, username, hash)
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// sleep waits d, or until ctx is done; it reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// retryAfter is a Retry-After value (whole seconds, at least 1) for d.
func retryAfter(d time.Duration) string {
	return strconv.Itoa(max(1, int((d+time.Second-1)/time.Second)))
}

// checkOwner checks password against owner's hash within the hash memory
// budget, and returns the hash when it matches. An unknown owner is
// checked against a dummy hash. err is a store failure, or errBusy.
func (s *Server) checkOwner(ctx context.Context, owner, password string) (hash string, ok bool, err error) {
	hash, err = s.store.OwnerPassword(ctx, owner)
	unknown := errors.Is(err, store.ErrNotFound) || owner == ""
	if err != nil && !unknown {
		return "", false, err
	}
	if unknown {
		hash = dummyHash
	}
	ok, err = s.hashes.check(ctx, hash, password)
	if err != nil || !ok || unknown {
		return "", false, err
	}
	return hash, true, nil
}

// session returns the owner signed in on r's browser, or "": the session
// cookie must be valid, unexpired and made under the owner's current
// password, which is read from the store on every use.
func (s *Server) session(r *http.Request) string {
	return s.cookies.session(r, func(owner string) (string, bool) {
		hash, err := s.store.OwnerPassword(r.Context(), owner)
		if err != nil {
			if !errors.Is(err, store.ErrNotFound) {
				s.logger.Error("oauth session: reading the owner failed", "err", err)
			}
			return "", false
		}
		return hash, true
	})
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

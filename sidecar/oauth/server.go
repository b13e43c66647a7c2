package oauth

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/guidepub/guidepub/sidecar/store"
	"github.com/ory/fosite"
	"github.com/ory/fosite/compose"
	"github.com/ory/fosite/handler/oauth2"
)

// Endpoint paths, under the issuer.
const (
	PathAuthorize = "/oauth/authorize"
	PathToken     = "/oauth/token"
	PathRevoke    = "/oauth/revoke"
	PathSignIn    = "/oauth/signin"
	PathMetadata  = "/.well-known/oauth-authorization-server"
)

// Names of the secrets kept in the store, shared by every sidecar on it so
// that each accepts the tokens and sessions the others issue.
const (
	secretHMAC    = "oauth-hmac-key"
	secretSession = "oauth-session-key"
)

// Server is the authorization server: its HTTP endpoints and the check of
// access tokens for the Portal API. It is safe for concurrent use.
type Server struct {
	cfg      Config
	store    *store.Store
	storage  *storage
	provider fosite.OAuth2Provider
	strategy *oauth2.HMACSHAStrategy
	logger   *slog.Logger
	cookies  *cookieKeys
	throttle *throttle
	clients  *clientAddrs
	hashes   *hashLimiter

	lastSweep atomic.Int64 // unix seconds of the last removal of expired tokens
}

// sweepEvery is how often the token endpoint removes expired tokens.
const sweepEvery = time.Hour

// New returns the authorization server on st. It reads (creating once) the
// HMAC and session keys from the store, and returns an error for an invalid
// cfg or a store failure.
func New(ctx context.Context, cfg Config, st *store.Store) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	random := func() ([]byte, error) {
		b := make([]byte, 32)
		_, err := rand.Read(b)
		return b, err
	}
	hmacKey, err := st.Secret(ctx, secretHMAC, random)
	if err != nil {
		return nil, fmt.Errorf("oauth: %w", err)
	}
	sessKey, err := st.Secret(ctx, secretSession, random)
	if err != nil {
		return nil, fmt.Errorf("oauth: %w", err)
	}
	fc := &fosite.Config{
		AccessTokenLifespan:            cfg.AccessTokenLifespan,
		RefreshTokenLifespan:           cfg.RefreshTokenLifespan,
		AuthorizeCodeLifespan:          cfg.AuthorizeCodeLifespan,
		GlobalSecret:                   hmacKey,
		EnforcePKCE:                    true,
		EnablePKCEPlainChallengeMethod: false,
		ScopeStrategy:                  fosite.ExactScopeStrategy,
		AudienceMatchingStrategy:       fosite.DefaultAudienceMatchingStrategy,
		RefreshTokenScopes:             []string{}, // every grant gets a refresh token
		TokenURL:                       cfg.Issuer + PathToken,
		ClientSecretsHasher:            secretHasher{},
		RedirectSecureChecker:          fosite.IsRedirectURISecureStrict,
		SendDebugMessagesToClients:     false,
	}
	stor := &storage{st: st, now: cfg.Now, lifespans: map[string]time.Duration{
		kindCode: cfg.AuthorizeCodeLifespan, kindPKCE: cfg.AuthorizeCodeLifespan,
		kindAccess: cfg.AccessTokenLifespan, kindRefresh: cfg.RefreshTokenLifespan,
	}}
	strategy := compose.NewOAuth2HMACStrategy(fc)
	provider := compose.Compose(fc, stor, &compose.CommonStrategy{CoreStrategy: strategy},
		compose.OAuth2AuthorizeExplicitFactory,
		compose.OAuth2RefreshTokenGrantFactory,
		compose.OAuth2TokenRevocationFactory,
		compose.OAuth2PKCEFactory,
	)
	fc.ClientAuthenticationStrategy = publicClientsWithoutSecret(provider.(*fosite.Fosite))
	return &Server{
		cfg: cfg, store: st, storage: stor, provider: provider, strategy: strategy, logger: cfg.Logger,
		cookies: &cookieKeys{key: sessKey, now: cfg.Now, sessionLifespan: cfg.SessionLifespan},
		throttle: newThrottle(signInPolicy{
			PairFailures: cfg.SignInFailures, ClientFailures: cfg.SignInClientFailures, OwnerFailures: cfg.SignInOwnerFailures,
			Delay: cfg.SignInDelay, MaxDelay: cfg.SignInMaxDelay, Window: cfg.SignInWindow,
		}, cfg.Now),
		clients: newClientAddrs(cfg.TrustedProxies, func() {
			cfg.Logger.Warn("oauth sign-in: X-Forwarded-For from a peer that is not a trusted proxy is ignored; " +
				"behind a reverse proxy, list it in --trusted-proxies or every client counts as the proxy")
		}),
		hashes: newHashLimiter(cfg.PasswordHashMemoryMiB, cfg.PasswordHashWait),
	}, nil
}

// Route is one endpoint: a method (GET also answers HEAD), a path and
// its handler.
type Route struct {
	Method, Path string
	Handler      http.Handler
}

// Routes returns every endpoint, for the sidecar to register with method
// patterns (and to answer other methods on these paths with 405).
func (s *Server) Routes() []Route {
	return []Route{
		{"GET", PathAuthorize, http.HandlerFunc(s.handleAuthorize)},
		{"POST", PathAuthorize, http.HandlerFunc(s.handleConsent)},
		{"GET", PathSignIn, http.HandlerFunc(s.handleSignInPage)},
		{"POST", PathSignIn, http.HandlerFunc(s.handleSignIn)},
		{"POST", PathToken, http.HandlerFunc(s.handleToken)},
		{"POST", PathRevoke, http.HandlerFunc(s.handleRevoke)},
		{"GET", PathMetadata, http.HandlerFunc(s.handleMetadata)},
	}
}

// Principal is who an access token speaks for.
type Principal struct {
	ClientID, OwnerID string
	Scopes            []string
}

// Authenticate checks an access token presented with clientID: it must be
// one this server issued (its HMAC checks), to that client, active (not
// revoked, its app not revoked) and not expired on the configured clock.
// ok is false for any such failure; err is a store failure only.
func (s *Server) Authenticate(ctx context.Context, clientID, token string) (p Principal, ok bool, err error) {
	if clientID == "" {
		return Principal{}, false, nil
	}
	p, ok, err = s.AuthenticateBearer(ctx, token)
	if !ok || p.ClientID != clientID {
		return Principal{}, false, err
	}
	return p, true, nil
}

// AuthenticateBearer is Authenticate for a token presented alone, as
// Authorization: Bearer (RFC 6750): the client is the one the token was
// issued to.
func (s *Server) AuthenticateBearer(ctx context.Context, token string) (p Principal, ok bool, err error) {
	if token == "" {
		return Principal{}, false, nil
	}
	sig := s.strategy.AccessTokenSignature(ctx, token)
	row, req, err := s.storage.getRow(ctx, kindAccess, sig, nil)
	if errors.Is(err, fosite.ErrNotFound) {
		return Principal{}, false, nil
	}
	if err != nil {
		return Principal{}, false, err
	}
	// The HMAC check: the store keeps only signatures, so a leaked row
	// does not make a token.
	if err := s.strategy.ValidateAccessToken(ctx, req, token); err != nil {
		return Principal{}, false, nil
	}
	if !s.cfg.Now().Before(row.ExpiresAt) {
		return Principal{}, false, nil
	}
	sess, _ := req.GetSession().(*fosite.DefaultSession)
	if sess == nil || sess.Subject == "" {
		return Principal{}, false, nil
	}
	return Principal{ClientID: req.GetClient().GetID(), OwnerID: sess.Subject, Scopes: req.GetGrantedScopes()}, true, nil
}

// handleToken is the token endpoint (RFC 6749 §3.2): code exchange and
// refresh. Errors are the RFC's JSON errors.
func (s *Server) handleToken(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if err := checkTokenRequest(r); err != nil {
		s.logRFCError("token request refused", err)
		challenge(w, err)
		s.provider.WriteAccessError(ctx, w, fosite.NewAccessRequest(&fosite.DefaultSession{}), err)
		return
	}
	var (
		ar   fosite.AccessRequester
		resp fosite.AccessResponder
		err  error
	)
	// A redemption's transaction that PostgreSQL rolled back to break a
	// deadlock left nothing behind: it runs again, and then sees what the
	// request that won did (fosite revokes a reused grant's tokens in two
	// orders, access then refresh for a code, refresh then access for a
	// refresh token, so requests racing over one grant can deadlock).
	for attempt := 1; ; attempt++ {
		ar, resp, err = s.redeem(ctx, r)
		if !store.IsRetryable(err) || attempt == maxRedeemAttempts {
			break
		}
	}
	if err != nil {
		s.logRFCError("token request refused", err)
		challenge(w, err)
		s.provider.WriteAccessError(ctx, w, ar, describeTokenError(r, err))
		return
	}
	s.provider.WriteAccessResponse(ctx, w, ar, resp)
	s.sweep(ctx)
}

// checkTokenRequest refuses, before fosite reads it, a token request
// whose form repeats a parameter (RFC 6749 §3.2; fosite reads the first),
// has no client authentication (errNoClient) or names a grant type no
// handler takes (fosite answers invalid_request, RFC 6749 §5.2 says
// unsupported_grant_type). A form that does not parse is left to fosite.
func checkTokenRequest(r *http.Request) error {
	if r.ParseForm() != nil {
		return nil
	}
	if p := repeated(r.PostForm); p != "" {
		return errRepeated(p)
	}
	if !clientAuthenticates(r) {
		return errNoClient
	}
	if gt := r.PostForm.Get("grant_type"); gt != "" && gt != "authorization_code" && gt != "refresh_token" {
		return fosite.ErrUnsupportedGrantType.WithHintf("The grant type %q is not supported.", gt)
	}
	return nil
}

// maxRedeemAttempts bounds the runs of one token request whose
// transaction was rolled back for a deadlock.
const maxRedeemAttempts = 3

// redeem reads and answers one token request: fosite's access request
// (which may revoke a reused grant), then its response (which spends the
// code or refresh token and issues new tokens).
func (s *Server) redeem(ctx context.Context, r *http.Request) (fosite.AccessRequester, fosite.AccessResponder, error) {
	ar, err := s.provider.NewAccessRequest(ctx, r, &fosite.DefaultSession{})
	if err != nil {
		return ar, nil, err
	}
	resp, err := s.provider.NewAccessResponse(ctx, ar)
	if errors.Is(err, errRedeemed) || errors.Is(err, fosite.ErrInvalidatedAuthorizeCode) {
		// Another request redeemed this code or refresh token after fosite
		// first checked it (fosite reads the code again before spending
		// it, and would call that a server error): this one is a reuse,
		// and the grant is revoked (RFC 6749 §4.1.2, RFC 9700 §4.14.2),
		// the winner's new tokens included.
		rerr := s.store.RevokeGrant(ctx, ar.GetID())
		for attempt := 1; store.IsRetryable(rerr) && attempt < maxRedeemAttempts; attempt++ {
			rerr = s.store.RevokeGrant(ctx, ar.GetID())
		}
		if rerr != nil {
			s.logger.Error("oauth: revoking a reused grant failed", "err", rerr)
		}
		err = fosite.ErrInvalidGrant.WithHint("The authorization code or refresh token has already been used.").WithWrap(err)
	}
	return ar, resp, err
}

// sweep removes tokens that expired a day ago or more, at most once per
// sweepEvery per process, so the token table does not grow forever. The
// deletion runs in the background, so no token request waits for it.
func (s *Server) sweep(ctx context.Context) {
	now := s.cfg.Now()
	last := s.lastSweep.Load()
	if now.Unix()-last < int64(sweepEvery/time.Second) || !s.lastSweep.CompareAndSwap(last, now.Unix()) {
		return
	}
	go s.deleteExpired(context.WithoutCancel(ctx), now)
}

// deleteExpired deletes the tokens that expired a day before now, within
// a minute.
func (s *Server) deleteExpired(ctx context.Context, now time.Time) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	n, err := s.store.DeleteExpiredGrantTokens(ctx, now.Add(-24*time.Hour))
	if err != nil {
		s.logger.Warn("oauth: removing expired tokens failed", "err", err)
		return
	}
	if n > 0 {
		s.logger.Debug("oauth: expired tokens removed", "count", n)
	}
}

// handleRevoke is the revocation endpoint (RFC 7009). A request that
// repeats a parameter is invalid_request (RFC 7009 §2.1 sends the form of
// RFC 6749 §3.2), one without client authentication invalid_client, one
// without a token invalid_request (§2.1 makes it required; fosite would
// answer 200), each with guidepub's description.
func (s *Server) handleRevoke(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	var err error
	switch perr := r.ParseForm(); {
	case perr == nil && repeated(r.PostForm) != "":
		err = errRepeated(repeated(r.PostForm))
	case perr == nil && !clientAuthenticates(r):
		err = errNoClient
	case perr == nil && r.PostForm.Get("token") == "":
		err = errNoToken
	default:
		err = s.provider.NewRevocationRequest(ctx, r)
	}
	if err != nil {
		s.logRFCError("revocation refused", err)
		challenge(w, err)
		if errors.Is(err, fosite.ErrInvalidRequest) || errors.Is(err, fosite.ErrInvalidClient) {
			writeRevocationError(w, err)
			return
		}
	}
	s.provider.WriteRevocationResponse(ctx, w, err)
}

// challenge adds the WWW-Authenticate header to an invalid_client answer,
// which is a 401: RFC 9110 §15.5.2 requires one on every 401, and RFC 6749
// §5.2 one matching the scheme the client used. guidepub's clients
// authenticate with HTTP Basic or in the form, so the challenge is Basic.
func challenge(w http.ResponseWriter, err error) {
	if errors.Is(err, fosite.ErrInvalidClient) {
		w.Header().Set("WWW-Authenticate", `Basic realm="guidepub", charset="UTF-8"`)
	}
}

// handleMetadata answers the authorization server metadata (RFC 8414).
func (s *Server) handleMetadata(w http.ResponseWriter, r *http.Request) {
	iss := s.cfg.Issuer
	auth := []string{"client_secret_basic", "client_secret_post", "none"}
	md := map[string]any{
		"issuer":                                     iss,
		"authorization_endpoint":                     iss + PathAuthorize,
		"token_endpoint":                             iss + PathToken,
		"revocation_endpoint":                        iss + PathRevoke,
		"scopes_supported":                           Scopes(),
		"response_types_supported":                   []string{"code"},
		"response_modes_supported":                   []string{"query"},
		"grant_types_supported":                      []string{"authorization_code", "refresh_token"},
		"code_challenge_methods_supported":           []string{"S256"},
		"token_endpoint_auth_methods_supported":      auth,
		"revocation_endpoint_auth_methods_supported": auth,
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=3600")
	_ = json.NewEncoder(w).Encode(md)
}

func (s *Server) logRFCError(msg string, err error) {
	rfc := fosite.ErrorToRFC6749Error(err)
	s.logger.Info(msg, "error", rfc.ErrorField, "hint", clip(rfc.HintField), "debug", clip(rfc.DebugField))
}

// maxLoggedText bounds what a log line carries of a text a request may
// have put in (an error's hint quotes a parameter's name or value).
const maxLoggedText = 256

// clip is s cut to maxLoggedText bytes (on a character boundary), with
// its full length when cut.
func clip(s string) string {
	if len(s) <= maxLoggedText {
		return s
	}
	return strings.ToValidUTF8(s[:maxLoggedText], "") + fmt.Sprintf("… (%d bytes)", len(s))
}

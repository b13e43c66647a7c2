package sidecar

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/guidepub/guidepub/sidecar/oauth"
	"github.com/guidepub/guidepub/sidecar/store"
	"golang.org/x/time/rate"
)

// Credential headers of the Portal API (docs/sidecar.md#credentials). An
// OAuth access token may also come as Authorization: Bearer (RFC 6750
// §2.1); an API token may not.
const (
	HeaderAppID    = "X-Svc-App-Id"
	HeaderAppToken = "X-Svc-App-Token"
)

// errTokenTwice answers a request that sent an access token both as
// Authorization: Bearer and in X-Svc-App-Token (RFC 6750 §2: one method
// per request; §3.1: invalid_request, 400).
var errTokenTwice = &apiError{status: http.StatusBadRequest, code: CodeInvalidArgument, bearerError: "invalid_request",
	message: "send the access token once: in Authorization: Bearer or in " + HeaderAppToken}

// bearerToken returns the token of an Authorization: Bearer header (the
// scheme in any case, RFC 9110 §11.1), and whether there was one.
func bearerToken(r *http.Request) (string, bool) {
	scheme, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.TrimSpace(token), true
}

// maxAppIDLen bounds the app ids looked up in the store; longer ones are
// looked up as "" (unknown) and not cached under their own name.
const maxAppIDLen = 128

type principalKey struct{}

// principal returns the credential that authenticated the request.
func principal(ctx context.Context) store.Token {
	t, _ := ctx.Value(principalKey{}).(store.Token)
	return t
}

// authenticated wraps h: the request must carry valid credentials (else
// 401), stay within its app's rate limit (else 429) and, when scope is not
// empty, hold scope (else 403, with RFC 6750's insufficient_scope
// challenge for a bearer token).
func (s *Server) authenticated(scope string, h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, err := s.authenticate(r)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if info, ok := r.Context().Value(requestInfoKey{}).(*requestInfo); ok {
			info.appID = tok.AppID
		}
		if wait, ok := s.limits.allow(tok.AppID); !ok {
			s.writeError(w, r, &apiError{
				status: http.StatusTooManyRequests, code: CodeResourceExhausted,
				message:    fmt.Sprintf("rate limit of %g requests per second exceeded", s.cfg.RateLimit),
				retryAfter: wait,
			})
			return
		}
		if scope != "" && !hasScope(tok.Scopes, scope) {
			s.writeError(w, r, errInsufficientScope(scope))
			return
		}
		h(w, r.WithContext(context.WithValue(r.Context(), principalKey{}, tok)))
	})
}

// authenticate checks the two credential headers. Whatever is wrong
// (a header missing or misnamed, an unknown app id, a wrong, expired or
// revoked token) it returns errUnauthenticated after the same work: the
// presented token is hashed and compared in constant time with the stored
// hash, or with a dummy hash when there is none. A store failure is
// returned as is (500).
func (s *Server) authenticate(r *http.Request) (store.Token, error) {
	appID := r.Header.Get(HeaderAppID)
	if bearer, ok := bearerToken(r); ok {
		return s.authenticateBearer(r, appID, bearer)
	}
	if s.cfg.OAuth != nil && oauth.IsClientID(appID) {
		return s.authenticateOAuth(r, appID)
	}
	presented := sha256.Sum256([]byte(r.Header.Get(HeaderAppToken)))
	tok, found, err := s.creds.lookup(r.Context(), appID)
	if err != nil {
		return store.Token{}, fmt.Errorf("look up credentials: %w", err)
	}
	want := s.dummyKey
	if found && len(tok.Hash) == sha256.Size {
		want = tok.Hash
	}
	match := subtle.ConstantTimeCompare(presented[:], want) == 1
	now := s.now()
	live := found && tok.RevokedAt == nil && (tok.ExpiresAt == nil || now.Before(*tok.ExpiresAt))
	if !match || !live {
		return store.Token{}, errUnauthenticated
	}
	return tok, nil
}

// authenticateOAuth checks an OAuth access token presented with its app's
// client id. Every failure is the same errUnauthenticated as for API
// tokens; a store failure is returned as is (500).
func (s *Server) authenticateOAuth(r *http.Request, clientID string) (store.Token, error) {
	p, ok, err := s.cfg.OAuth.Authenticate(r.Context(), clientID, r.Header.Get(HeaderAppToken))
	if err != nil {
		return store.Token{}, fmt.Errorf("check access token: %w", err)
	}
	if !ok {
		return store.Token{}, errUnauthenticated
	}
	return store.Token{AppID: p.ClientID, OwnerID: p.OwnerID, Scopes: p.Scopes}, nil
}

// authenticateBearer checks an OAuth access token sent as Authorization:
// Bearer. X-Svc-App-Id is optional then, and must name the token's app when
// present; the token must not also be in X-Svc-App-Token (errTokenTwice).
// API tokens are not bearer tokens: their value alone names no app.
func (s *Server) authenticateBearer(r *http.Request, appID, token string) (store.Token, error) {
	if _, twice := r.Header[http.CanonicalHeaderKey(HeaderAppToken)]; twice {
		return store.Token{}, errTokenTwice
	}
	if s.cfg.OAuth == nil || (appID != "" && !oauth.IsClientID(appID)) {
		return store.Token{}, errUnauthenticated
	}
	p, ok, err := s.cfg.OAuth.AuthenticateBearer(r.Context(), token)
	if err != nil {
		return store.Token{}, fmt.Errorf("check access token: %w", err)
	}
	if !ok || (appID != "" && appID != p.ClientID) {
		return store.Token{}, errUnauthenticated
	}
	return store.Token{AppID: p.ClientID, OwnerID: p.OwnerID, Scopes: p.Scopes}, nil
}

// credentialCache keeps tokens read from the store for a short TTL so an
// authenticated request usually costs no query. Unknown app ids are cached
// too, so a flood of bad credentials does not reach the store either.
type credentialCache struct {
	st  *store.Store
	ttl time.Duration
	now func() time.Time

	mu      sync.Mutex
	entries map[string]credentialEntry
}

type credentialEntry struct {
	tok     store.Token
	found   bool
	expires time.Time
}

const maxCachedCredentials = 10000

func newCredentialCache(st *store.Store, ttl time.Duration, now func() time.Time) *credentialCache {
	return &credentialCache{st: st, ttl: ttl, now: now, entries: make(map[string]credentialEntry)}
}

// lookup returns the token of appID and whether it exists, or a store error.
func (c *credentialCache) lookup(ctx context.Context, appID string) (store.Token, bool, error) {
	if len(appID) > maxAppIDLen {
		// Never stored (ids are short); looked up as "" so the work is
		// the same as for any other unknown id, without caching junk.
		appID = ""
	}
	now := c.now()
	if c.ttl > 0 {
		c.mu.Lock()
		e, ok := c.entries[appID]
		c.mu.Unlock()
		if ok && now.Before(e.expires) {
			return e.tok, e.found, nil
		}
	}
	tok, err := c.st.Token(ctx, appID)
	found := err == nil
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return store.Token{}, false, err
	}
	if c.ttl > 0 {
		c.mu.Lock()
		if len(c.entries) >= maxCachedCredentials {
			for k, e := range c.entries {
				if !now.Before(e.expires) {
					delete(c.entries, k)
				}
			}
			if len(c.entries) >= maxCachedCredentials {
				clear(c.entries)
			}
		}
		c.entries[appID] = credentialEntry{tok: tok, found: found, expires: now.Add(c.ttl)}
		c.mu.Unlock()
	}
	return tok, found, nil
}

// rateLimits holds one token bucket per authenticated app.
type rateLimits struct {
	limit rate.Limit
	burst int
	now   func() time.Time

	mu       sync.Mutex
	limiters map[string]*rate.Limiter
}

func newRateLimits(perSecond float64, burst int, now func() time.Time) *rateLimits {
	return &rateLimits{limit: rate.Limit(perSecond), burst: burst, now: now, limiters: make(map[string]*rate.Limiter)}
}

// allow takes one request from appID's bucket. When the bucket is empty it
// returns false and the whole seconds to wait (at least 1).
func (l *rateLimits) allow(appID string) (retryAfter int, ok bool) {
	if l.limit <= 0 {
		return 0, true
	}
	l.mu.Lock()
	lim := l.limiters[appID]
	if lim == nil {
		lim = rate.NewLimiter(l.limit, l.burst)
		l.limiters[appID] = lim
	}
	l.mu.Unlock()
	now := l.now()
	res := lim.ReserveN(now, 1)
	if !res.OK() {
		return 1, false
	}
	delay := res.DelayFrom(now)
	if delay <= 0 {
		return 0, true
	}
	res.CancelAt(now)
	return max(1, int(math.Ceil(delay.Seconds()))), false
}

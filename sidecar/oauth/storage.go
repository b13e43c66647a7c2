package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/guidepub/guidepub/sidecar/store"
	"github.com/ory/fosite"
	"github.com/ory/fosite/handler/oauth2"
	"github.com/ory/fosite/handler/pkce"
	fositestorage "github.com/ory/fosite/storage"
)

// Token kinds as stored in guidepub_oauth_token.kind.
const (
	kindCode    = "code"
	kindPKCE    = "pkce"
	kindAccess  = "access"
	kindRefresh = "refresh"
)

// storage is fosite's storage on guidepub's store. Each token row holds the
// authorization request it was issued under, serialised as storedRequest.
type storage struct {
	st  *store.Store
	now func() time.Time
	// lifespans by token kind: a row's expires_at is its creation on the
	// configured clock plus its lifespan, what Authenticate checks.
	lifespans map[string]time.Duration
}

var (
	_ fosite.ClientManager          = (*storage)(nil)
	_ oauth2.CoreStorage            = (*storage)(nil)
	_ oauth2.TokenRevocationStorage = (*storage)(nil)
	_ pkce.PKCERequestStorage       = (*storage)(nil)
	_ fositestorage.Transactional   = (*storage)(nil)
)

// errRedeemed is returned when a code or refresh token was spent by
// another request between fosite's check of it and its redemption: the
// token endpoint answers invalid_grant and revokes the grant, as for any
// reuse.
var errRedeemed = errors.New("oauth: the code or refresh token was redeemed by another request")

// BeginTX begins the transaction fosite runs a redemption in (spending the
// code or refresh token and storing the new tokens), carried by the
// returned context.
func (s *storage) BeginTX(ctx context.Context) (context.Context, error) {
	return s.st.BeginInContext(ctx)
}

// Commit commits the transaction ctx carries.
func (s *storage) Commit(ctx context.Context) error { return s.st.CommitInContext(ctx) }

// Rollback rolls back the transaction ctx carries.
func (s *storage) Rollback(ctx context.Context) error { return s.st.RollbackInContext(ctx) }

// storedRequest is what is kept of a fosite.Requester: everything but the
// client, which is read again from the store (so a revoked app is noticed).
type storedRequest struct {
	ID                string                 `json:"id"`
	RequestedAt       time.Time              `json:"requestedAt"`
	ClientID          string                 `json:"clientId"`
	RequestedScope    []string               `json:"requestedScope"`
	GrantedScope      []string               `json:"grantedScope"`
	Form              url.Values             `json:"form"`
	RequestedAudience []string               `json:"requestedAudience"`
	GrantedAudience   []string               `json:"grantedAudience"`
	Session           *fosite.DefaultSession `json:"session"`
}

// GetClient returns the app with id as a fosite client, or
// fosite.ErrNotFound when it does not exist or is revoked.
func (s *storage) GetClient(ctx context.Context, id string) (fosite.Client, error) {
	a, err := s.st.App(ctx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && a.RevokedAt != nil) {
		return nil, fosite.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return toClient(a), nil
}

// toClient makes a fosite client of a. It is a plain client, not an OpenID
// Connect one, so a confidential app may authenticate with HTTP Basic or
// with the secret in the form (client_secret_basic or client_secret_post).
func toClient(a store.App) *fosite.DefaultClient {
	return &fosite.DefaultClient{
		ID:            a.ClientID,
		Secret:        a.SecretHash,
		RedirectURIs:  a.RedirectURIs,
		GrantTypes:    []string{"authorization_code", "refresh_token"},
		ResponseTypes: []string{"code"},
		Scopes:        a.Scopes,
		Public:        a.Public(),
	}
}

// ClientAssertionJWTValid is part of fosite's client manager; guidepub
// accepts no JWT client assertions, so every jti is unused.
func (s *storage) ClientAssertionJWTValid(context.Context, string) error { return nil }

// SetClientAssertionJWT is a no-op: no JWT client assertions are accepted.
func (s *storage) SetClientAssertionJWT(context.Context, string, time.Time) error { return nil }

func (s *storage) create(ctx context.Context, kind, signature string, req fosite.Requester) error {
	sess, _ := req.GetSession().(*fosite.DefaultSession)
	if sess == nil {
		return fmt.Errorf("oauth: unexpected session type %T", req.GetSession())
	}
	sr := storedRequest{
		ID: req.GetID(), RequestedAt: req.GetRequestedAt(), ClientID: req.GetClient().GetID(),
		RequestedScope: req.GetRequestedScopes(), GrantedScope: req.GetGrantedScopes(),
		Form: req.GetRequestForm(), RequestedAudience: req.GetRequestedAudience(),
		GrantedAudience: req.GetGrantedAudience(), Session: sess,
	}
	// The form may hold the code or the PKCE verifier: never keep it.
	sr.Form = sanitizeForm(sr.Form)
	data, err := json.Marshal(sr)
	if err != nil {
		return err
	}
	now := s.now()
	expires := now.Add(s.lifespans[kind])
	return s.st.CreateGrantToken(ctx, store.GrantToken{
		Kind: kind, Signature: signature, RequestID: req.GetID(), ClientID: sr.ClientID,
		OwnerID: sess.Subject, Scopes: sr.GrantedScope, Request: data, Active: true,
		ExpiresAt: expires, CreatedAt: now,
	})
}

// formKept are the request parameters kept with a grant; secrets such as
// the code, the code verifier, the refresh token and the client secret are
// dropped.
var formKept = []string{"response_type", "client_id", "redirect_uri", "scope", "state", "code_challenge", "code_challenge_method", "grant_type"}

func sanitizeForm(f url.Values) url.Values {
	out := url.Values{}
	for _, k := range formKept {
		if v, ok := f[k]; ok {
			out[k] = v
		}
	}
	return out
}

// get reads a token row back into a fosite.Request. An inactive row is
// returned with inactiveErr, as fosite expects to detect reuse.
func (s *storage) get(ctx context.Context, kind, signature string, inactiveErr error) (fosite.Requester, error) {
	_, req, err := s.getRow(ctx, kind, signature, inactiveErr)
	return req, err
}

// getRow is get, with the stored row.
func (s *storage) getRow(ctx context.Context, kind, signature string, inactiveErr error) (store.GrantToken, fosite.Requester, error) {
	t, err := s.st.GrantToken(ctx, kind, signature)
	if errors.Is(err, store.ErrNotFound) {
		return t, nil, fosite.ErrNotFound
	}
	if err != nil {
		return t, nil, err
	}
	var sr storedRequest
	if err := json.Unmarshal(t.Request, &sr); err != nil {
		return t, nil, fmt.Errorf("oauth: stored %s request: %w", kind, err)
	}
	req := &fosite.Request{
		ID: sr.ID, RequestedAt: sr.RequestedAt, RequestedScope: sr.RequestedScope,
		GrantedScope: sr.GrantedScope, Form: sr.Form, RequestedAudience: sr.RequestedAudience,
		GrantedAudience: sr.GrantedAudience, Session: sr.Session,
	}
	if req.Session == nil {
		req.Session = &fosite.DefaultSession{}
	}
	a, err := s.st.App(ctx, sr.ClientID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return t, nil, fosite.ErrNotFound
	case err != nil:
		return t, nil, err
	}
	req.Client = toClient(a)
	if !t.Active || a.RevokedAt != nil {
		if inactiveErr == nil {
			return t, nil, fosite.ErrNotFound
		}
		return t, req, inactiveErr
	}
	return t, req, nil
}

// CreateAuthorizeCodeSession stores an authorization code's request.
func (s *storage) CreateAuthorizeCodeSession(ctx context.Context, code string, req fosite.Requester) error {
	return s.create(ctx, kindCode, code, req)
}

// GetAuthorizeCodeSession returns the code's request; a used code is
// returned with fosite.ErrInvalidatedAuthorizeCode so fosite revokes the
// tokens issued from it.
func (s *storage) GetAuthorizeCodeSession(ctx context.Context, code string, _ fosite.Session) (fosite.Requester, error) {
	return s.get(ctx, kindCode, code, fosite.ErrInvalidatedAuthorizeCode)
}

// InvalidateAuthorizeCodeSession spends a code, in the redemption's
// transaction; the row stays so that a second use is recognised. Of
// redemptions racing for one code exactly one spends it; the others get
// errRedeemed.
func (s *storage) InvalidateAuthorizeCodeSession(ctx context.Context, code string) error {
	return spendErr(s.st.SpendGrantToken(ctx, kindCode, code))
}

// CreatePKCERequestSession stores the PKCE challenge of a code.
func (s *storage) CreatePKCERequestSession(ctx context.Context, signature string, req fosite.Requester) error {
	return s.create(ctx, kindPKCE, signature, req)
}

// GetPKCERequestSession returns the PKCE challenge's request.
func (s *storage) GetPKCERequestSession(ctx context.Context, signature string, _ fosite.Session) (fosite.Requester, error) {
	return s.get(ctx, kindPKCE, signature, nil)
}

// DeletePKCERequestSession keeps the PKCE challenge: it is removed with the
// code when both expire. fosite calls it after checking the verifier and
// before the redemption's transaction, so deleting it would make a racing
// exchange of the same code fail there, without being recognised as a
// reuse; spending the code is what decides the race.
func (s *storage) DeletePKCERequestSession(context.Context, string) error { return nil }

// CreateAccessTokenSession stores an access token's request.
func (s *storage) CreateAccessTokenSession(ctx context.Context, signature string, req fosite.Requester) error {
	return s.create(ctx, kindAccess, signature, req)
}

// GetAccessTokenSession returns an active access token's request.
func (s *storage) GetAccessTokenSession(ctx context.Context, signature string, _ fosite.Session) (fosite.Requester, error) {
	return s.get(ctx, kindAccess, signature, nil)
}

// DeleteAccessTokenSession removes an access token.
func (s *storage) DeleteAccessTokenSession(ctx context.Context, signature string) error {
	return s.st.DeleteGrantToken(ctx, kindAccess, signature)
}

// CreateRefreshTokenSession stores a refresh token's request.
func (s *storage) CreateRefreshTokenSession(ctx context.Context, signature, _ string, req fosite.Requester) error {
	return s.create(ctx, kindRefresh, signature, req)
}

// GetRefreshTokenSession returns a refresh token's request; a spent one is
// returned with fosite.ErrInactiveToken so fosite revokes the whole grant.
func (s *storage) GetRefreshTokenSession(ctx context.Context, signature string, _ fosite.Session) (fosite.Requester, error) {
	return s.get(ctx, kindRefresh, signature, fosite.ErrInactiveToken)
}

// DeleteRefreshTokenSession deactivates a refresh token; fosite calls it on
// a reused one. The row stays until it expires, so that each later reuse
// is recognised as one too, and a redemption racing with it sees the token
// spent rather than gone.
func (s *storage) DeleteRefreshTokenSession(ctx context.Context, signature string) error {
	err := s.st.SpendGrantToken(ctx, kindRefresh, signature)
	if errors.Is(err, store.ErrSpent) || errors.Is(err, store.ErrNotFound) {
		return nil
	}
	return err
}

// RotateRefreshToken spends the refresh token used (it stays, inactive, so
// its reuse is recognised) and revokes the grant's earlier access tokens,
// in the redemption's transaction. Of refreshes racing with one token
// exactly one spends it; the others get errRedeemed.
func (s *storage) RotateRefreshToken(ctx context.Context, requestID, signature string) error {
	if err := spendErr(s.st.SpendGrantToken(ctx, kindRefresh, signature)); err != nil {
		return err
	}
	return s.RevokeAccessToken(ctx, requestID)
}

// RevokeRefreshToken deactivates every refresh token of the grant.
func (s *storage) RevokeRefreshToken(ctx context.Context, requestID string) error {
	return s.st.DeactivateGrant(ctx, kindRefresh, requestID)
}

// RevokeAccessToken deactivates every access token of the grant.
func (s *storage) RevokeAccessToken(ctx context.Context, requestID string) error {
	return s.st.DeactivateGrant(ctx, kindAccess, requestID)
}

// spendErr maps SpendGrantToken's errors for a code or refresh token that
// fosite has just read as active: spent or gone since (a reuse spent the
// rest of the grant, the sweep removed it), another request got there
// first, and it is errRedeemed.
func spendErr(err error) error {
	if errors.Is(err, store.ErrSpent) || errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("%w: %w", errRedeemed, err)
	}
	return err
}

package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// App is an OAuth app: a client of the authorization server. Only a hash
// of a confidential app's client secret is kept; a public app has none.
type App struct {
	ClientID, OwnerID, Name string
	SecretHash              []byte // nil for a public app
	RedirectURIs            []string
	Scopes                  []string
	CreatedAt               time.Time
	RevokedAt               *time.Time
}

// Public reports whether the app has no client secret.
func (a App) Public() bool { return len(a.SecretHash) == 0 }

const appColumns = `client_id, owner_id, name, secret_hash, redirect_uris, scopes, created_at, revoked_at`

// CreateApp stores a. It returns ErrExists when the client id is taken, or
// a wrapped database error.
func (s *Store) CreateApp(ctx context.Context, a App) error {
	if a.ClientID == "" || a.OwnerID == "" || len(a.RedirectURIs) == 0 {
		return errors.New("create app: client id, owner id and a redirect URI are required")
	}
	uris, err := json.Marshal(a.RedirectURIs)
	if err != nil {
		return fmt.Errorf("create app: %w", err)
	}
	scopes, err := json.Marshal(nonNil(a.Scopes))
	if err != nil {
		return fmt.Errorf("create app: %w", err)
	}
	var secret any
	if len(a.SecretHash) > 0 {
		secret = a.SecretHash
	}
	n, err := s.Exec(ctx, `INSERT INTO guidepub_oauth_app (`+appColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (client_id) DO NOTHING`,
		a.ClientID, a.OwnerID, a.Name, secret, string(uris), string(scopes), micros(a.CreatedAt), optMicros(a.RevokedAt))
	if err != nil {
		return fmt.Errorf("create app %s: %w", a.ClientID, err)
	}
	if n == 0 {
		return fmt.Errorf("create app %s: %w", a.ClientID, ErrExists)
	}
	return nil
}

// App returns the app with clientID, revoked or not, or ErrNotFound.
func (s *Store) App(ctx context.Context, clientID string) (App, error) {
	a, err := scanApp(s.QueryRow(ctx, `SELECT `+appColumns+` FROM guidepub_oauth_app WHERE client_id = ?`, clientID))
	if err != nil {
		return App{}, fmt.Errorf("app %s: %w", clientID, err)
	}
	return a, nil
}

// Apps returns ownerID's apps ("" for every owner's), revoked ones
// included, ordered by client id.
func (s *Store) Apps(ctx context.Context, ownerID string) ([]App, error) {
	q := `SELECT ` + appColumns + ` FROM guidepub_oauth_app`
	var args []any
	if ownerID != "" {
		q += ` WHERE owner_id = ?`
		args = append(args, ownerID)
	}
	rows, err := s.Query(ctx, q+` ORDER BY client_id`, args...)
	if err != nil {
		return nil, fmt.Errorf("list apps: %w", err)
	}
	defer rows.Close()
	out := []App{}
	for rows.Next() {
		a, err := scanApp(rows)
		if err != nil {
			return nil, fmt.Errorf("list apps: %w", err)
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list apps: %w", err)
	}
	return out, nil
}

// RevokeApp marks clientID revoked at at and deactivates every token issued
// to it, in one transaction. Revoking a revoked app keeps the first time.
// It returns ErrNotFound for an unknown client id.
func (s *Store) RevokeApp(ctx context.Context, clientID string, at time.Time) error {
	if _, err := s.App(ctx, clientID); err != nil {
		return fmt.Errorf("revoke: %w", err)
	}
	return s.InTx(ctx, func(tx Tx) error {
		if _, err := tx.Exec(ctx, `UPDATE guidepub_oauth_app SET revoked_at = ? WHERE client_id = ? AND revoked_at IS NULL`,
			micros(at), clientID); err != nil {
			return fmt.Errorf("revoke app %s: %w", clientID, err)
		}
		if _, err := tx.Exec(ctx, `UPDATE guidepub_oauth_token SET active = 0 WHERE client_id = ?`, clientID); err != nil {
			return fmt.Errorf("revoke tokens of app %s: %w", clientID, err)
		}
		return nil
	})
}

func scanApp(r Row) (App, error) {
	var (
		a            App
		uris, scopes string
		created      int64
		revoked      *int64
	)
	// A NULL secret (a public app) scans as a nil slice on both drivers.
	if err := r.Scan(&a.ClientID, &a.OwnerID, &a.Name, &a.SecretHash, &uris, &scopes, &created, &revoked); err != nil {
		return App{}, err
	}
	if err := json.Unmarshal([]byte(uris), &a.RedirectURIs); err != nil {
		return App{}, fmt.Errorf("redirect URIs of %s: %w", a.ClientID, err)
	}
	if err := json.Unmarshal([]byte(scopes), &a.Scopes); err != nil {
		return App{}, fmt.Errorf("scopes of %s: %w", a.ClientID, err)
	}
	a.CreatedAt = fromMicros(created)
	a.RevokedAt = optTime(revoked)
	return a, nil
}

// SetOwnerPassword stores (or replaces) the password hash ownerID signs in
// with. The hash is an encoded argon2id string; the password is never stored.
func (s *Store) SetOwnerPassword(ctx context.Context, ownerID, hash string, at time.Time) error {
	if ownerID == "" || hash == "" {
		return errors.New("set owner password: owner id and hash are required")
	}
	_, err := s.Exec(ctx, `INSERT INTO guidepub_owner (owner_id, password_hash, updated_at) VALUES (?, ?, ?)
		ON CONFLICT (owner_id) DO UPDATE SET password_hash = excluded.password_hash, updated_at = excluded.updated_at`,
		ownerID, hash, micros(at))
	if err != nil {
		return fmt.Errorf("set password of %s: %w", ownerID, err)
	}
	return nil
}

// OwnerPassword returns ownerID's password hash, or ErrNotFound.
func (s *Store) OwnerPassword(ctx context.Context, ownerID string) (string, error) {
	var h string
	if err := s.QueryRow(ctx, `SELECT password_hash FROM guidepub_owner WHERE owner_id = ?`, ownerID).Scan(&h); err != nil {
		return "", fmt.Errorf("owner %s: %w", ownerID, err)
	}
	return h, nil
}

// GrantToken is one token of an OAuth grant (an authorization code, a PKCE
// record, an access token or a refresh token), keyed by kind and by its
// signature. Request is the serialised authorization request it belongs to.
type GrantToken struct {
	Kind, Signature, RequestID string
	ClientID, OwnerID          string
	Scopes                     []string
	Request                    []byte
	Active                     bool
	ExpiresAt, CreatedAt       time.Time
}

const grantColumns = `kind, signature, request_id, client_id, owner_id, scopes, request, active, expires_at, created_at`

// CreateGrantToken stores t, or returns ErrExists for a taken signature.
func (s *Store) CreateGrantToken(ctx context.Context, t GrantToken) error {
	scopes, err := json.Marshal(nonNil(t.Scopes))
	if err != nil {
		return fmt.Errorf("create %s token: %w", t.Kind, err)
	}
	n, err := s.Exec(ctx, `INSERT INTO guidepub_oauth_token (`+grantColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (kind, signature) DO NOTHING`,
		t.Kind, t.Signature, t.RequestID, t.ClientID, t.OwnerID, string(scopes), string(t.Request),
		boolInt(t.Active), micros(t.ExpiresAt), micros(t.CreatedAt))
	if err != nil {
		return fmt.Errorf("create %s token: %w", t.Kind, err)
	}
	if n == 0 {
		return fmt.Errorf("create %s token: %w", t.Kind, ErrExists)
	}
	return nil
}

// GrantToken returns the token of kind with signature, or ErrNotFound.
func (s *Store) GrantToken(ctx context.Context, kind, signature string) (GrantToken, error) {
	var (
		t                GrantToken
		scopes, req      string
		active           int64
		expires, created int64
	)
	err := s.QueryRow(ctx, `SELECT `+grantColumns+` FROM guidepub_oauth_token WHERE kind = ? AND signature = ?`, kind, signature).
		Scan(&t.Kind, &t.Signature, &t.RequestID, &t.ClientID, &t.OwnerID, &scopes, &req, &active, &expires, &created)
	if err != nil {
		return GrantToken{}, fmt.Errorf("%s token: %w", kind, err)
	}
	if err := json.Unmarshal([]byte(scopes), &t.Scopes); err != nil {
		return GrantToken{}, fmt.Errorf("%s token scopes: %w", kind, err)
	}
	t.Request = []byte(req)
	t.Active = active != 0
	t.ExpiresAt = fromMicros(expires)
	t.CreatedAt = fromMicros(created)
	return t, nil
}

// ErrSpent is returned by SpendGrantToken for a token that was already
// spent (a used code, a rotated refresh token) or revoked.
var ErrSpent = errors.New("already spent")

// SpendGrantToken marks one active token inactive (a spent code or refresh
// token stays, so that its reuse can be recognised). The update is
// conditional on the row being active and its effect is checked, so of
// many callers spending one token at once exactly one succeeds, on SQLite
// (writers take turns) and on PostgreSQL (the row lock makes the losers
// wait, then see the row inactive). It returns ErrSpent to the others, and
// ErrNotFound when there is no such token. It takes the grant's lock
// first (lockGrant).
func (s *Store) SpendGrantToken(ctx context.Context, kind, signature string) error {
	err := s.InTx(ctx, func(tx Tx) error {
		if s.dialect == Postgres {
			var requestID string
			if err := tx.QueryRow(ctx, `SELECT request_id FROM guidepub_oauth_token WHERE kind = ? AND signature = ?`, kind, signature).Scan(&requestID); err != nil {
				return err
			}
			if err := lockGrant(ctx, tx, requestID); err != nil {
				return err
			}
		}
		n, err := tx.Exec(ctx, `UPDATE guidepub_oauth_token SET active = 0 WHERE kind = ? AND signature = ? AND active = 1`, kind, signature)
		if err != nil || n == 1 {
			return err
		}
		var active int64
		if err := tx.QueryRow(ctx, `SELECT active FROM guidepub_oauth_token WHERE kind = ? AND signature = ?`, kind, signature).Scan(&active); err != nil {
			return err
		}
		return ErrSpent
	})
	if err != nil {
		return fmt.Errorf("spend %s token: %w", kind, err)
	}
	return nil
}

// grantLockClass is the first half of the PostgreSQL advisory lock key of
// a grant (lockGrant); the second is the hash of its request id.
const grantLockClass = 0x67706f61 // "gpoa"

// lockGrant takes, on PostgreSQL, the lock of the grant requestID for the
// rest of tx. Every change of a grant's tokens (spending one, revoking
// some or all) takes it before any row lock, so that the token endpoint's
// transactions over one grant, which lock its rows in different orders
// (a refresh spends its refresh token, then revokes the access tokens; a
// reuse revokes access, then refresh tokens), take turns instead of
// deadlocking. Grants that share a hash only take turns too. SQLite runs
// one writer at a time and needs none.
func lockGrant(ctx context.Context, tx Tx, requestID string) error {
	_, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(?::int4, hashtext(?::text))`, grantLockClass, requestID)
	return err
}

// DeactivateGrant marks every token of kind issued under requestID inactive.
func (s *Store) DeactivateGrant(ctx context.Context, kind, requestID string) error {
	if err := s.deactivateTokens(ctx, requestID, `kind = ? AND request_id = ?`, kind, requestID); err != nil {
		return fmt.Errorf("revoke %s tokens of grant: %w", kind, err)
	}
	return nil
}

// RevokeGrant marks every token issued under requestID inactive, of every
// kind: the whole grant.
func (s *Store) RevokeGrant(ctx context.Context, requestID string) error {
	if err := s.deactivateTokens(ctx, requestID, `request_id = ?`, requestID); err != nil {
		return fmt.Errorf("revoke grant: %w", err)
	}
	return nil
}

// deactivateTokens marks the active tokens of the grant requestID that
// match where inactive. Several requests revoke one grant at once when a
// code or refresh token is reused; on PostgreSQL each takes the grant's
// lock first (lockGrant), so they take turns. SQLite runs one writer at a
// time.
func (s *Store) deactivateTokens(ctx context.Context, requestID, where string, args ...any) error {
	q := `UPDATE guidepub_oauth_token SET active = 0 WHERE ` + where + ` AND active = 1`
	return s.InTx(ctx, func(tx Tx) error {
		if s.dialect == Postgres {
			if err := lockGrant(ctx, tx, requestID); err != nil {
				return err
			}
		}
		_, err := tx.Exec(ctx, q, args...)
		return err
	})
}

// DeleteGrantToken removes one token; removing an absent one is no error.
func (s *Store) DeleteGrantToken(ctx context.Context, kind, signature string) error {
	if _, err := s.Exec(ctx, `DELETE FROM guidepub_oauth_token WHERE kind = ? AND signature = ?`, kind, signature); err != nil {
		return fmt.Errorf("delete %s token: %w", kind, err)
	}
	return nil
}

// DeleteExpiredGrantTokens removes the tokens that expired before before
// and returns how many. Spent refresh tokens are kept until they expire, so
// that their reuse is still recognised.
func (s *Store) DeleteExpiredGrantTokens(ctx context.Context, before time.Time) (int64, error) {
	n, err := s.Exec(ctx, `DELETE FROM guidepub_oauth_token WHERE expires_at < ?`, micros(before))
	if err != nil {
		return 0, fmt.Errorf("delete expired OAuth tokens: %w", err)
	}
	return n, nil
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

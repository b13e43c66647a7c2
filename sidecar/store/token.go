package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Token is an API credential. Only a hash of its value is kept.
type Token struct {
	AppID, OwnerID string
	Scopes         []string
	Hash           []byte // SHA-256 of the token value; the value itself is never stored
	CreatedAt      time.Time
	ExpiresAt      *time.Time
	RevokedAt      *time.Time
}

// CreateToken stores t. It returns ErrExists when t.AppID is taken, or a
// wrapped database error.
func (s *Store) CreateToken(ctx context.Context, t Token) error {
	if t.AppID == "" || t.OwnerID == "" || len(t.Hash) == 0 {
		return errors.New("create token: app id, owner id and hash are required")
	}
	scopes := t.Scopes
	if scopes == nil {
		scopes = []string{}
	}
	scopesJSON, err := json.Marshal(scopes)
	if err != nil {
		return fmt.Errorf("create token: %w", err)
	}
	n, err := s.Exec(ctx, `INSERT INTO guidepub_token (app_id, owner_id, scopes, hash, created_at, expires_at, revoked_at)
		VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (app_id) DO NOTHING`,
		t.AppID, t.OwnerID, string(scopesJSON), t.Hash, micros(t.CreatedAt), optMicros(t.ExpiresAt), optMicros(t.RevokedAt))
	if err != nil {
		return fmt.Errorf("create token %s: %w", t.AppID, err)
	}
	if n == 0 {
		return fmt.Errorf("create token %s: %w", t.AppID, ErrExists)
	}
	return nil
}

const tokenColumns = `app_id, owner_id, scopes, hash, created_at, expires_at, revoked_at`

// Token returns the token with appID, or ErrNotFound.
func (s *Store) Token(ctx context.Context, appID string) (Token, error) {
	t, err := scanToken(s.QueryRow(ctx, `SELECT `+tokenColumns+` FROM guidepub_token WHERE app_id = ?`, appID))
	if err != nil {
		return Token{}, fmt.Errorf("token %s: %w", appID, err)
	}
	return t, nil
}

// Tokens returns ownerID's tokens ("" for every owner's), revoked ones
// included, ordered by app id. It returns a wrapped database error on failure.
func (s *Store) Tokens(ctx context.Context, ownerID string) ([]Token, error) {
	var (
		rows Rows
		err  error
	)
	if ownerID == "" {
		rows, err = s.Query(ctx, `SELECT `+tokenColumns+` FROM guidepub_token ORDER BY app_id`)
	} else {
		rows, err = s.Query(ctx, `SELECT `+tokenColumns+` FROM guidepub_token WHERE owner_id = ? ORDER BY app_id`, ownerID)
	}
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	defer rows.Close()
	out := []Token{}
	for rows.Next() {
		t, err := scanToken(rows)
		if err != nil {
			return nil, fmt.Errorf("list tokens: %w", err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	return out, nil
}

// RevokeToken marks appID revoked at at. Revoking a revoked token keeps the
// first time and returns nil. It returns ErrNotFound for an unknown app id.
func (s *Store) RevokeToken(ctx context.Context, appID string, at time.Time) error {
	n, err := s.Exec(ctx, `UPDATE guidepub_token SET revoked_at = ? WHERE app_id = ? AND revoked_at IS NULL`, micros(at), appID)
	if err != nil {
		return fmt.Errorf("revoke token %s: %w", appID, err)
	}
	if n > 0 {
		return nil
	}
	if _, err := s.Token(ctx, appID); err != nil {
		return fmt.Errorf("revoke: %w", err)
	}
	return nil
}

func scanToken(r Row) (Token, error) {
	var (
		t                Token
		scopes           string
		created          int64
		expires, revoked *int64
	)
	if err := r.Scan(&t.AppID, &t.OwnerID, &scopes, &t.Hash, &created, &expires, &revoked); err != nil {
		return Token{}, err
	}
	if err := json.Unmarshal([]byte(scopes), &t.Scopes); err != nil {
		return Token{}, fmt.Errorf("scopes of %s: %w", t.AppID, err)
	}
	t.CreatedAt = fromMicros(created)
	t.ExpiresAt = optTime(expires)
	t.RevokedAt = optTime(revoked)
	return t, nil
}

// Secret returns the named secret, creating it once with create
// (race-safe across processes: the first stored value wins and every caller
// gets it). It returns create's error or a wrapped database error.
func (s *Store) Secret(ctx context.Context, name string, create func() ([]byte, error)) ([]byte, error) {
	var v []byte
	err := s.QueryRow(ctx, `SELECT value FROM guidepub_secret WHERE name = ?`, name).Scan(&v)
	if err == nil {
		return v, nil
	}
	if !errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("secret %s: %w", name, err)
	}
	fresh, err := create()
	if err != nil {
		return nil, fmt.Errorf("create secret %s: %w", name, err)
	}
	if len(fresh) == 0 {
		return nil, fmt.Errorf("create secret %s: empty value", name)
	}
	if _, err := s.Exec(ctx, `INSERT INTO guidepub_secret (name, value, created_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING`,
		name, fresh, time.Now().UnixMicro()); err != nil {
		return nil, fmt.Errorf("store secret %s: %w", name, err)
	}
	if err := s.QueryRow(ctx, `SELECT value FROM guidepub_secret WHERE name = ?`, name).Scan(&v); err != nil {
		return nil, fmt.Errorf("secret %s: %w", name, err)
	}
	return v, nil
}

func micros(t time.Time) int64 { return t.UnixMicro() }

func optMicros(t *time.Time) *int64 {
	if t == nil {
		return nil
	}
	v := t.UnixMicro()
	return &v
}

// fromMicros turns a stored time back into a UTC time.Time.
func fromMicros(v int64) time.Time { return time.UnixMicro(v).UTC() }

func optTime(v *int64) *time.Time {
	if v == nil {
		return nil
	}
	t := fromMicros(*v)
	return &t
}

// Micros returns t as stored: unix microseconds.
func Micros(t time.Time) int64 { return micros(t) }

// FromMicros turns a stored unix-microsecond value into a UTC time.
func FromMicros(v int64) time.Time { return fromMicros(v) }

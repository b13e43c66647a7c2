package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
)

// migrations are guidepub's schema changes, applied in order, each once.
// {bytes} becomes BLOB on SQLite and BYTEA on PostgreSQL. Times are unix
// microseconds (UTC) in BIGINT columns, the same on both databases.
var migrations = []string{
	// 1: credentials and secrets.
	`CREATE TABLE guidepub_token (
		app_id     TEXT PRIMARY KEY,
		owner_id   TEXT NOT NULL,
		scopes     TEXT NOT NULL,
		hash       {bytes} NOT NULL,
		created_at BIGINT NOT NULL,
		expires_at BIGINT,
		revoked_at BIGINT
	);
	CREATE INDEX guidepub_token_owner ON guidepub_token (owner_id, app_id);
	CREATE TABLE guidepub_secret (
		name       TEXT PRIMARY KEY,
		value      {bytes} NOT NULL,
		created_at BIGINT NOT NULL
	);`,
	// 2: webhook deliveries and their attempts. round_start is the number of
	// attempts made before the last manual re-send: the attempt budget
	// counts from there.
	`CREATE TABLE guidepub_delivery (
		id         TEXT PRIMARY KEY,
		guide_id   TEXT NOT NULL,
		revision   TEXT NOT NULL,
		url        TEXT NOT NULL,
		secret     TEXT NOT NULL,
		webhook_id TEXT NOT NULL,
		body       {bytes} NOT NULL,
		state      TEXT NOT NULL,
		unique_key TEXT UNIQUE,
		round_start INTEGER NOT NULL DEFAULT 0,
		created_at BIGINT NOT NULL,
		updated_at BIGINT NOT NULL
	);
	CREATE INDEX guidepub_delivery_guide ON guidepub_delivery (guide_id, created_at, id);
	CREATE INDEX guidepub_delivery_state ON guidepub_delivery (state);
	CREATE TABLE guidepub_attempt (
		delivery_id TEXT NOT NULL REFERENCES guidepub_delivery (id) ON DELETE CASCADE,
		n           INTEGER NOT NULL,
		at          BIGINT NOT NULL,
		status_code INTEGER NOT NULL,
		error       TEXT NOT NULL,
		duration_ms BIGINT NOT NULL,
		PRIMARY KEY (delivery_id, n)
	);`,
	// 3: OAuth apps, owners' sign-in passwords and the OAuth grant tokens.
	// A token row is keyed by its kind and signature (an HMAC of the token:
	// the token itself is never stored); request_id groups every token of
	// one grant, so one grant can be revoked at once.
	`CREATE TABLE guidepub_oauth_app (
		client_id     TEXT PRIMARY KEY,
		owner_id      TEXT NOT NULL,
		name          TEXT NOT NULL,
		secret_hash   {bytes},
		redirect_uris TEXT NOT NULL,
		scopes        TEXT NOT NULL,
		created_at    BIGINT NOT NULL,
		revoked_at    BIGINT
	);
	CREATE INDEX guidepub_oauth_app_owner ON guidepub_oauth_app (owner_id, client_id);
	CREATE TABLE guidepub_owner (
		owner_id      TEXT PRIMARY KEY,
		password_hash TEXT NOT NULL,
		updated_at    BIGINT NOT NULL
	);
	CREATE TABLE guidepub_oauth_token (
		kind       TEXT NOT NULL,
		signature  TEXT NOT NULL,
		request_id TEXT NOT NULL,
		client_id  TEXT NOT NULL,
		owner_id   TEXT NOT NULL,
		scopes     TEXT NOT NULL,
		request    TEXT NOT NULL,
		active     INTEGER NOT NULL,
		expires_at BIGINT NOT NULL,
		created_at BIGINT NOT NULL,
		PRIMARY KEY (kind, signature)
	);
	CREATE INDEX guidepub_oauth_token_request ON guidepub_oauth_token (request_id, kind);
	CREATE INDEX guidepub_oauth_token_client ON guidepub_oauth_token (client_id);
	CREATE INDEX guidepub_oauth_token_expiry ON guidepub_oauth_token (expires_at);`,
}

// migrateLockKey is the PostgreSQL advisory lock that serialises migrations
// of several sidecars starting at once ("guidepub" in ASCII, truncated).
const migrateLockKey = 0x6775696465707562

// migrate applies guidepub's migrations and River's. On PostgreSQL River's
// run in transactions of River's own (some cannot share one), and a session
// advisory lock keeps several sidecars starting at once from migrating side
// by side; on SQLite one write transaction does all.
func (s *Store) migrate(ctx context.Context) error {
	if s.dialect == Postgres {
		conn, err := s.pool.Acquire(ctx)
		if err != nil {
			return err
		}
		defer conn.Release()
		if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, int64(migrateLockKey)); err != nil {
			return fmt.Errorf("lock: %w", err)
		}
		defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, int64(migrateLockKey))
		if err := s.InTx(ctx, func(tx Tx) error { return s.migrateGuidepub(ctx, tx) }); err != nil {
			return err
		}
		return s.migrateRiver(ctx)
	}
	// SQLite: everything in one BEGIN IMMEDIATE transaction, so a second
	// process opening the same new file waits for the first and then finds
	// the tables made. River's SQLite migrations run fine in one transaction.
	return s.InTx(ctx, func(tx Tx) error {
		if err := s.migrateGuidepub(ctx, tx); err != nil {
			return err
		}
		m, err := rivermigrate.New(riversqlite.New(s.db), &rivermigrate.Config{Logger: RiverLogger(s.logger)})
		if err != nil {
			return fmt.Errorf("river migrator: %w", err)
		}
		//lint:ignore SA1019 deprecated because some PostgreSQL migrations cannot share a transaction; SQLite's can, and one transaction is what serialises processes.
		res, err := m.MigrateTx(ctx, tx.Raw().(*sql.Tx), rivermigrate.DirectionUp, nil)
		if err != nil {
			return fmt.Errorf("river migrations: %w", err)
		}
		if len(res.Versions) > 0 {
			s.logger.Debug("river tables migrated", "versions", len(res.Versions), "dialect", s.dialect)
		}
		return nil
	})
}

// migrateGuidepub applies guidepub's own migrations in tx.
func (s *Store) migrateGuidepub(ctx context.Context, tx Tx) error {
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS guidepub_migration (
		version    BIGINT PRIMARY KEY,
		applied_at BIGINT NOT NULL
	)`); err != nil {
		return err
	}
	var have int64
	if err := tx.QueryRow(ctx, `SELECT COALESCE(MAX(version), 0) FROM guidepub_migration`).Scan(&have); err != nil {
		return err
	}
	bytesType := "BLOB"
	if s.dialect == Postgres {
		bytesType = "BYTEA"
	}
	for i := int(have); i < len(migrations); i++ {
		for _, stmt := range strings.Split(migrations[i], ";") {
			if strings.TrimSpace(stmt) == "" {
				continue
			}
			if _, err := tx.Exec(ctx, strings.ReplaceAll(stmt, "{bytes}", bytesType)); err != nil {
				return fmt.Errorf("guidepub migration %d: %w", i+1, err)
			}
		}
		if _, err := tx.Exec(ctx, `INSERT INTO guidepub_migration (version, applied_at) VALUES (?, ?)`,
			int64(i+1), time.Now().UnixMicro()); err != nil {
			return fmt.Errorf("guidepub migration %d: %w", i+1, err)
		}
		s.logger.Debug("store migrated", "version", i+1, "dialect", s.dialect)
	}
	return nil
}

// migrateRiver brings River's PostgreSQL tables up to the version of the
// linked River.
func (s *Store) migrateRiver(ctx context.Context) error {
	m, err := rivermigrate.New(riverpgxv5.New(s.pool), &rivermigrate.Config{Logger: RiverLogger(s.logger)})
	if err != nil {
		return fmt.Errorf("river migrator: %w", err)
	}
	res, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil)
	if err != nil {
		return fmt.Errorf("river migrations: %w", err)
	}
	if len(res.Versions) > 0 {
		s.logger.Info("river tables migrated", "versions", len(res.Versions), "dialect", s.dialect)
	}
	return nil
}

// Package store keeps the sidecar's durable state in a real database:
// API tokens (as hashes), named secrets, webhook deliveries with their
// attempts, and River's job tables. SQLite in one file is the embedded
// default; a postgres:// URL lets several sidecars share one database.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"modernc.org/sqlite" // the pure-Go SQLite driver, registered as "sqlite"
)

// Dialect names returned by Store.Dialect.
const (
	SQLite   = "sqlite"
	Postgres = "postgres"
)

// ErrNotFound is returned when a token, secret or delivery does not exist.
var ErrNotFound = errors.New("not found")

// ErrExists is returned by CreateToken when the app id is already taken.
var ErrExists = errors.New("already exists")

// sqliteBusyTimeoutMS is how long a SQLite statement waits for a lock held
// by another connection or process before it fails with SQLITE_BUSY.
const sqliteBusyTimeoutMS = 10000

// defaultPgMaxConns is the PostgreSQL pool size unless the URL sets
// pool_max_conns.
const defaultPgMaxConns = 20

// minPgConns is the smallest pool Open accepts: River's listener and the
// migration lock each hold a connection while other work needs more.
const minPgConns = 4

// Store is an open database. It is safe for concurrent use.
type Store struct {
	dialect string
	db      *sql.DB       // SQLite
	path    string        // SQLite: the file's absolute path
	pool    *pgxpool.Pool // PostgreSQL
	logger  *slog.Logger
}

// IsPostgresURL reports whether dsn names a PostgreSQL database rather than
// a SQLite file.
func IsPostgresURL(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// Open opens a postgres:// (or postgresql://) URL, else a SQLite file path
// (created if missing; WAL, synchronous=FULL, busy timeout). It migrates
// guidepub's tables and River's. On error nothing stays open.
func Open(ctx context.Context, dsn string, logger *slog.Logger) (*Store, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if dsn == "" {
		return nil, errors.New("open store: empty database path or URL")
	}
	s := &Store{logger: logger}
	if IsPostgresURL(dsn) {
		cfg, err := pgxpool.ParseConfig(dsn)
		if err != nil {
			return nil, fmt.Errorf("open store: parse PostgreSQL URL: %w", err)
		}
		if !strings.Contains(dsn, "pool_max_conns") {
			// pgxpool's default (max(4, CPUs)) starves a queue with many
			// workers: River's producer, completer and listener hold
			// connections too.
			cfg.MaxConns = max(cfg.MaxConns, defaultPgMaxConns)
		}
		if cfg.MaxConns < minPgConns {
			return nil, fmt.Errorf("open store: pool_max_conns is %d, need at least %d (the delivery queue holds connections while it works)", cfg.MaxConns, minPgConns)
		}
		pool, err := pgxpool.NewWithConfig(ctx, cfg)
		if err != nil {
			return nil, fmt.Errorf("open store: connect PostgreSQL: %w", err)
		}
		if err := pool.Ping(ctx); err != nil {
			pool.Close()
			return nil, fmt.Errorf("open store: connect PostgreSQL %s:%d: %w", cfg.ConnConfig.Host, cfg.ConnConfig.Port, err)
		}
		s.dialect, s.pool = Postgres, pool
	} else {
		db, err := openSQLite(ctx, dsn)
		if err != nil {
			return nil, err
		}
		s.dialect, s.db = SQLite, db
		if s.path, err = filepath.Abs(dsn); err != nil {
			db.Close()
			return nil, fmt.Errorf("open store: %w", err)
		}
	}
	if err := s.migrate(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("open store: migrate: %w", err)
	}
	return s, nil
}

// openSQLite opens the file at path with durable settings. River's SQLite
// driver asks for a single connection, which also serialises writers inside
// one process; busy_timeout and BEGIN IMMEDIATE handle other processes.
func openSQLite(ctx context.Context, path string) (*sql.DB, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	if dir := filepath.Dir(abs); dir != "" {
		if _, err := os.Stat(dir); err != nil {
			return nil, fmt.Errorf("open store: folder of SQLite file: %w", err)
		}
	}
	// The store holds token hashes, the signing key and webhook secrets:
	// a new file is readable by its owner only (SQLite gives the -wal and
	// -shm files the same mode).
	if f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
		f.Close()
	} else if !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("open store: create SQLite file: %w", err)
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout("+fmt.Sprint(sqliteBusyTimeoutMS)+")")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(FULL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Set("_txlock", "immediate")
	u := url.URL{Scheme: "file", OmitHost: true, Path: filepath.ToSlash(abs), RawQuery: q.Encode()}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return nil, fmt.Errorf("open store: SQLite %s: %w", abs, err)
	}
	db.SetMaxOpenConns(1)
	db.SetConnMaxIdleTime(0)
	db.SetConnMaxLifetime(0)
	if err := pingSQLite(ctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("open store: SQLite %s: %w", abs, err)
	}
	return db, nil
}

// pingSQLite opens the first connection, which applies the pragmas. When
// several processes open a new file at once, switching it to WAL can fail
// with SQLITE_BUSY without waiting on busy_timeout, so a busy error is
// retried for as long as busy_timeout would have waited.
func pingSQLite(ctx context.Context, db *sql.DB) error {
	deadline := time.Now().Add(sqliteBusyTimeoutMS * time.Millisecond)
	for wait := time.Millisecond; ; wait = min(2*wait, 100*time.Millisecond) {
		err := db.PingContext(ctx)
		var se *sqlite.Error
		if err == nil || !errors.As(err, &se) || se.Code()&0xff != sqliteBusy || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
	}
}

// sqliteBusy is SQLITE_BUSY, the primary result code of every busy error.
const sqliteBusy = 5

// Close closes the database. River clients using it must be stopped first.
func (s *Store) Close() error {
	if s.pool != nil {
		s.pool.Close()
	}
	if s.db != nil {
		return s.db.Close()
	}
	return nil
}

// Dialect returns "sqlite" or "postgres".
func (s *Store) Dialect() string { return s.dialect }

// SQLDB returns the SQLite handle (for River's riversqlite driver), or nil
// on PostgreSQL.
func (s *Store) SQLDB() *sql.DB { return s.db }

// SQLitePath returns the absolute path of the SQLite file, or "" on
// PostgreSQL.
func (s *Store) SQLitePath() string { return s.path }

// PgPool returns the PostgreSQL pool (for River's riverpgxv5 driver), or nil
// on SQLite.
func (s *Store) PgPool() *pgxpool.Pool { return s.pool }

// Logger returns the logger the store was opened with.
func (s *Store) Logger() *slog.Logger { return s.logger }

// Row is one result row; Scan returns ErrNotFound when there was none.
type Row interface {
	Scan(dest ...any) error
}

// Rows is a result set. Close must be called; Err reports the first error.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

// Querier runs SQL written with ? placeholders on either database. Nullable
// columns scan into pointer-to-pointer destinations (**int64).
type Querier interface {
	// Exec runs a statement and returns the number of rows it affected.
	Exec(ctx context.Context, query string, args ...any) (int64, error)
	QueryRow(ctx context.Context, query string, args ...any) Row
	Query(ctx context.Context, query string, args ...any) (Rows, error)
}

// Tx is a transaction. Raw returns the driver's own transaction (*sql.Tx
// on SQLite, pgx.Tx on PostgreSQL), for River's InsertTx.
type Tx interface {
	Querier
	Raw() any
}

var (
	_ Querier = (*Store)(nil)
	_ Tx      = sqlTx{}
	_ Tx      = pgTx{}
)

// rebind turns ? placeholders into $n for PostgreSQL. guidepub's queries
// never hold a literal question mark.
func (s *Store) rebind(q string) string {
	if s.dialect != Postgres || !strings.Contains(q, "?") {
		return q
	}
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Exec runs query outside a transaction (or in the one ctx carries, see
// BeginInContext) and returns the rows it affected, or the driver's error.
func (s *Store) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	if tx := txFrom(ctx); tx != nil {
		return tx.Exec(ctx, query, args...)
	}
	if s.pool != nil {
		tag, err := s.pool.Exec(ctx, s.rebind(query), args...)
		return tag.RowsAffected(), err
	}
	res, err := s.db.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// QueryRow runs query outside a transaction (or in the one ctx carries);
// its Scan returns ErrNotFound for no row, else the driver's error.
func (s *Store) QueryRow(ctx context.Context, query string, args ...any) Row {
	if tx := txFrom(ctx); tx != nil {
		return tx.QueryRow(ctx, query, args...)
	}
	if s.pool != nil {
		return pgRow{s.pool.QueryRow(ctx, s.rebind(query), args...)}
	}
	return sqlRow{s.db.QueryRowContext(ctx, query, args...)}
}

// Query runs query outside a transaction (or in the one ctx carries) and
// returns its rows (to be closed), or the driver's error.
func (s *Store) Query(ctx context.Context, query string, args ...any) (Rows, error) {
	if tx := txFrom(ctx); tx != nil {
		return tx.Query(ctx, query, args...)
	}
	if s.pool != nil {
		rows, err := s.pool.Query(ctx, s.rebind(query), args...)
		if err != nil {
			return nil, err
		}
		return pgRows{rows}, nil
	}
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return &sqlRows{Rows: rows}, nil
}

// InTx runs fn in a transaction, committed when fn returns nil and rolled
// back otherwise. It returns fn's error or the commit's. On SQLite the
// transaction takes the write lock at BEGIN (BEGIN IMMEDIATE), so two
// processes never deadlock upgrading a read lock. When ctx carries a
// transaction (BeginInContext), fn runs in it and it is left open.
func (s *Store) InTx(ctx context.Context, fn func(tx Tx) error) error {
	if tx := txFrom(ctx); tx != nil {
		return fn(tx)
	}
	if s.pool != nil {
		tx, err := s.pool.Begin(ctx)
		if err != nil {
			return fmt.Errorf("begin: %w", err)
		}
		if err := fn(pgTx{tx: tx, s: s}); err != nil {
			_ = tx.Rollback(context.WithoutCancel(ctx))
			return err
		}
		if err := tx.Commit(ctx); err != nil {
			return fmt.Errorf("commit: %w", err)
		}
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := fn(sqlTx{tx}); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// ctxTx is the transaction a context carries, with what ends it.
type ctxTx struct {
	Tx
	commit, rollback func(context.Context) error
}

type ctxTxKey struct{}

func txFrom(ctx context.Context) *ctxTx {
	tx, _ := ctx.Value(ctxTxKey{}).(*ctxTx)
	return tx
}

// BeginInContext begins a transaction and returns a context carrying it:
// every query the Store runs with that context (and so every Store method
// given it) runs in the transaction, until CommitInContext or
// RollbackInContext ends it. It is for libraries that hand transactions
// around in contexts, such as fosite's storage.Transactional. On SQLite
// the transaction holds the one connection: nothing may query the Store
// with another context before it ends. It returns an error when ctx
// already carries a transaction, or the driver's.
func (s *Store) BeginInContext(ctx context.Context) (context.Context, error) {
	if txFrom(ctx) != nil {
		return ctx, errors.New("begin: the context already carries a transaction")
	}
	var t *ctxTx
	if s.pool != nil {
		tx, err := s.pool.Begin(ctx)
		if err != nil {
			return ctx, fmt.Errorf("begin: %w", err)
		}
		t = &ctxTx{Tx: pgTx{tx: tx, s: s}, commit: tx.Commit, rollback: tx.Rollback}
	} else {
		tx, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			return ctx, fmt.Errorf("begin: %w", err)
		}
		t = &ctxTx{Tx: sqlTx{tx},
			commit:   func(context.Context) error { return tx.Commit() },
			rollback: func(context.Context) error { return tx.Rollback() }}
	}
	return context.WithValue(ctx, ctxTxKey{}, t), nil
}

// CommitInContext commits the transaction ctx carries. It returns an error
// when there is none, or the commit's.
func (s *Store) CommitInContext(ctx context.Context) error {
	t := txFrom(ctx)
	if t == nil {
		return errors.New("commit: the context carries no transaction")
	}
	if err := t.commit(ctx); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// RollbackInContext rolls back the transaction ctx carries. It returns an
// error when there is none, or the driver's.
func (s *Store) RollbackInContext(ctx context.Context) error {
	t := txFrom(ctx)
	if t == nil {
		return errors.New("rollback: the context carries no transaction")
	}
	if err := t.rollback(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("rollback: %w", err)
	}
	return nil
}

// Stmt is one statement of ExecAtomic.
type Stmt struct {
	Query string // with ? placeholders
	Args  []any
}

// ExecAtomic runs stmts as one transaction: on PostgreSQL in a single
// round trip (a pgx batch, which the server runs as one implicit
// transaction), on SQLite in InTx. It returns the first statement's error
// (naming its index) or the commit's; on error nothing is applied.
func (s *Store) ExecAtomic(ctx context.Context, stmts ...Stmt) error {
	if s.pool != nil && txFrom(ctx) == nil {
		b := &pgx.Batch{}
		for _, st := range stmts {
			b.Queue(s.rebind(st.Query), st.Args...)
		}
		br := s.pool.SendBatch(ctx, b)
		for i := range stmts {
			if _, err := br.Exec(); err != nil {
				_ = br.Close()
				return fmt.Errorf("statement %d: %w", i+1, err)
			}
		}
		return br.Close()
	}
	return s.InTx(ctx, func(tx Tx) error {
		for i, st := range stmts {
			if _, err := tx.Exec(ctx, st.Query, st.Args...); err != nil {
				return fmt.Errorf("statement %d: %w", i+1, err)
			}
		}
		return nil
	})
}

type sqlTx struct{ tx *sql.Tx }

func (t sqlTx) Raw() any { return t.tx }

func (t sqlTx) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := t.tx.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (t sqlTx) QueryRow(ctx context.Context, query string, args ...any) Row {
	return sqlRow{t.tx.QueryRowContext(ctx, query, args...)}
}

func (t sqlTx) Query(ctx context.Context, query string, args ...any) (Rows, error) {
	rows, err := t.tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return &sqlRows{Rows: rows}, nil
}

type pgTx struct {
	tx pgx.Tx
	s  *Store
}

func (t pgTx) Raw() any { return t.tx }

func (t pgTx) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	tag, err := t.tx.Exec(ctx, t.s.rebind(query), args...)
	return tag.RowsAffected(), err
}

func (t pgTx) QueryRow(ctx context.Context, query string, args ...any) Row {
	return pgRow{t.tx.QueryRow(ctx, t.s.rebind(query), args...)}
}

func (t pgTx) Query(ctx context.Context, query string, args ...any) (Rows, error) {
	rows, err := t.tx.Query(ctx, t.s.rebind(query), args...)
	if err != nil {
		return nil, err
	}
	return pgRows{rows}, nil
}

type sqlRow struct{ r *sql.Row }

func (r sqlRow) Scan(dest ...any) error {
	err := r.r.Scan(dest...)
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	return err
}

type pgRow struct{ r pgx.Row }

func (r pgRow) Scan(dest ...any) error {
	err := r.r.Scan(dest...)
	if errors.Is(err, pgx.ErrNoRows) {
		return ErrNotFound
	}
	return err
}

type sqlRows struct {
	*sql.Rows
}

func (r *sqlRows) Close() { _ = r.Rows.Close() }

type pgRows struct{ pgx.Rows }

func (r pgRows) Err() error { return r.Rows.Err() }

// IsUniqueViolation reports whether err is a unique-constraint failure on
// either database.
func IsUniqueViolation(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == "23505"
	}
	return err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed")
}

// IsRetryable reports whether err is a transaction that PostgreSQL rolled
// back to break a deadlock (40P01) or a serialization failure (40001):
// nothing it did was kept, and running it again is the documented remedy.
func IsRetryable(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "40P01" || pgErr.Code == "40001")
}

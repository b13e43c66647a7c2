package store_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/guidepub/guidepub/sidecar/store"
	"github.com/guidepub/guidepub/sidecar/store/storetest"
)

// backends opens a fresh store of each kind for a test.
var backends = []struct {
	name string
	dsn  func(t testing.TB) string
}{
	{"sqlite", storetest.SQLite},
	{"postgres", storetest.Postgres},
}

func open(t *testing.T, dsn string) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), dsn, nil)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func TestOpenDialectAndReopen(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			st := open(t, dsn)
			if st.Dialect() != b.name {
				t.Errorf("Dialect = %q, want %q", st.Dialect(), b.name)
			}
			ctx := context.Background()
			hash := sha256.Sum256([]byte("v"))
			if err := st.CreateToken(ctx, store.Token{AppID: "a1", OwnerID: "o", Hash: hash[:], CreatedAt: time.Unix(5, 0)}); err != nil {
				t.Fatal(err)
			}
			st.Close()
			// Reopening migrates nothing new and keeps the data.
			st2 := open(t, dsn)
			if _, err := st2.Token(ctx, "a1"); err != nil {
				t.Fatalf("token after reopen: %v", err)
			}
		})
	}
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	cases := map[string]string{
		"empty":          "",
		"missing folder": filepath.Join(t.TempDir(), "nope", "x.db"),
		"bad postgres":   "postgres://nobody@127.0.0.1:1/none?sslmode=disable&connect_timeout=2",
		"tiny pool":      "postgres://nobody@127.0.0.1:1/none?sslmode=disable&pool_max_conns=1",
	}
	for name, dsn := range cases {
		t.Run(name, func(t *testing.T) {
			if st, err := store.Open(ctx, dsn, nil); err == nil {
				st.Close()
				t.Fatalf("Open(%q) succeeded", dsn)
			}
		})
	}
}

func TestSQLiteSettings(t *testing.T) {
	st := open(t, storetest.SQLite(t))
	ctx := context.Background()
	for pragma, want := range map[string]string{"journal_mode": "wal", "synchronous": "2", "busy_timeout": "10000", "foreign_keys": "1"} {
		var got string
		if err := st.QueryRow(ctx, "PRAGMA "+pragma).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("PRAGMA %s = %s, want %s", pragma, got, want)
		}
	}
}

func TestTokens(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			st := open(t, b.dsn(t))
			ctx := context.Background()
			created := time.Date(2026, 1, 2, 3, 4, 5, 123456000, time.UTC)
			expires := created.Add(21 * 24 * time.Hour)
			h1 := sha256.Sum256([]byte("one"))
			h2 := sha256.Sum256([]byte("two"))
			h3 := sha256.Sum256([]byte("three"))
			toks := []store.Token{
				{AppID: "b", OwnerID: "alice", Scopes: []string{"guide.events", "guide.read"}, Hash: h1[:], CreatedAt: created, ExpiresAt: &expires},
				{AppID: "a", OwnerID: "alice", Scopes: nil, Hash: h2[:], CreatedAt: created},
				{AppID: "c", OwnerID: "bob", Scopes: []string{"guide.list"}, Hash: h3[:], CreatedAt: created},
			}
			for _, tok := range toks {
				if err := st.CreateToken(ctx, tok); err != nil {
					t.Fatalf("CreateToken %s: %v", tok.AppID, err)
				}
			}
			if err := st.CreateToken(ctx, toks[0]); !errors.Is(err, store.ErrExists) {
				t.Errorf("duplicate CreateToken: %v, want ErrExists", err)
			}
			if err := st.CreateToken(ctx, store.Token{AppID: "x"}); err == nil {
				t.Error("CreateToken without owner and hash succeeded")
			}

			got, err := st.Token(ctx, "b")
			if err != nil {
				t.Fatal(err)
			}
			if got.OwnerID != "alice" || !bytes.Equal(got.Hash, h1[:]) || fmt.Sprint(got.Scopes) != "[guide.events guide.read]" ||
				!got.CreatedAt.Equal(created) || got.ExpiresAt == nil || !got.ExpiresAt.Equal(expires) || got.RevokedAt != nil {
				t.Errorf("Token(b) = %+v", got)
			}
			if _, err := st.Token(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("Token(nope): %v, want ErrNotFound", err)
			}

			for _, tc := range []struct{ owner, want string }{{"alice", "[a b]"}, {"bob", "[c]"}, {"", "[a b c]"}, {"carol", "[]"}} {
				list, err := st.Tokens(ctx, tc.owner)
				if err != nil {
					t.Fatal(err)
				}
				ids := []string{}
				for _, tok := range list {
					ids = append(ids, tok.AppID)
				}
				if fmt.Sprint(ids) != tc.want {
					t.Errorf("Tokens(%q) = %v, want %s", tc.owner, ids, tc.want)
				}
			}

			at := created.Add(time.Hour)
			if err := st.RevokeToken(ctx, "a", at); err != nil {
				t.Fatal(err)
			}
			if err := st.RevokeToken(ctx, "a", at.Add(time.Hour)); err != nil {
				t.Fatalf("second revoke: %v", err)
			}
			got, _ = st.Token(ctx, "a")
			if got.RevokedAt == nil || !got.RevokedAt.Equal(at) {
				t.Errorf("RevokedAt = %v, want %v (first revocation kept)", got.RevokedAt, at)
			}
			if err := st.RevokeToken(ctx, "nope", at); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("RevokeToken(nope): %v, want ErrNotFound", err)
			}
		})
	}
}

func TestSecretCreatedOnce(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			ctx := context.Background()
			// Several stores (separate pools, as separate processes would
			// have) race to create the same secret.
			const n = 8
			stores := make([]*store.Store, 4)
			for i := range stores {
				stores[i] = open(t, dsn)
			}
			var (
				wg      sync.WaitGroup
				mu      sync.Mutex
				created int
				got     = make([][]byte, n)
				errs    = make([]error, n)
			)
			start := make(chan struct{})
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					got[i], errs[i] = stores[i%len(stores)].Secret(ctx, "authtoken", func() ([]byte, error) {
						mu.Lock()
						created++
						mu.Unlock()
						return fmt.Appendf(nil, "value-%d", i), nil
					})
				}()
			}
			close(start)
			wg.Wait()
			for i := range n {
				if errs[i] != nil {
					t.Fatalf("Secret %d: %v", i, errs[i])
				}
				if !bytes.Equal(got[i], got[0]) {
					t.Errorf("caller %d got %q, caller 0 got %q", i, got[i], got[0])
				}
			}
			if created == 0 {
				t.Error("create was never called")
			}
			// Once stored, create is not called again.
			v, err := stores[0].Secret(ctx, "authtoken", func() ([]byte, error) { return nil, errors.New("must not be called") })
			if err != nil || !bytes.Equal(v, got[0]) {
				t.Errorf("Secret again = %q, %v", v, err)
			}
			if _, err := stores[0].Secret(ctx, "other", func() ([]byte, error) { return nil, errors.New("boom") }); err == nil {
				t.Error("create's error was not returned")
			}
		})
	}
}

func TestSQLiteFileCreated(t *testing.T) {
	dsn := filepath.Join(t.TempDir(), "with space#and%.db")
	open(t, dsn)
	fi, err := os.Stat(dsn)
	if err != nil {
		t.Fatalf("SQLite file not created at %s: %v", dsn, err)
	}
	// It holds token hashes, the signing key and webhook secrets.
	if perm := fi.Mode().Perm(); perm != 0o600 {
		t.Errorf("SQLite file mode %o, want 600", perm)
	}
}

func TestExecAtomic(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			st := open(t, b.dsn(t))
			ctx := context.Background()
			ins := `INSERT INTO guidepub_secret (name, value, created_at) VALUES (?, ?, ?)`
			if err := st.ExecAtomic(ctx,
				store.Stmt{Query: ins, Args: []any{"a", []byte("1"), int64(1)}},
				store.Stmt{Query: ins, Args: []any{"b", []byte("2"), int64(2)}}); err != nil {
				t.Fatal(err)
			}
			// The second statement fails (duplicate key): the first is undone.
			err := st.ExecAtomic(ctx,
				store.Stmt{Query: ins, Args: []any{"c", []byte("3"), int64(3)}},
				store.Stmt{Query: ins, Args: []any{"a", []byte("4"), int64(4)}})
			if err == nil || !store.IsUniqueViolation(err) || !strings.Contains(err.Error(), "statement 2") {
				t.Fatalf("ExecAtomic with a failing statement: %v", err)
			}
			var n int64
			if err := st.QueryRow(ctx, `SELECT COUNT(*) FROM guidepub_secret`).Scan(&n); err != nil || n != 2 {
				t.Errorf("%d secrets stored (%v), want 2: the failed batch must leave nothing", n, err)
			}
		})
	}
}

// TestOpenConcurrently opens one new database from several goroutines at
// once (as sidecars starting together would): all succeed, migrated once.
func TestOpenConcurrently(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			var wg sync.WaitGroup
			errs := make([]error, 4)
			for i := range errs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					st, err := store.Open(context.Background(), dsn, nil)
					if err == nil {
						st.Close()
					}
					errs[i] = err
				}()
			}
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Errorf("Open %d: %v", i, err)
				}
			}
			st := open(t, dsn)
			var n int64
			if err := st.QueryRow(context.Background(), `SELECT COUNT(*) FROM guidepub_migration`).Scan(&n); err != nil || n != 3 {
				t.Errorf("%d guidepub migrations recorded (%v), want 3", n, err)
			}
		})
	}
}

func TestOAuthRecords(t *testing.T) {
	for _, b := range []struct {
		name string
		dsn  func(testing.TB) string
	}{{"sqlite", storetest.SQLite}, {"postgres", storetest.Postgres}} {
		t.Run(b.name, func(t *testing.T) {
			st := open(t, b.dsn(t))
			ctx := context.Background()
			now := time.Date(2026, 5, 4, 9, 0, 0, 0, time.UTC)
			pub := store.App{ClientID: "gpc_pub", OwnerID: "o", Name: "Native", RedirectURIs: []string{"http://127.0.0.1/cb"},
				Scopes: []string{"guide.events"}, CreatedAt: now}
			conf := pub
			conf.ClientID, conf.SecretHash = "gpc_conf", []byte("0123456789abcdef0123456789abcdef")
			for _, a := range []store.App{pub, conf} {
				if err := st.CreateApp(ctx, a); err != nil {
					t.Fatal(err)
				}
			}
			if err := st.CreateApp(ctx, pub); !errors.Is(err, store.ErrExists) {
				t.Fatalf("second create: %v, want ErrExists", err)
			}
			got, err := st.App(ctx, "gpc_pub")
			if err != nil || !got.Public() || got.Name != "Native" || len(got.RedirectURIs) != 1 {
				t.Fatalf("public app read back as %+v, %v", got, err)
			}
			got, err = st.App(ctx, "gpc_conf")
			if err != nil || got.Public() || string(got.SecretHash) != string(conf.SecretHash) {
				t.Fatalf("confidential app read back as %+v, %v", got, err)
			}
			tok := store.GrantToken{Kind: "access", Signature: "sig1", RequestID: "req1", ClientID: "gpc_conf", OwnerID: "alice",
				Scopes: []string{"guide.events"}, Request: []byte(`{}`), Active: true, ExpiresAt: now.Add(time.Hour), CreatedAt: now}
			if err := st.CreateGrantToken(ctx, tok); err != nil {
				t.Fatal(err)
			}
			old := tok
			old.Signature, old.ExpiresAt = "sig-old", now.Add(-48*time.Hour)
			if err := st.CreateGrantToken(ctx, old); err != nil {
				t.Fatal(err)
			}
			if err := st.RevokeApp(ctx, "gpc_conf", now); err != nil {
				t.Fatal(err)
			}
			if g, err := st.GrantToken(ctx, "access", "sig1"); err != nil || g.Active {
				t.Fatalf("token of a revoked app: %+v, %v; want inactive", g, err)
			}
			if n, err := st.DeleteExpiredGrantTokens(ctx, now.Add(-24*time.Hour)); err != nil || n != 1 {
				t.Fatalf("expired tokens removed: %d, %v; want 1", n, err)
			}
			if _, err := st.GrantToken(ctx, "access", "sig1"); err != nil {
				t.Fatalf("unexpired token removed: %v", err)
			}
			if err := st.RevokeApp(ctx, "gpc_none", now); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("revoke unknown app: %v", err)
			}
			if err := st.SetOwnerPassword(ctx, "alice", "$argon2id$x", now); err != nil {
				t.Fatal(err)
			}
			if err := st.SetOwnerPassword(ctx, "alice", "$argon2id$y", now); err != nil {
				t.Fatal(err)
			}
			if h, err := st.OwnerPassword(ctx, "alice"); err != nil || h != "$argon2id$y" {
				t.Fatalf("password hash %q, %v", h, err)
			}
			if _, err := st.OwnerPassword(ctx, "bob"); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("unknown owner: %v", err)
			}
		})
	}
}

// TestSpendGrantTokenOnce spends one token from 16 transactions at once,
// each also storing a new token as a redemption does: exactly one spends
// it (and its new token stays), the others get ErrSpent and roll back.
func TestSpendGrantTokenOnce(t *testing.T) {
	for _, b := range []struct {
		name string
		dsn  func(testing.TB) string
	}{{"sqlite", storetest.SQLite}, {"postgres", storetest.Postgres}} {
		t.Run(b.name, func(t *testing.T) {
			st := open(t, b.dsn(t))
			ctx := context.Background()
			now := time.Date(2026, 5, 4, 9, 0, 0, 0, time.UTC)
			code := store.GrantToken{Kind: "code", Signature: "code1", RequestID: "req1", ClientID: "gpc_x", OwnerID: "alice",
				Request: []byte(`{}`), Active: true, ExpiresAt: now.Add(time.Hour), CreatedAt: now}
			if err := st.CreateGrantToken(ctx, code); err != nil {
				t.Fatal(err)
			}
			const n = 16
			errs := make([]error, n)
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					tctx, err := st.BeginInContext(ctx)
					if err != nil {
						errs[i] = err
						return
					}
					err = st.SpendGrantToken(tctx, "code", "code1")
					if err == nil {
						at := code
						at.Kind, at.Signature = "access", fmt.Sprintf("at%d", i)
						err = st.CreateGrantToken(tctx, at)
					}
					if err != nil {
						if rerr := st.RollbackInContext(tctx); rerr != nil {
							t.Error(rerr)
						}
						errs[i] = err
						return
					}
					errs[i] = st.CommitInContext(tctx)
				}()
			}
			close(start)
			wg.Wait()
			won := 0
			for i, err := range errs {
				switch {
				case err == nil:
					won++
					if _, err := st.GrantToken(ctx, "access", fmt.Sprintf("at%d", i)); err != nil {
						t.Errorf("the winner's token: %v", err)
					}
				case errors.Is(err, store.ErrSpent):
					if _, err := st.GrantToken(ctx, "access", fmt.Sprintf("at%d", i)); !errors.Is(err, store.ErrNotFound) {
						t.Errorf("a loser's token was kept: %v", err)
					}
				default:
					t.Errorf("spend: %v", err)
				}
			}
			if won != 1 {
				t.Fatalf("%d transactions spent the code, want 1", won)
			}
			if err := st.SpendGrantToken(ctx, "code", "nope"); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("spend an unknown token: %v, want ErrNotFound", err)
			}
			if err := st.RevokeGrant(ctx, "req1"); err != nil {
				t.Fatal(err)
			}
			for i, err := range errs {
				if err == nil {
					if g, err := st.GrantToken(ctx, "access", fmt.Sprintf("at%d", i)); err != nil || g.Active {
						t.Fatalf("the winner's token after RevokeGrant: %+v %v, want inactive", g, err)
					}
				}
			}
		})
	}
}

// IsRetryable is true for PostgreSQL's deadlock and serialization
// failures, however wrapped, and for nothing else.
func TestIsRetryable(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("revoke: %w", &pgconn.PgError{Code: "40P01"}), true},
		{&pgconn.PgError{Code: "40001"}, true},
		{&pgconn.PgError{Code: "23505"}, false},
		{errors.New("deadlock detected"), false},
		{nil, false},
	} {
		if got := store.IsRetryable(tt.err); got != tt.want {
			t.Errorf("IsRetryable(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

// TestGrantRevocationNoDeadlock: the token endpoint's transactions over one
// grant, run together as racing requests run them (a refresh rotating its
// token then revoking the grant's access tokens; a reused refresh token
// revoking its refresh then access tokens; a reuse revoking the whole
// grant, outside a transaction), end without a deadlock. Each took row
// locks of the grant in its own order (refresh then access, or access then
// refresh), and PostgreSQL aborted some of them: a request retried three
// times could still fail with a server error.
func TestGrantRevocationNoDeadlock(t *testing.T) {
	st := open(t, storetest.Postgres(t))
	ctx := context.Background()
	now := time.Date(2026, 5, 4, 9, 0, 0, 0, time.UTC)
	deadlocks := 0
	for round := range 20 {
		req := fmt.Sprint("req", round)
		tok := func(kind, sig string) store.GrantToken {
			return store.GrantToken{Kind: kind, Signature: sig, RequestID: req, ClientID: "gpc_x", OwnerID: "alice",
				Request: []byte(`{}`), Active: true, ExpiresAt: now.Add(time.Hour), CreatedAt: now}
		}
		for i := range 4 {
			for _, kind := range []string{"access", "refresh"} {
				if err := st.CreateGrantToken(ctx, tok(kind, fmt.Sprintf("%s-%d-%d", kind, round, i))); err != nil {
					t.Fatal(err)
				}
			}
		}
		refresh := fmt.Sprintf("refresh-%d-0", round)
		inTx := func(steps ...func(context.Context) error) error {
			tctx, err := st.BeginInContext(ctx)
			if err != nil {
				return err
			}
			for _, step := range steps {
				if err := step(tctx); err != nil && !errors.Is(err, store.ErrSpent) {
					_ = st.RollbackInContext(tctx)
					return err
				}
			}
			return st.CommitInContext(tctx)
		}
		spend := func(c context.Context) error { return st.SpendGrantToken(c, "refresh", refresh) }
		deactivate := func(kind string) func(context.Context) error {
			return func(c context.Context) error { return st.DeactivateGrant(c, kind, req) }
		}
		errs := make([]error, 12)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range errs {
			wg.Go(func() {
				<-start
				switch i % 3 {
				case 0: // a refresh: rotate, then revoke the earlier access tokens
					errs[i] = inTx(spend, deactivate("access"))
				case 1: // a reused refresh token: the whole grant, refresh first
					errs[i] = inTx(spend, deactivate("refresh"), deactivate("access"))
				case 2: // a reused code or a losing refresh: the whole grant at once
					errs[i] = st.RevokeGrant(ctx, req)
				}
			})
		}
		close(start)
		wg.Wait()
		for _, err := range errs {
			if store.IsRetryable(err) {
				deadlocks++
			} else if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
	}
	if deadlocks > 0 {
		t.Errorf("%d of 240 transactions over one grant were aborted for a deadlock", deadlocks)
	}
}

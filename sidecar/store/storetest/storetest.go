// Package storetest gives tests a fresh database of each kind: a SQLite
// file in t.TempDir, and a PostgreSQL database created for the test and
// dropped when it ends.
package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/guidepub/guidepub/fixtures"
	"github.com/jackc/pgx/v5"
)

// SQLite returns the path of a SQLite file (not yet created) in a
// temporary folder removed after the test.
func SQLite(t testing.TB) string {
	t.Helper()
	return filepath.Join(t.TempDir(), "guidepub.db")
}

// Postgres creates an empty database guidepub_test_<random> on the server
// named by fixtures.PostgresURL and returns its URL; the database is
// dropped (its connections terminated) in t.Cleanup. When the server does
// not answer, it calls fixtures.Missing, which skips or fails the test.
func Postgres(t testing.TB) string {
	t.Helper()
	admin := fixtures.PostgresURL()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		fixtures.Missing(t, "PostgreSQL", "no server at "+admin+" ("+err.Error()+"); start one or set GUIDEPUB_TEST_POSTGRES")
		return ""
	}
	defer conn.Close(context.Background())
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	name := "guidepub_test_" + hex.EncodeToString(b[:])
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create test database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, admin)
		if err != nil {
			t.Errorf("drop test database %s: %v", name, err)
			return
		}
		defer c.Close(context.Background())
		if _, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop test database %s: %v", name, err)
		}
	})
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatalf("parse %s: %v", admin, err)
	}
	u.Path = "/" + name
	return u.String()
}

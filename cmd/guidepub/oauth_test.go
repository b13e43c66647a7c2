package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guidepub/guidepub/sidecar/oauth"
	"github.com/guidepub/guidepub/sidecar/store"
)

// withStdin runs fn with os.Stdin reading input.
func withStdin(t *testing.T, input string, fn func()) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	go func() { w.WriteString(input); w.Close() }()
	old := os.Stdin
	os.Stdin = r
	defer func() { os.Stdin = old; r.Close() }()
	fn()
}

func TestAppAndOwnerCommands(t *testing.T) {
	priv := t.TempDir()
	code, out, errOut := runCLI(t, "app", "create", "--private", priv, "--owner", "integrator-1", "--name", "Listing Sync",
		"--redirect-uri", "https://sync.example.com/callback", "--redirect-uri", "http://127.0.0.1:9000/cb",
		"--scopes", "guide.events,guide.read", "--json")
	if code != 0 {
		t.Fatalf("app create: exit %d\n%s%s", code, out, errOut)
	}
	var created struct{ ClientID, ClientSecret string }
	if err := json.Unmarshal([]byte(out), &created); err != nil || !oauth.IsClientID(created.ClientID) || !strings.HasPrefix(created.ClientSecret, oauth.ClientSecretPrefix) {
		t.Fatalf("app create --json printed %q (%v)", out, err)
	}

	code, out, _ = runCLI(t, "app", "create", "--private", priv, "--owner", "o", "--name", "Native", "--public",
		"--redirect-uri", "http://127.0.0.1/cb", "--scopes", "guide.events", "--json")
	if code != 0 || strings.Contains(out, "clientSecret") {
		t.Fatalf("public app: exit %d, %s", code, out)
	}

	code, out, _ = runCLI(t, "app", "list", "--private", priv, "--json")
	if code != 0 || strings.Contains(out, created.ClientSecret) || !strings.Contains(out, created.ClientID) {
		t.Fatalf("app list: exit %d, %s", code, out)
	}

	st, err := store.Open(context.Background(), filepath.Join(priv, defaultStoreFile), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	app, err := st.App(context.Background(), created.ClientID)
	if err != nil || app.Public() || string(app.SecretHash) == created.ClientSecret {
		t.Fatalf("stored app %+v, %v: want a hash of the secret", app, err)
	}

	for _, bad := range [][]string{
		{"--scopes", "guide.events,guide.everything", "--redirect-uri", "https://a.example/cb"},
		{"--scopes", "guide.events"},
		{"--scopes", "guide.events", "--redirect-uri", "http://a.example/cb"},
		{"--scopes", "guide.events", "--redirect-uri", "https://a.example/cb#frag"},
	} {
		args := append([]string{"app", "create", "--private", priv, "--owner", "o", "--name", "n"}, bad...)
		if code, _, _ := runCLI(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", bad, code)
		}
	}

	withStdin(t, "a long passphrase for alice\n", func() {
		code, out, errOut = runCLI(t, "owner", "password", "--private", priv, "--owner", "alice")
	})
	if code != 0 || strings.Contains(out+errOut, "passphrase") {
		t.Fatalf("owner password: exit %d\n%s%s", code, out, errOut)
	}
	hash, err := st.OwnerPassword(context.Background(), "alice")
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := oauth.CheckPassword(hash, "a long passphrase for alice"); !ok || err != nil || !strings.HasPrefix(hash, "$argon2id$") {
		t.Fatalf("stored hash %q does not check (%v)", hash, err)
	}
	withStdin(t, "short\n", func() { code, _, _ = runCLI(t, "owner", "password", "--private", priv, "--owner", "bob") })
	if code != 2 {
		t.Errorf("short password: exit %d, want 2", code)
	}

	if code, out, _ = runCLI(t, "app", "revoke", "--private", priv, created.ClientID); code != 0 {
		t.Fatalf("app revoke: exit %d %s", code, out)
	}
	if a, _ := st.App(context.Background(), created.ClientID); a.RevokedAt == nil {
		t.Fatal("app not revoked")
	}
	if code, _, _ = runCLI(t, "app", "revoke", "--private", priv, "gpc_nosuchapp"); code != 1 {
		t.Errorf("revoke of an unknown app: exit %d, want 1", code)
	}
}

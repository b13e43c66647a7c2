package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/oauth2"

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
	code, out, errOut := runCLI(t, "app", "create", "--private", priv, "--create", "--owner", "integrator-1", "--name", "Listing Sync",
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
	long := strings.Repeat("o", oauth.MaxOwnerName+1)
	withStdin(t, "a long passphrase for o\n", func() { code, _, _ = runCLI(t, "owner", "password", "--private", priv, "--owner", long) })
	if _, err := st.OwnerPassword(context.Background(), long); code != 2 || err == nil {
		t.Errorf("an owner name longer than any that can sign in: exit %d, stored %v; want 2, not stored", code, err == nil)
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

// TestCredentialWritersNeedAStore: token create, app create and owner
// password refuse a SQLite store that does not exist, naming the absolute
// path a relative --store was looked for at and --create; with --create
// they make it.
func TestCredentialWritersNeedAStore(t *testing.T) {
	for _, args := range [][]string{
		{"token", "create", "--owner", "user-1001", "--scopes", "guide.events"},
		{"app", "create", "--owner", "integrator-1", "--name", "Sync", "--redirect-uri", "http://127.0.0.1:9000/callback", "--scopes", "guide.events"},
		{"owner", "password", "--owner", "user-1001"},
	} {
		t.Run(strings.Join(args[:2], " "), func(t *testing.T) {
			dir := t.TempDir()
			t.Chdir(dir)
			rel := filepath.Join("wrong", "guidepub.db")
			if err := os.Mkdir("wrong", 0o755); err != nil {
				t.Fatal(err)
			}
			var code int
			var out, errs string
			withStdin(t, "a long passphrase for user-1001\n", func() {
				code, out, errs = runCLI(t, append(args, "--store", rel)...)
			})
			if code != exitFailure || !strings.Contains(errs, "does not exist") || !strings.Contains(errs, filepath.Join(dir, rel)) ||
				!strings.Contains(errs, "--create") {
				t.Fatalf("exit %d, want %d, \"does not exist\", the absolute path and --create\n%s%s", code, exitFailure, out, errs)
			}
			if _, err := os.Stat(rel); err == nil {
				t.Fatal("the store was created")
			}
			withStdin(t, "a long passphrase for user-1001\n", func() {
				code, out, errs = runCLI(t, append(args, "--store", rel, "--create")...)
			})
			if code != 0 {
				t.Fatalf("with --create: exit %d\n%s%s", code, out, errs)
			}
			if _, err := os.Stat(rel); err != nil {
				t.Fatalf("with --create, no store: %v", err)
			}
		})
	}
}

// TestOwnerWithoutGuides: given the private tree, owner password and token
// create say when no guide there has the owner, and name the owners that
// have guides; for an owner of a guide they say nothing more.
func TestOwnerWithoutGuides(t *testing.T) {
	root := t.TempDir()
	priv := filepath.Join(root, "private")
	code, out, errs := runCLI(t, "export", "--src", fixtureSrc(t), "--out", filepath.Join(root, "out"), "--private", priv)
	if code != 0 {
		t.Fatalf("export: exit %d\n%s%s", code, out, errs)
	}
	withStdin(t, "a long passphrase for alice\n", func() {
		code, out, errs = runCLI(t, "owner", "password", "--owner", "alice", "--private", priv, "--create")
	})
	if code != 0 || !strings.Contains(errs, "owner alice has no guide in "+priv) || !strings.Contains(errs, "user-1001, user-2002") {
		t.Fatalf("owner password for alice: exit %d, want 0 and a note naming the owners\n%s%s", code, out, errs)
	}
	withStdin(t, "a long passphrase for user-1001\n", func() {
		code, out, errs = runCLI(t, "owner", "password", "--owner", "user-1001", "--private", priv)
	})
	if code != 0 || strings.Contains(errs, "note") {
		t.Fatalf("owner password for user-1001: exit %d, want 0 and no note\n%s%s", code, out, errs)
	}
	code, out, errs = runCLI(t, "token", "create", "--owner", "bob", "--scopes", "guide.events", "--private", priv)
	if code != 0 || !strings.Contains(errs, "owner bob has no guide") {
		t.Fatalf("token create for bob: exit %d\n%s%s", code, out, errs)
	}
	// Without the private tree there is nothing to check against.
	code, out, errs = runCLI(t, "token", "create", "--owner", "bob", "--scopes", "guide.events", "--store", filepath.Join(priv, defaultStoreFile))
	if code != 0 || strings.Contains(errs, "note") {
		t.Fatalf("token create with --store only: exit %d\n%s%s", code, out, errs)
	}
}

// TestAppCreatePrintsATry: app create prints an authorize URL whose PKCE
// challenge is the S256 of the code_verifier in the exchange command it
// prints, for the app just made, on --base-url.
func TestAppCreatePrintsATry(t *testing.T) {
	priv := t.TempDir()
	code, out, errs := runCLI(t, "app", "create", "--private", priv, "--create", "--owner", "integrator-1", "--name", "Listing Sync",
		"--redirect-uri", "http://127.0.0.1:9000/callback", "--scopes", "guide.events,guide.read", "--base-url", "http://127.0.0.1:18080/")
	if code != 0 {
		t.Fatalf("app create: exit %d\n%s%s", code, out, errs)
	}
	clientID := between(out, "client_id:     ", "\n")
	secret := between(out, "client_secret: ", "\n")
	var authorize, exchange string
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "http://127.0.0.1:18080/oauth/authorize?") {
			authorize = l
		}
		if strings.HasPrefix(l, "curl") && strings.Contains(l, "/oauth/token") {
			exchange = l
		}
	}
	u, err := url.Parse(authorize)
	if err != nil || authorize == "" {
		t.Fatalf("no authorize URL printed (%v):\n%s", err, out)
	}
	q := u.Query()
	verifier := between(exchange, "code_verifier=", " ")
	if q.Get("client_id") != clientID || q.Get("redirect_uri") != "http://127.0.0.1:9000/callback" || q.Get("response_type") != "code" ||
		q.Get("scope") != "guide.events guide.read" || q.Get("code_challenge_method") != "S256" || q.Get("state") == "" {
		t.Errorf("authorize URL %s: not this app's request", authorize)
	}
	if verifier == "" || q.Get("code_challenge") != oauth2.S256ChallengeFromVerifier(verifier) {
		t.Errorf("the exchange's code_verifier %q does not match the URL's challenge %q", verifier, q.Get("code_challenge"))
	}
	if !strings.Contains(exchange, "-u '"+clientID+":"+secret+"'") || !strings.Contains(exchange, "http://127.0.0.1:18080/oauth/token") {
		t.Errorf("exchange command %q: not this app's credentials or the base URL's token endpoint", exchange)
	}
	if !strings.Contains(out, "shows an error page: the code is in its address bar") {
		t.Errorf("app create does not say where the code is read:\n%s", out)
	}

	// --json gives the same, for scripts.
	code, out, errs = runCLI(t, "app", "create", "--private", priv, "--owner", "integrator-1", "--name", "Desk", "--public",
		"--redirect-uri", "http://127.0.0.1:9000/callback", "--scopes", "guide.events", "--json")
	var created struct{ ClientID, ClientSecret, AuthorizeURL, CodeVerifier string }
	if code != 0 || json.Unmarshal([]byte(out), &created) != nil {
		t.Fatalf("app create --json: exit %d\n%s%s", code, out, errs)
	}
	u, err = url.Parse(created.AuthorizeURL)
	if err != nil || created.ClientSecret != "" || u.Query().Get("client_id") != created.ClientID ||
		u.Query().Get("code_challenge") != oauth2.S256ChallengeFromVerifier(created.CodeVerifier) ||
		!strings.HasPrefix(created.AuthorizeURL, "http://localhost:8080/oauth/authorize?") {
		t.Errorf("app create --json printed %s", out)
	}
}

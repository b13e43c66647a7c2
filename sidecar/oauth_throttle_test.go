package sidecar

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/guidepub/guidepub/sidecar/oauth"
)

// TestSignInHugeNames: sign-ins with owner names longer than any owner's
// (1 MiB each, and 1 KiB in a small form) are refused before the throttle
// counts or keeps anything, and the log does not carry them: after 30 of
// them from one address, the right password from that address signs in,
// and the log is a few lines. Counted, they used up the address's 20
// failures and it was refused (429); logged, they wrote 30 MiB.
func TestSignInHugeNames(t *testing.T) {
	logged := &countingWriter{}
	e := newOAuthEnvWith(t, storetestSQLite(t), func(c *oauth.Config) {
		c.PasswordHashWait = time.Minute
		c.Logger = slog.New(slog.NewTextHandler(logged, nil))
	})
	a := e.newSignInAttempt(t)
	client := keepAliveFrom("127.0.0.7")
	defer client.CloseIdleConnections()
	for i := range 30 {
		name := hugeName()
		if i%2 == 1 {
			name = name[:1024]
		}
		code, _ := a.post(t, client, name, "a wrong password, guessed")
		if code == http.StatusSeeOther || code >= 500 {
			t.Fatalf("a sign-in with a %d-byte owner name: status %d", len(name), code)
		}
	}
	if code, retry := a.post(t, client, "alice", alicePassword); code != http.StatusSeeOther {
		t.Fatalf("alice after 30 sign-ins with huge names from her address: status %d Retry-After %q, want 303 (signed in)", code, retry)
	}
	if n := logged.n.Load(); n > 30<<10 {
		t.Fatalf("30 sign-ins with huge names wrote %d bytes of log, want at most 1 KiB a sign-in", n)
	}
}

// TestSignInLongNameNotEchoed: a name too long to be an owner's is not
// shown back in the form, and the form of one of 1 MiB is refused unread
// (413).
func TestSignInLongNameNotEchoed(t *testing.T) {
	e := newOAuthEnvWith(t, storetestSQLite(t), nil)
	a := e.newSignInAttempt(t)
	name := strings.Repeat("x", 1024)
	status, page := a.postPage(t, clientFrom("127.0.0.8"), name, "a wrong password, guessed")
	if status != http.StatusUnauthorized || strings.Contains(page, name[:300]) {
		t.Fatalf("a 1 KiB owner name: status %d, the name shown back %v; want 401, not shown", status, strings.Contains(page, name[:300]))
	}
	if status, _ := a.postPage(t, clientFrom("127.0.0.8"), hugeName(), "x"); status != http.StatusRequestEntityTooLarge {
		t.Fatalf("a 1 MiB owner name: status %d, want 413", status)
	}
}

// TestSignInIPv6Network: behind a trusted proxy, wrong passwords for alice
// from 25 addresses of one IPv6 /64 (one household, one host, whose
// provider gives it the whole /64) count as one client: at most 5 are
// checked and the rest refused (429); alice, from another /64, signs in.
// Sent at once, so the count of the network is checked and taken under
// one lock. Each address its own client, all 25 were checked (401).
func TestSignInIPv6Network(t *testing.T) {
	proxies, err := oauth.ParseTrustedProxies("127.0.0.9")
	if err != nil {
		t.Fatal(err)
	}
	e := newOAuthEnvWith(t, storetestSQLite(t), func(c *oauth.Config) {
		c.PasswordHashWait, c.TrustedProxies, c.SignInDelay = time.Minute, proxies, time.Millisecond
	})
	a := e.newSignInAttempt(t)
	counts := concurrentlyVia(t, a, 25, func(i int) (string, string, string) {
		return "alice", "127.0.0.9", fmt.Sprintf("2001:db8:1:2:%x::%x", i, i+1)
	})
	if counts[401] > 5 || counts[401] == 0 || counts[401]+counts[429] != 25 {
		t.Fatalf("answers by status %v: want at most 5 checked (401), the rest refused unchecked (429)", counts)
	}
	if code, _ := a.postVia(t, clientFrom("127.0.0.9"), "2001:db8:1:3::1", "alice", alicePassword); code != http.StatusSeeOther {
		t.Fatalf("alice from another /64: status %d, want 303 (signed in)", code)
	}
}

// TestSignInManyNamesAtOnce: 200 sign-ins sent at once from one address,
// each for another owner, one in three with a name too long to be an
// owner's: the long names are refused before the throttle (401, however
// many failures the address has), of the others at most the address's 20
// are checked (401) and the rest refused (429), whatever the
// interleaving. Counted, the long names were refused 429 with the others.
func TestSignInManyNamesAtOnce(t *testing.T) {
	logged := &countingWriter{}
	e := newOAuthEnvWith(t, storetestSQLite(t), func(c *oauth.Config) {
		c.PasswordHashWait = time.Minute
		c.Logger = slog.New(slog.NewTextHandler(logged, nil))
	})
	a := e.newSignInAttempt(t)
	long := strings.Repeat("y", 4096)
	counts := concurrently(t, a, 200, func(i int) (string, string) {
		if i%3 == 0 {
			return fmt.Sprintf("%s-%d", long, i), "127.0.0.4"
		}
		return fmt.Sprintf("owner-%d", i), "127.0.0.4"
	})
	if counts[401] < 67 || counts[401] > 67+20 || counts[401]+counts[429] != 200 {
		t.Fatalf("answers by status %v: want the 67 long names refused unchecked (401), at most 20 others checked (401), the rest refused (429)", counts)
	}
	if n := logged.n.Load(); n > 200<<10 {
		t.Fatalf("200 sign-ins wrote %d bytes of log", n)
	}
}

// postPage is post, returning the page instead of Retry-After.
func (a signInAttempt) postPage(t testing.TB, client *http.Client, owner, password string) (int, string) {
	t.Helper()
	resp, err := client.Do(a.request("", owner, password))
	if err != nil {
		t.Fatalf("sign-in: %v", err)
	}
	defer resp.Body.Close()
	page, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(page)
}

// TestOAuthErrorLogBounded: an authorization request that repeats a
// parameter named with 100 KB is refused, and the log line of the refusal
// (whose hint names the parameter) stays short. It carried the name whole.
func TestOAuthErrorLogBounded(t *testing.T) {
	logged := &countingWriter{}
	e := newOAuthEnvWith(t, storetestSQLite(t), func(c *oauth.Config) {
		c.Logger = slog.New(slog.NewTextHandler(logged, nil))
	})
	name := strings.Repeat("p", 100<<10)
	resp, err := clientFrom("127.0.0.10").Get(e.app.AuthCodeURL("state-1234567890") + "&" + name + "=1&" + name + "=2")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode < 300 {
		t.Fatalf("status %d, want a refusal", resp.StatusCode)
	}
	if n := logged.n.Load(); n > 8<<10 {
		t.Fatalf("the refusal wrote %d bytes of log, want a few lines", n)
	}
}

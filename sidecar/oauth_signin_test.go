package sidecar

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/guidepub/guidepub/sidecar/apitoken"
	"github.com/guidepub/guidepub/sidecar/oauth"
	"golang.org/x/oauth2"
)

// signInAttempt is a sign-in form as a browser got it: the fields to post,
// where to post them and the CSRF cookie they belong to.
type signInAttempt struct {
	form   url.Values
	action string
	csrf   *http.Cookie
}

// newSignInAttempt loads the sign-in page for a fresh authorization
// request.
func (e *oauthEnv) newSignInAttempt(t testing.TB) signInAttempt {
	t.Helper()
	jar := &recordingJar{}
	c := &http.Client{Jar: jar}
	authURL := e.app.AuthCodeURL("state-1234567890", oauth2.S256ChallengeOption(oauth2.GenerateVerifier()))
	resp, err := c.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(resp.Request.URL.Path, oauth.PathSignIn) {
		t.Fatalf("authorize without a session went to %s, not the sign-in page", resp.Request.URL)
	}
	m := inputRe.FindAllStringSubmatch(string(body), -1)
	f := url.Values{}
	for _, kv := range m {
		f.Set(kv[1], strings.ReplaceAll(kv[2], "&amp;", "&"))
	}
	a := actionRe.FindStringSubmatch(string(body))
	if a == nil || jar.csrf == nil {
		t.Fatalf("sign-in page without a form or a CSRF cookie:\n%s", body)
	}
	return signInAttempt{form: f, action: e.http.URL + strings.ReplaceAll(a[1], "&amp;", "&"), csrf: jar.csrf}
}

// recordingJar keeps the CSRF cookie the sign-in page sets.
type recordingJar struct {
	mu   sync.Mutex
	csrf *http.Cookie
}

func (j *recordingJar) SetCookies(_ *url.URL, cs []*http.Cookie) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, c := range cs {
		if c.Name == "guidepub_csrf" {
			j.csrf = c
		}
	}
}

func (j *recordingJar) Cookies(*url.URL) []*http.Cookie {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.csrf == nil {
		return nil
	}
	return []*http.Cookie{{Name: j.csrf.Name, Value: j.csrf.Value}}
}

// clientFrom is an HTTP client whose connections come from the loopback
// address ip (any of 127.0.0.0/8 on Linux), so that the sidecar sees
// another client address. It does not follow redirects.
func clientFrom(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	return &http.Client{
		Transport:     &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// post sends the attempt as owner with password from client and returns
// the status and the Retry-After header.
func (a signInAttempt) post(t testing.TB, client *http.Client, owner, password string) (int, string) {
	t.Helper()
	return a.postVia(t, client, "", owner, password)
}

// postVia is post with an X-Forwarded-For header (when xff is not empty).
func (a signInAttempt) postVia(t testing.TB, client *http.Client, xff, owner, password string) (int, string) {
	t.Helper()
	resp, err := client.Do(a.request(xff, owner, password))
	if err != nil {
		t.Errorf("sign-in: %v", err)
		return 0, ""
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Retry-After")
}

// request returns the sign-in request of the attempt as owner with
// password, with an X-Forwarded-For header when xff is not empty.
func (a signInAttempt) request(xff, owner, password string) *http.Request {
	f := url.Values{}
	for k, v := range a.form {
		f[k] = v
	}
	f.Set("username", owner)
	f.Set("password", password)
	req, _ := http.NewRequest("POST", a.action, strings.NewReader(f.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(&http.Cookie{Name: a.csrf.Name, Value: a.csrf.Value})
	if xff != "" {
		req.Header.Set("X-Forwarded-For", xff)
	}
	return req
}

// concurrently runs n sign-ins at once (owner and client address chosen
// by who) and counts the answers by status; a 429 or 503 without
// Retry-After is counted as -429 or -503.
func concurrently(t testing.TB, a signInAttempt, n int, who func(i int) (owner, ip string)) map[int]int {
	t.Helper()
	return concurrentlyVia(t, a, n, func(i int) (string, string, string) {
		owner, ip := who(i)
		return owner, ip, ""
	})
}

// concurrentlyVia is concurrently with an X-Forwarded-For header per
// attempt (none when empty).
func concurrentlyVia(t testing.TB, a signInAttempt, n int, who func(i int) (owner, ip, xff string)) map[int]int {
	t.Helper()
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		counts = map[int]int{}
		start  = make(chan struct{})
	)
	for i := range n {
		owner, ip, xff := who(i)
		client := clientFrom(ip)
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			code, retry := a.postVia(t, client, xff, owner, "a wrong password, guessed")
			if (code == 429 || code == 503) && retry == "" {
				code = -code // refused without saying when to come back
			}
			mu.Lock()
			counts[code]++
			mu.Unlock()
		}()
	}
	close(start)
	wg.Wait()
	return counts
}

// TestSignInStrangerCannotLockOut: 30 wrong passwords for alice sent at
// once from one address, each with another X-Forwarded-For (the sidecar
// trusts no proxy, so the header is ignored): at most 5 are checked, the
// rest refused unchecked, and that address stays refused for her; alice
// herself, from another address, signs in. On a per-owner lockout she
// was refused (429) there too.
func TestSignInStrangerCannotLockOut(t *testing.T) {
	e := newOAuthEnvWith(t, storetestSQLite(t), func(c *oauth.Config) { c.PasswordHashWait = time.Minute })
	a := e.newSignInAttempt(t)
	counts := concurrentlyVia(t, a, 30, func(i int) (string, string, string) {
		return "alice", "127.0.0.3", fmt.Sprintf("198.51.100.%d", i)
	})
	if counts[401] > 5 || counts[401] == 0 || counts[401]+counts[429] != 30 {
		t.Fatalf("answers by status %v: want at most 5 checked (401), the rest refused unchecked (429)", counts)
	}
	if code, retry := a.post(t, clientFrom("127.0.0.3"), "alice", alicePassword); code != 429 || retry == "" {
		t.Fatalf("the right password from the attacker's address: status %d Retry-After %q, want 429 with Retry-After", code, retry)
	}
	if code, _ := a.post(t, clientFrom("127.0.0.201"), "alice", alicePassword); code != http.StatusSeeOther {
		t.Fatalf("alice from her own address: status %d, want 303 (signed in)", code)
	}
}

// TestSignInThrottleConcurrent sends 30 wrong passwords at once. The
// throttle counts an attempt before its password is checked, so one
// address gets at most its limit checked (20 for all owners) and the rest
// refused unchecked (429). 30 addresses for one owner are each checked,
// slowed by the owner's growing, capped delay, and do not lock her out.
func TestSignInThrottleConcurrent(t *testing.T) {
	const delay, maxDelay = 20 * time.Millisecond, 80 * time.Millisecond
	for _, tc := range []struct {
		name  string
		who   func(i int) (owner, ip string)
		limit int // the most checked (401)
		// refusedIP is where alice's right password is then refused from.
		refusedIP string
	}{
		{"one owner from many addresses", func(i int) (string, string) { return "alice", fmt.Sprintf("127.0.0.%d", 10+i) }, 30, ""},
		{"many owners from one address", func(i int) (string, string) { return fmt.Sprintf("owner-%d", i), "127.0.0.3" }, 20, "127.0.0.3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Checks wait for the hash memory as long as they need, so
			// that every answer is a check or a throttle refusal.
			e := newOAuthEnvWith(t, storetestSQLite(t), func(c *oauth.Config) {
				c.PasswordHashWait, c.SignInDelay, c.SignInMaxDelay = time.Minute, delay, maxDelay
			})
			a := e.newSignInAttempt(t)
			counts := concurrently(t, a, 30, tc.who)
			if counts[401] > tc.limit || counts[401] == 0 || counts[401]+counts[429] != 30 ||
				(tc.limit == 30 && counts[401] != 30) {
				t.Fatalf("answers by status %v: want at most %d checked (401), the rest refused unchecked (429)", counts, tc.limit)
			}
			if tc.refusedIP != "" {
				if code, retry := a.post(t, clientFrom(tc.refusedIP), "alice", alicePassword); code != 429 || retry == "" {
					t.Fatalf("right password from the address: status %d Retry-After %q, want 429 with Retry-After", code, retry)
				}
			}
			start := time.Now()
			if code, _ := a.post(t, clientFrom("127.0.0.201"), "alice", alicePassword); code != http.StatusSeeOther {
				t.Fatalf("alice from another address: status %d, want 303 (signed in)", code)
			}
			if took := time.Since(start); tc.limit == 30 && took < maxDelay {
				t.Fatalf("alice's sign-in after 30 failures for her took %v, want it slowed by the capped delay %v", took, maxDelay)
			}
		})
	}
}

// TestSignInTrustedProxy: behind a trusted proxy every client has the
// proxy's address; the sidecar counts each by the address the proxy
// forwarded for, so an attacker behind the proxy locks out only himself.
func TestSignInTrustedProxy(t *testing.T) {
	proxies, err := oauth.ParseTrustedProxies("127.0.0.9")
	if err != nil {
		t.Fatal(err)
	}
	e := newOAuthEnvWith(t, storetestSQLite(t), func(c *oauth.Config) {
		c.PasswordHashWait, c.TrustedProxies, c.SignInDelay = time.Minute, proxies, time.Millisecond
	})
	a := e.newSignInAttempt(t)
	proxy := clientFrom("127.0.0.9")
	// The attacker writes his own X-Forwarded-For; the proxy appends the
	// address it saw, as nginx's $proxy_add_x_forwarded_for does.
	counts := concurrentlyVia(t, a, 30, func(i int) (string, string, string) {
		return "alice", "127.0.0.9", fmt.Sprintf("192.0.2.%d, 203.0.113.7", i)
	})
	if counts[401] > 5 || counts[401] == 0 || counts[401]+counts[429] != 30 {
		t.Fatalf("answers by status %v: want at most 5 checked (401), the rest refused unchecked (429)", counts)
	}
	if code, _ := a.postVia(t, proxy, "203.0.113.7", "alice", alicePassword); code != 429 {
		t.Fatalf("through the proxy for the attacker: status %d, want 429", code)
	}
	if code, _ := a.postVia(t, proxy, "198.51.100.20", "alice", alicePassword); code != http.StatusSeeOther {
		t.Fatalf("through the proxy for alice: status %d, want 303 (signed in)", code)
	}
}

// TestPasswordChangeEndsSessions: once an owner's password is changed (as
// `guidepub owner password` does), a browser signed in before is sent to
// sign in again, at the authorization endpoint and at the consent form.
func TestPasswordChangeEndsSessions(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		e := newOAuthEnv(t, dsn)
		b := newBrowser(t)
		authURL := e.app.AuthCodeURL("state-1234567890", oauth2.S256ChallengeOption(oauth2.GenerateVerifier()))
		e.grant(t, b, "guide.events") // signs in
		resp, page := b.get(authURL)
		if resp.StatusCode != 200 || !strings.Contains(page, "Allow") {
			t.Fatalf("signed-in browser: status %d at %s, want the consent page", resp.StatusCode, resp.Request.URL)
		}
		consent, action := form(t, page)

		hash, err := oauth.HashPassword("a new passphrase for alice")
		if err != nil {
			t.Fatal(err)
		}
		if err := e.store.SetOwnerPassword(context.Background(), "alice", hash, e.clock.Now()); err != nil {
			t.Fatal(err)
		}
		resp, _ = b.get(authURL)
		if resp.Request.URL.Path != oauth.PathSignIn {
			t.Fatalf("after the password change the browser is at %s, want the sign-in page", resp.Request.URL)
		}
		consent.Set("decision", "allow")
		consent.Add("grant", "guide.events")
		resp, _ = b.post(e.http.URL+action, consent)
		if resp.Request.URL.Path != oauth.PathSignIn {
			t.Fatalf("consent after the password change went to %s, want the sign-in page", resp.Request.URL)
		}
	})
}

// TestSignInFlood sends 30 sign-ins at once from 30 addresses for 30
// owners (no throttle applies): every one is answered, as a check or as
// "busy" (503 with Retry-After), never an error, and the Portal API keeps
// answering while they run.
func TestSignInFlood(t *testing.T) {
	e := newOAuthEnv(t, storetestSQLite(t))
	alice := e.newCred("alice", apitoken.ScopeEvents)
	a := e.newSignInAttempt(t)
	done := make(chan map[int]int)
	go func() {
		done <- concurrently(t, a, 30, func(i int) (string, string) {
			return fmt.Sprintf("owner-%d", i), fmt.Sprintf("127.0.1.%d", 10+i)
		})
	}()
	portal := 0
	for {
		req, _ := http.NewRequest("GET", e.http.URL+eventPath, nil)
		req.Header.Set(HeaderAppID, alice.appID)
		req.Header.Set(HeaderAppToken, alice.token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		select {
		case counts := <-done:
			if counts[401]+counts[503] != 30 {
				t.Fatalf("sign-in answers by status %v: want 401 (checked) or 503 (busy) only", counts)
			}
			if portal == 0 {
				t.Fatal("no Portal API request was answered while the sign-ins ran")
			}
			return
		default:
		}
		if resp.StatusCode != 200 {
			t.Fatalf("Portal API during the sign-ins: status %d", resp.StatusCode)
		}
		portal++
	}
}

// TestSignInBusy: with room for one password check at a time and no time
// to wait, sign-ins sent together are answered 503 with Retry-After
// rather than queued without bound.
func TestSignInBusy(t *testing.T) {
	e := newOAuthEnvWith(t, storetestSQLite(t), func(c *oauth.Config) {
		c.PasswordHashMemoryMiB, c.PasswordHashWait = 64, time.Millisecond
	})
	a := e.newSignInAttempt(t)
	counts := concurrently(t, a, 10, func(i int) (string, string) {
		return fmt.Sprintf("owner-%d", i), fmt.Sprintf("127.0.2.%d", 10+i)
	})
	if counts[503] == 0 || counts[401] == 0 || counts[401]+counts[503] != 10 {
		t.Fatalf("answers by status %v: want some checked (401) and some busy (503 with Retry-After)", counts)
	}
}

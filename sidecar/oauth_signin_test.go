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
	f := url.Values{}
	for k, v := range a.form {
		f[k] = v
	}
	f.Set("username", owner)
	f.Set("password", password)
	req, _ := http.NewRequest("POST", a.action, strings.NewReader(f.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(&http.Cookie{Name: a.csrf.Name, Value: a.csrf.Value})
	resp, err := client.Do(req)
	if err != nil {
		t.Errorf("sign-in: %v", err)
		return 0, ""
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Retry-After")
}

// concurrently runs n sign-ins at once (owner and client address chosen
// by who) and counts the answers by status; a 429 or 503 without
// Retry-After is counted as -429 or -503.
func concurrently(t testing.TB, a signInAttempt, n int, who func(i int) (owner, ip string)) map[int]int {
	t.Helper()
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		counts = map[int]int{}
		start  = make(chan struct{})
	)
	for i := range n {
		owner, ip := who(i)
		client := clientFrom(ip)
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			code, retry := a.post(t, client, owner, "a wrong password, guessed")
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

// TestSignInThrottleConcurrent sends 30 wrong passwords at once: the
// throttle counts an attempt before its password is checked, so at most
// the limit (5) are checked (401) and the rest are refused unchecked
// (429), per owner and per client address.
func TestSignInThrottleConcurrent(t *testing.T) {
	const n, limit = 30, 5
	for _, tc := range []struct {
		name string
		who  func(i int) (owner, ip string)
		// afterIP is where alice's right password comes from afterwards:
		// refused either way, for her name or for the address.
		afterIP string
	}{
		{"one owner from many addresses", func(i int) (string, string) { return "alice", fmt.Sprintf("127.0.0.%d", 10+i) }, "127.0.0.201"},
		{"many owners from one address", func(i int) (string, string) { return fmt.Sprintf("owner-%d", i), "127.0.0.3" }, "127.0.0.3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Checks wait for the hash memory as long as they need, so
			// that every answer is a check or a throttle refusal.
			e := newOAuthEnvWith(t, storetestSQLite(t), func(c *oauth.Config) { c.PasswordHashWait = time.Minute })
			a := e.newSignInAttempt(t)
			counts := concurrently(t, a, n, tc.who)
			if counts[401] > limit || counts[401] == 0 || counts[401]+counts[429] != n {
				t.Fatalf("answers by status %v: want at most %d checked (401), the rest refused unchecked (429)", counts, limit)
			}
			if code, retry := a.post(t, clientFrom(tc.afterIP), "alice", alicePassword); code != 429 || retry == "" {
				t.Fatalf("right password after the flood: status %d Retry-After %q, want 429 with Retry-After", code, retry)
			}
		})
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

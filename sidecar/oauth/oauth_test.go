package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestPasswordHash(t *testing.T) {
	h, err := HashPassword("correct horse battery staple")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h, "$argon2id$v=19$m=65536,t=3,p=2$") {
		t.Errorf("hash %q is not an argon2id PHC string with the documented parameters", h)
	}
	if h2, _ := HashPassword("correct horse battery staple"); h2 == h {
		t.Error("two hashes of one password are equal: no salt")
	}
	for pw, want := range map[string]bool{"correct horse battery staple": true, "correct horse battery stapl": false, "": false} {
		if ok, err := CheckPassword(h, pw); ok != want || err != nil {
			t.Errorf("CheckPassword(%q) = %v, %v; want %v", pw, ok, err, want)
		}
	}
	if _, err := HashPassword("short"); err == nil {
		t.Error("a 5-character password was accepted")
	}
	for _, bad := range []string{"", "$argon2i$v=19$m=1,t=1,p=1$c2FsdA$aGFzaA", "$argon2id$v=19$m=0,t=1,p=1$c2FsdA$aGFzaA", "plain"} {
		if _, err := CheckPassword(bad, "x"); err == nil {
			t.Errorf("CheckPassword accepted the stored hash %q", bad)
		}
	}
}

func TestThrottle(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	th := newThrottle(5, time.Minute, func() time.Time { return now })
	for i := range 5 {
		if a, _ := th.admit("owner:a", "addr:1"); a == nil {
			t.Fatalf("refused after %d failures", i)
		}
	}
	if a, until := th.admit("owner:a"); a != nil || !until.Equal(now.Add(time.Minute)) {
		t.Fatalf("admitted %v until %v after 5 failures, want refused for the minute", a != nil, until)
	}
	if a, _ := th.admit("owner:b", "addr:1"); a != nil {
		t.Error("another owner from the same address is admitted")
	}
	if a, _ := th.admit("owner:b", "addr:2"); a == nil {
		t.Error("another owner from another address is refused")
	} else {
		a.giveBack()
	}
	if a, _ := th.admit("owner:b", "addr:1"); a != nil {
		t.Error("a refused attempt was counted against owner:b only, or given back twice")
	}
	now = now.Add(time.Minute)
	if a, _ := th.admit("owner:a", "addr:1"); a == nil {
		t.Error("still refused once the minute is over")
	}
}

// TestThrottleGiveBack: a right password gives its attempt back, so an
// owner who signs in does not use up the window; a refused attempt (not
// admitted) counts nothing.
func TestThrottleGiveBack(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	th := newThrottle(2, time.Minute, func() time.Time { return now })
	for range 10 {
		a, _ := th.admit("owner:a")
		if a == nil {
			t.Fatal("refused although every attempt was given back")
		}
		a.giveBack()
	}
	a1, _ := th.admit("owner:a")
	now = now.Add(time.Minute) // a new window
	a2, _ := th.admit("owner:a")
	a3, _ := th.admit("owner:a")
	a1.giveBack() // from the old window: must not free a place in the new one
	if a, _ := th.admit("owner:a"); a != nil || a2 == nil || a3 == nil {
		t.Fatal("an attempt of an ended window was given back into the new one")
	}
}

// TestThrottleConcurrent: attempts admitted at once never exceed the
// limit, whatever the interleaving.
func TestThrottleConcurrent(t *testing.T) {
	th := newThrottle(5, time.Minute, time.Now)
	var admitted atomic.Int64
	var wg sync.WaitGroup
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if a, _ := th.admit("owner:a", fmt.Sprintf("addr:%d", i)); a != nil {
				admitted.Add(1)
			}
		}()
	}
	wg.Wait()
	if n := admitted.Load(); n != 5 {
		t.Fatalf("%d attempts admitted at once, want 5", n)
	}
}

// TestHashLimiter: 30 password checks at once never hold more than the
// memory budget (here 2 of guidepub's 64 MiB hashes), all are answered
// correctly, and a check that cannot start in time is refused with
// errBusy.
func TestHashLimiter(t *testing.T) {
	hash, err := HashPassword("the right password here")
	if err != nil {
		t.Fatal(err)
	}
	l := newHashLimiter(2*argonMemory/1024, time.Minute)
	var wg sync.WaitGroup
	var wrong atomic.Int64
	for i := range 30 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pw := "a wrong password here"
			if i%3 == 0 {
				pw = "the right password here"
			}
			ok, err := l.check(context.Background(), hash, pw)
			if err != nil || ok != (i%3 == 0) {
				wrong.Add(1)
			}
		}()
	}
	wg.Wait()
	if wrong.Load() != 0 {
		t.Fatalf("%d checks answered wrongly", wrong.Load())
	}
	if p := l.peak.Load(); p > l.budgetKiB || p < argonMemory {
		t.Fatalf("peak %d KiB of hash memory held at once, want at most the budget %d KiB", p, l.budgetKiB)
	}

	busy := newHashLimiter(argonMemory/1024, 10*time.Millisecond)
	if err := busy.sem.Acquire(context.Background(), busy.budgetKiB); err != nil {
		t.Fatal(err)
	}
	if _, err := busy.check(context.Background(), hash, "x"); !errors.Is(err, errBusy) {
		t.Fatalf("check with the budget in use: %v, want errBusy", err)
	}
	busy.sem.Release(busy.budgetKiB)
}

func TestSessionCookie(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	k := &cookieKeys{key: []byte("0123456789abcdef0123456789abcdef"), now: func() time.Time { return now }, sessionLifespan: time.Hour}
	w := httptest.NewRecorder()
	r := httptest.NewRequest("GET", "https://api.example.com/oauth/authorize", nil)
	k.setSession(w, r, "alice", "hash-1")
	c := w.Result().Cookies()[0]
	if !c.Secure || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/oauth/" {
		t.Errorf("cookie %+v: want Secure, HttpOnly, SameSite=Lax, path /oauth/", c)
	}
	current := "hash-1"
	hashOf := func(owner string) (string, bool) { return current, owner == "alice" }
	with := func(v string) *http.Request {
		r := httptest.NewRequest("GET", "https://api.example.com/oauth/authorize", nil)
		r.AddCookie(&http.Cookie{Name: sessionCookie, Value: v})
		return r
	}
	if got := k.session(with(c.Value), hashOf); got != "alice" {
		t.Fatalf("session = %q, want alice", got)
	}
	forged := b64.EncodeToString([]byte("mallory")) + c.Value[strings.Index(c.Value, "."):]
	if got := k.session(with(forged), hashOf); got != "" {
		t.Errorf("a cookie with another owner name was accepted as %q", got)
	}
	current = "hash-2" // the password changed
	if got := k.session(with(c.Value), hashOf); got != "" {
		t.Errorf("a session made before the password changed was accepted as %q", got)
	}
	current = "hash-1"
	now = now.Add(time.Hour)
	if got := k.session(with(c.Value), hashOf); got != "" {
		t.Errorf("an expired session was accepted as %q", got)
	}
	loop := httptest.NewRecorder()
	k.setSession(loop, httptest.NewRequest("GET", "http://127.0.0.1:8080/oauth/authorize", nil), "alice", "hash-1")
	if loop.Result().Cookies()[0].Secure {
		t.Error("a loopback request got a Secure cookie: guidepub dev over http could not sign in")
	}
}

func TestCSRF(t *testing.T) {
	k := &cookieKeys{key: []byte("0123456789abcdef0123456789abcdef"), now: time.Now, sessionLifespan: time.Hour}
	w := httptest.NewRecorder()
	tok, err := k.csrfToken(w, httptest.NewRequest("GET", "http://127.0.0.1/oauth/signin", nil))
	if err != nil {
		t.Fatal(err)
	}
	cookie := w.Result().Cookies()[0]
	post := func(cookieValue, formToken string) bool {
		r := httptest.NewRequest("POST", "http://127.0.0.1/oauth/signin", strings.NewReader(url.Values{"csrf": {formToken}}.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if cookieValue != "" {
			r.AddCookie(&http.Cookie{Name: csrfCookie, Value: cookieValue})
		}
		r.ParseForm()
		return k.checkCSRF(r)
	}
	if !post(cookie.Value, tok) {
		t.Error("the form's own token was refused")
	}
	if post(cookie.Value, "") || post("", tok) || post(strings.Repeat("x", 43), tok) || post(cookie.Value, cookie.Value) {
		t.Error("a missing, foreign or copied token was accepted")
	}
}

func TestAuthorizeClient(t *testing.T) {
	for next, want := range map[string]bool{
		"/oauth/authorize?client_id=gpc_1&response_type=code": true,
		"/oauth/authorize": false, // no client
		"https://evil.example/oauth/authorize?client_id=x": false,
		"//evil.example/oauth/authorize?client_id=x":       false,
		"/oauth/token?client_id=x":                         false,
		"/oauth/authorize/../token?client_id=x":            false,
	} {
		if _, ok := authorizeClient(next); ok != want {
			t.Errorf("authorizeClient(%q) = %v, want %v", next, ok, want)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("DefaultConfig: %v", err)
	}
	for name, mod := range map[string]func(*Config){
		"issuer":        func(c *Config) { c.Issuer = "api.example.com" },
		"issuer query":  func(c *Config) { c.Issuer = "https://api.example.com/?a=b" },
		"access ttl":    func(c *Config) { c.AccessTokenLifespan = 0 },
		"refresh ttl":   func(c *Config) { c.RefreshTokenLifespan = -time.Second },
		"failures":      func(c *Config) { c.SignInFailures = 0 },
		"hash memory":   func(c *Config) { c.PasswordHashMemoryMiB = 32 },
		"hash wait":     func(c *Config) { c.PasswordHashWait = 0 },
		"clock missing": func(c *Config) { c.Now = nil },
	} {
		c := DefaultConfig()
		mod(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("%s: Validate accepted %+v", name, c)
		}
	}
}

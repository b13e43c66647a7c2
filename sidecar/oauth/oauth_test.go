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

// TestDummyHashCostsAPassword checks that the hash an unknown owner's
// sign-in is checked against has the parameters, salt and key sizes of a
// real one, so that its check costs the same (a check's cost is set by
// them), and that it is checked like one.
func TestDummyHashCostsAPassword(t *testing.T) {
	real, err := HashPassword("correct horse battery staple")
	if err != nil {
		t.Fatal(err)
	}
	r, err := parseHash(real)
	if err != nil {
		t.Fatal(err)
	}
	d, err := parseHash(dummyHash)
	if err != nil {
		t.Fatalf("the dummy hash %q does not parse: %v", dummyHash, err)
	}
	if d.memKiB != r.memKiB || d.iters != r.iters || d.threads != r.threads || len(d.salt) != len(r.salt) || len(d.key) != len(r.key) {
		t.Errorf("dummy hash m=%d,t=%d,p=%d, %d-byte salt, %d-byte key; a password's m=%d,t=%d,p=%d, %d, %d",
			d.memKiB, d.iters, d.threads, len(d.salt), len(d.key), r.memKiB, r.iters, r.threads, len(r.salt), len(r.key))
	}
	if ok, err := CheckPassword(dummyHash, "guidepub: no such owner, no such password"); ok || err != nil {
		t.Errorf("CheckPassword(dummyHash) = %v, %v; want false, nil", ok, err)
	}
}

// testPolicy is the default policy with a one-minute window.
var testPolicy = signInPolicy{PairFailures: 5, ClientFailures: 20, OwnerFailures: 5,
	Delay: time.Second, MaxDelay: 10 * time.Second, Window: time.Minute}

// TestThrottle: a client is refused past its failures for one owner or
// for all owners; an owner's failures from everyone only slow the next
// attempts down, with a growing, capped delay, and never refuse a client.
func TestThrottle(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	th := newThrottle(testPolicy, func() time.Time { return now })
	for i := range 5 {
		if a, d, _ := th.admit("a", "10.0.0.1"); a == nil || d != 0 {
			t.Fatalf("attempt %d: admitted %v, delay %v; want admitted at once", i+1, a != nil, d)
		}
	}
	if a, _, until := th.admit("a", "10.0.0.1"); a != nil || !until.Equal(now.Add(time.Minute)) {
		t.Fatalf("admitted %v until %v after 5 failures, want refused for the window", a != nil, until)
	}
	// Another client, for the same owner: admitted, slowed down.
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 10 * time.Second, 10 * time.Second}
	for i, w := range want {
		a, d, _ := th.admit("a", fmt.Sprintf("10.0.1.%d", i))
		if a == nil || d != w {
			t.Fatalf("a new client after %d failures of the owner: admitted %v, delay %v; want admitted after %v", 5+i, a != nil, d, w)
		}
	}
	// The same client for another owner: admitted, it has not failed for her.
	if a, d, _ := th.admit("b", "10.0.0.1"); a == nil || d != 0 {
		t.Errorf("another owner from the same client: admitted %v, delay %v", a != nil, d)
	}
	now = now.Add(time.Minute)
	if a, d, _ := th.admit("a", "10.0.0.1"); a == nil || d != 0 {
		t.Errorf("once the window is over: admitted %v, delay %v; want admitted at once", a != nil, d)
	}
}

// TestThrottleClient: a client that fails for many owners is refused past
// its own limit, for every owner, other clients are not.
func TestThrottleClient(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	th := newThrottle(testPolicy, func() time.Time { return now })
	for i := range 20 {
		if a, _, _ := th.admit(fmt.Sprintf("owner-%d", i), "10.0.0.1"); a == nil {
			t.Fatalf("refused after %d failures", i)
		}
	}
	if a, _, until := th.admit("owner-99", "10.0.0.1"); a != nil || !until.Equal(now.Add(time.Minute)) {
		t.Fatalf("21st owner from one client: admitted %v until %v, want refused for the window", a != nil, until)
	}
	if a, _, _ := th.admit("owner-99", "10.0.0.2"); a == nil {
		t.Error("another client is refused")
	}
}

// TestThrottleGiveBack: a right password gives its attempt back, so an
// owner who signs in does not use up the window; a refused attempt (not
// admitted) counts nothing.
func TestThrottleGiveBack(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := testPolicy
	p.PairFailures = 2
	th := newThrottle(p, func() time.Time { return now })
	for range 10 {
		a, d, _ := th.admit("a", "10.0.0.1")
		if a == nil || d != 0 {
			t.Fatal("refused or slowed although every attempt was given back")
		}
		a.giveBack()
	}
	a1, _, _ := th.admit("a", "10.0.0.1")
	now = now.Add(time.Minute) // a new window
	a2, _, _ := th.admit("a", "10.0.0.1")
	a3, _, _ := th.admit("a", "10.0.0.1")
	a1.giveBack() // from the old window: must not free a place in the new one
	if a, _, _ := th.admit("a", "10.0.0.1"); a != nil || a2 == nil || a3 == nil {
		t.Fatal("an attempt of an ended window was given back into the new one")
	}
	for range 10 {
		if a, _, _ := th.admit("a", "10.0.0.1"); a != nil {
			t.Fatal("a refused attempt was counted and freed a place")
		}
	}
}

// TestThrottleConcurrent: attempts of one client admitted at once never
// exceed its limit, whatever the interleaving; attempts of 200 clients for
// one owner are all admitted, and slowed.
func TestThrottleConcurrent(t *testing.T) {
	th := newThrottle(testPolicy, time.Now)
	var admitted, slowed atomic.Int64
	var wg sync.WaitGroup
	for i := range 200 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			if a, _, _ := th.admit("a", "10.0.0.1"); a != nil {
				admitted.Add(1)
			}
		}()
		go func() {
			defer wg.Done()
			if a, d, _ := th.admit("b", fmt.Sprintf("10.1.%d.%d", i/100, i%100)); a != nil && d > 0 {
				slowed.Add(1)
			}
		}()
	}
	wg.Wait()
	if n := admitted.Load(); n != 5 {
		t.Fatalf("%d attempts of one client admitted at once, want 5", n)
	}
	if n := slowed.Load(); n != 195 {
		t.Fatalf("%d of 200 clients' attempts for one owner admitted and slowed, want 195 (the first 5 at once)", n)
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

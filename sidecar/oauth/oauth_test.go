package oauth

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
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
		if b, _ := th.blocked("owner:a", "addr:1"); b {
			t.Fatalf("blocked after %d failures", i)
		}
		th.fail("owner:a", "addr:1")
	}
	if b, until := th.blocked("owner:a"); !b || !until.Equal(now.Add(time.Minute)) {
		t.Fatalf("blocked = %v until %v after 5 failures, want blocked for the minute", b, until)
	}
	if b, _ := th.blocked("owner:b", "addr:1"); !b {
		t.Error("another owner from the same address is not blocked")
	}
	if b, _ := th.blocked("owner:b", "addr:2"); b {
		t.Error("another owner from another address is blocked")
	}
	now = now.Add(time.Minute)
	if b, _ := th.blocked("owner:a", "addr:1"); b {
		t.Error("still blocked once the minute is over")
	}
}

func TestSessionCookie(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	k := &cookieKeys{key: []byte("0123456789abcdef0123456789abcdef"), now: func() time.Time { return now }, sessionLifespan: time.Hour}
	w := httptest.NewRecorder()
	r := httptest.NewRequest("GET", "https://api.example.com/oauth/authorize", nil)
	k.setSession(w, r, "alice")
	c := w.Result().Cookies()[0]
	if !c.Secure || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/oauth/" {
		t.Errorf("cookie %+v: want Secure, HttpOnly, SameSite=Lax, path /oauth/", c)
	}
	with := func(v string) *http.Request {
		r := httptest.NewRequest("GET", "https://api.example.com/oauth/authorize", nil)
		r.AddCookie(&http.Cookie{Name: sessionCookie, Value: v})
		return r
	}
	if got := k.session(with(c.Value)); got != "alice" {
		t.Fatalf("session = %q, want alice", got)
	}
	forged := b64.EncodeToString([]byte("mallory")) + c.Value[strings.Index(c.Value, "."):]
	if got := k.session(with(forged)); got != "" {
		t.Errorf("a cookie with another owner name was accepted as %q", got)
	}
	now = now.Add(time.Hour)
	if got := k.session(with(c.Value)); got != "" {
		t.Errorf("an expired session was accepted as %q", got)
	}
	loop := httptest.NewRecorder()
	k.setSession(loop, httptest.NewRequest("GET", "http://127.0.0.1:8080/oauth/authorize", nil), "alice")
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
		"clock missing": func(c *Config) { c.Now = nil },
	} {
		c := DefaultConfig()
		mod(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("%s: Validate accepted %+v", name, c)
		}
	}
}

package oauth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Cookie names. The session cookie holds the signed-in owner; the CSRF
// cookie is a random value the forms' token is derived from.
const (
	sessionCookie = "guidepub_session"
	csrfCookie    = "guidepub_csrf"
)

// cookieKeys signs sessions and derives CSRF tokens with a key kept in the
// store (so every sidecar on it accepts the others' sessions).
type cookieKeys struct {
	key             []byte
	now             func() time.Time
	sessionLifespan time.Duration
}

var b64 = base64.RawURLEncoding

func (k *cookieKeys) mac(parts ...string) []byte {
	m := hmac.New(sha256.New, k.key)
	for _, p := range parts {
		m.Write([]byte(p))
		m.Write([]byte{0})
	}
	return m.Sum(nil)
}

// setSession signs owner in on this browser. The session is bound to the
// owner's password hash at sign-in: once the password changes (a new hash,
// with a new salt, even for the same password), the session ends.
func (k *cookieKeys) setSession(w http.ResponseWriter, r *http.Request, owner, passwordHash string) {
	exp := strconv.FormatInt(k.now().Add(k.sessionLifespan).Unix(), 10)
	o := b64.EncodeToString([]byte(owner))
	v := o + "." + exp + "." + b64.EncodeToString(k.mac("session", o, exp, passwordHash))
	http.SetCookie(w, k.cookie(r, sessionCookie, v, int(k.sessionLifespan.Seconds())))
}

// session returns the signed-in owner, or "" when there is no valid,
// unexpired session cookie made under the owner's current password hash,
// which passwordHash returns (false when the owner has none).
func (k *cookieKeys) session(r *http.Request, passwordHash func(owner string) (string, bool)) string {
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return ""
	}
	o, rest, ok := strings.Cut(c.Value, ".")
	if !ok {
		return ""
	}
	exp, sig, ok := strings.Cut(rest, ".")
	if !ok {
		return ""
	}
	until, err := strconv.ParseInt(exp, 10, 64)
	if err != nil || !k.now().Before(time.Unix(until, 0)) {
		return ""
	}
	owner, err := b64.DecodeString(o)
	if err != nil {
		return ""
	}
	got, err := b64.DecodeString(sig)
	if err != nil {
		return ""
	}
	hash, ok := passwordHash(string(owner))
	if !ok || !hmac.Equal(got, k.mac("session", o, exp, hash)) {
		return ""
	}
	return string(owner)
}

// csrfToken returns the token forms on this page must carry, setting the
// CSRF cookie when the browser has none yet.
func (k *cookieKeys) csrfToken(w http.ResponseWriter, r *http.Request) (string, error) {
	v := ""
	if c, err := r.Cookie(csrfCookie); err == nil && len(c.Value) >= 32 {
		v = c.Value
	} else {
		b := make([]byte, 32)
		if _, err := rand.Read(b); err != nil {
			return "", err
		}
		v = b64.EncodeToString(b)
		http.SetCookie(w, k.cookie(r, csrfCookie, v, 0))
	}
	return b64.EncodeToString(k.mac("csrf", v)), nil
}

// checkCSRF reports whether the posted form token belongs to the browser's
// CSRF cookie. Call after r.ParseForm.
func (k *cookieKeys) checkCSRF(r *http.Request) bool {
	c, err := r.Cookie(csrfCookie)
	if err != nil || c.Value == "" {
		return false
	}
	got, err := b64.DecodeString(r.PostForm.Get("csrf"))
	if err != nil {
		return false
	}
	return hmac.Equal(got, k.mac("csrf", c.Value))
}

// cookie builds a cookie: HttpOnly, SameSite=Lax, path-limited to /oauth/,
// and Secure unless the request came to a loopback host (docs/oauth.md).
func (k *cookieKeys) cookie(r *http.Request, name, value string, maxAge int) *http.Cookie {
	return &http.Cookie{
		Name: name, Value: value, Path: "/oauth/", MaxAge: maxAge,
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: !isLoopbackHost(r.Host),
	}
}

func isLoopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

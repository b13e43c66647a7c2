package oauth

import (
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"time"
)

// Config configures the authorization server. Zero values are not replaced:
// start from DefaultConfig.
type Config struct {
	// Issuer is the URL the sidecar is reached at (the --base-url), without
	// a trailing slash; every endpoint in the metadata is under it.
	Issuer string
	// AccessTokenLifespan, RefreshTokenLifespan and AuthorizeCodeLifespan
	// bound how long each token is accepted.
	AccessTokenLifespan   time.Duration
	RefreshTokenLifespan  time.Duration
	AuthorizeCodeLifespan time.Duration
	// SessionLifespan is how long an owner stays signed in.
	SessionLifespan time.Duration
	// SignInFailures is how many wrong passwords one client may send for
	// one owner in SignInWindow (default 5), SignInClientFailures how many
	// for all owners together (default 20); past either, that client's
	// attempts are refused unchecked (429) until the window ends.
	SignInFailures, SignInClientFailures int
	// SignInOwnerFailures is how many wrong passwords an owner may get in
	// SignInWindow from every client together (default 5) before each
	// further attempt for her waits SignInDelay (default 1 s), doubled for
	// each failure beyond, at most SignInMaxDelay (default 10 s), before
	// its password is checked. It never refuses: a stranger can slow an
	// owner down, never lock her out.
	SignInOwnerFailures         int
	SignInDelay, SignInMaxDelay time.Duration
	// SignInWindow is how long failures are counted (default 15 minutes).
	SignInWindow time.Duration
	// TrustedProxies are the reverse proxies whose X-Forwarded-For is
	// believed: a sign-in from one of them is counted against the address
	// it forwarded for; from any other peer the header is ignored. Empty
	// (the default): every client is its TCP peer.
	TrustedProxies []net.IPNet
	// PasswordHashMemoryMiB is how much memory password checks may take
	// together, in MiB (default 256). Each check of a guidepub password
	// takes 64 MiB while it runs, so the default lets 4 run at once.
	PasswordHashMemoryMiB int
	// PasswordHashWait is how long a sign-in waits for its password check
	// to start (default 3 s) before it is answered 503 with Retry-After.
	PasswordHashWait time.Duration
	// Now is the clock tokens and sessions are checked against.
	Now    func() time.Time
	Logger *slog.Logger
}

// DefaultConfig returns the defaults documented in docs/oauth.md.
func DefaultConfig() Config {
	return Config{
		Issuer:                "http://localhost:8080",
		AccessTokenLifespan:   time.Hour,
		RefreshTokenLifespan:  30 * 24 * time.Hour,
		AuthorizeCodeLifespan: 10 * time.Minute,
		SessionLifespan:       time.Hour,
		SignInFailures:        5,
		SignInClientFailures:  20,
		SignInOwnerFailures:   5,
		SignInDelay:           time.Second,
		SignInMaxDelay:        10 * time.Second,
		SignInWindow:          15 * time.Minute,
		PasswordHashMemoryMiB: 256,
		PasswordHashWait:      3 * time.Second,
		Now:                   time.Now,
		Logger:                slog.Default(),
	}
}

// Validate returns an error naming the first field that is out of range.
func (c Config) Validate() error {
	u, err := url.Parse(c.Issuer)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("oauth: issuer %q: want an absolute http(s) URL without query", c.Issuer)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"access token lifespan", c.AccessTokenLifespan}, {"refresh token lifespan", c.RefreshTokenLifespan},
		{"authorization code lifespan", c.AuthorizeCodeLifespan}, {"session lifespan", c.SessionLifespan}} {
		if d.v <= 0 {
			return fmt.Errorf("oauth: %s %s: want more than 0", d.name, d.v)
		}
	}
	for _, n := range []struct {
		name string
		v    int
	}{{"sign-in failures", c.SignInFailures}, {"sign-in client failures", c.SignInClientFailures}, {"sign-in owner failures", c.SignInOwnerFailures}} {
		if n.v < 1 {
			return fmt.Errorf("oauth: %s %d: want at least 1", n.name, n.v)
		}
	}
	if c.SignInDelay < 0 || c.SignInMaxDelay < c.SignInDelay || c.SignInWindow <= 0 {
		return fmt.Errorf("oauth: sign-in delay %s, max delay %s, window %s: want 0 <= delay <= max delay and a window over 0",
			c.SignInDelay, c.SignInMaxDelay, c.SignInWindow)
	}
	if c.PasswordHashMemoryMiB < argonMemory/1024 {
		return fmt.Errorf("oauth: password hash memory %d MiB: want at least %d, the memory of one check", c.PasswordHashMemoryMiB, argonMemory/1024)
	}
	if c.PasswordHashWait <= 0 {
		return fmt.Errorf("oauth: password hash wait %s: want more than 0", c.PasswordHashWait)
	}
	if c.Now == nil || c.Logger == nil {
		return fmt.Errorf("oauth: a clock and a logger are required")
	}
	return nil
}

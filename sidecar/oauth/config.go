package oauth

import (
	"fmt"
	"log/slog"
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
	// SignInFailures is how many wrong passwords an owner, or an address,
	// may send in a minute; the next attempt is refused unchecked.
	SignInFailures int
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
	if c.SignInFailures < 1 {
		return fmt.Errorf("oauth: sign-in failures %d: want at least 1", c.SignInFailures)
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

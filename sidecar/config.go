package sidecar

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/sidecar/authtoken"
	"github.com/guidepub/guidepub/sidecar/oauth"
	"github.com/guidepub/guidepub/sidecar/privatetree"
	"github.com/guidepub/guidepub/site/clock"
	"github.com/guidepub/guidepub/site/config"
)

// DefaultTokenCacheTTL is how long a credential read from the store is
// reused before it is read again. It bounds how long a revoked or expired
// token can still be accepted by a running sidecar.
const DefaultTokenCacheTTL = time.Second

// SigningKeySecret names the store secret that holds the authtoken signing
// key when none is configured.
const SigningKeySecret = "authtoken-signing-key"

// Config configures Events and Server. Build it in cmd and pass the same
// value to NewEvents and New.
type Config struct {
	// Private is the private tree the exporter writes, in a bucket
	// (privatetree.Bucket) or a folder; nil: the folder PrivateDir of
	// PrivateFS.
	Private privatetree.Tree
	// PrivateFS and PrivateDir locate the private tree in a folder when
	// Private is nil.
	PrivateFS  afero.Fs
	PrivateDir string
	// ViewURL and BaseURL are the public view host and the Portal API host;
	// they are only logged (the exporter already wrote them into events).
	ViewURL, BaseURL string

	// RateLimit is the number of Portal API requests per second each app
	// may make; zero or less means no limit. Burst is the bucket size
	// (default: RateLimit rounded up, at least 1).
	RateLimit float64
	Burst     int

	// SigningKeys sign authtokens: the first signs, all verify (rotation:
	// put the new key first, keep the old ones until their tokens expire).
	// Empty: a key is generated once and kept in the store (SigningKeySecret).
	SigningKeys [][]byte

	// TokenCacheTTL is how long a credential read from the store is reused
	// (DefaultConfig: DefaultTokenCacheTTL); zero disables the cache.
	TokenCacheTTL time.Duration

	// OAuth, when set, is the authorization server: its endpoints are
	// served and its access tokens accepted like API tokens.
	OAuth *oauth.Server

	Clock  clock.Clock  // clock.System() when nil
	Logger *slog.Logger // slog.Default() when nil
	// NoRequestLog leaves out the log line of each request (dev's default,
	// so its terminal shows what happens rather than every request); the
	// metrics still count every request.
	NoRequestLog bool

	// Registerer receives the API metrics; Gatherer is what /metrics
	// serves. When both are nil a private registry is used for both.
	Registerer prometheus.Registerer
	Gatherer   prometheus.Gatherer
}

// withDefaults returns cfg with its zero fields filled in, or an error for a
// configuration that cannot work.
func (cfg Config) withDefaults() (Config, error) {
	if err := cfg.Validate(); err != nil {
		return cfg, fmt.Errorf("sidecar: %w", err)
	}
	cfg.Clock = clock.Or(cfg.Clock)
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.RateLimit > 0 && cfg.Burst <= 0 {
		cfg.Burst = int(cfg.RateLimit)
		if float64(cfg.Burst) < cfg.RateLimit {
			cfg.Burst++
		}
		if cfg.Burst < 1 {
			cfg.Burst = 1
		}
	}
	if cfg.Registerer == nil && cfg.Gatherer == nil {
		reg := prometheus.NewRegistry()
		cfg.Registerer, cfg.Gatherer = reg, reg
	}
	if cfg.Gatherer == nil {
		if g, ok := cfg.Registerer.(prometheus.Gatherer); ok {
			cfg.Gatherer = g
		} else {
			cfg.Gatherer = prometheus.DefaultGatherer
		}
	}
	if cfg.Registerer == nil {
		cfg.Registerer = prometheus.NewRegistry() // metrics kept but not served
	}
	return cfg, nil
}

// root returns the private tree: Private, or the folder PrivateDir of
// PrivateFS, out of which no name read through it can lead.
func (cfg Config) root() privatetree.Tree {
	if cfg.Private != nil {
		return cfg.Private
	}
	return privatetree.Folder(cfg.PrivateFS, cfg.PrivateDir)
}

// DefaultConfig returns the settings "guidepub sidecar" starts from: 100
// Portal API requests per second per app, the DefaultTokenCacheTTL and
// the system clock. The private tree is left to the caller.
func DefaultConfig() Config {
	return Config{RateLimit: 100, TokenCacheTTL: DefaultTokenCacheTTL, Clock: clock.System()}
}

// Validate returns one *config.FieldError per field that cannot work
// (joined), or nil.
func (cfg Config) Validate() error {
	var p config.Problems
	p.Add(cfg.Private != nil || cfg.PrivateFS != nil, "PrivateFS", "is required (or Private)")
	p.Add(cfg.RateLimit >= 0 && cfg.RateLimit <= 1e9, "RateLimit", "must be between 0 and 1e9, got %v", cfg.RateLimit)
	p.Add(cfg.Burst >= 0, "Burst", "must not be negative, got %d", cfg.Burst)
	p.Add(cfg.TokenCacheTTL >= 0, "TokenCacheTTL", "must not be negative, got %s", cfg.TokenCacheTTL)
	for i, k := range cfg.SigningKeys {
		p.Add(len(k) >= authtoken.MinKeyLen, "SigningKeys", "key %d is %d bytes, want at least %d", i+1, len(k), authtoken.MinKeyLen)
	}
	return p.Err()
}

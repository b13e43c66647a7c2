package main

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/spf13/afero"
	"github.com/urfave/cli/v2"
	"gocloud.dev/blob"

	"github.com/guidepub/guidepub/exporter/publish"
	"github.com/guidepub/guidepub/sidecar"
	"github.com/guidepub/guidepub/sidecar/authtoken"
	"github.com/guidepub/guidepub/sidecar/delivery"
	"github.com/guidepub/guidepub/sidecar/oauth"
	"github.com/guidepub/guidepub/sidecar/privatetree"
	"github.com/guidepub/guidepub/sidecar/store"
	"github.com/guidepub/guidepub/site/bucket"
	"github.com/guidepub/guidepub/site/clock"
	"github.com/guidepub/guidepub/site/httpserver"
)

// defaultStoreFile is the SQLite file used inside --private when --store is
// not given.
const defaultStoreFile = "guidepub.db"

// storeDSN returns the store of c: --store, else guidepub.db inside
// --private. It returns a *usageError when neither is set.
func storeDSN(c *cli.Context) (string, error) {
	if dsn := c.String("store"); dsn != "" {
		return dsn, nil
	}
	priv := c.String("private")
	if bucket.IsURL(priv) {
		return "", usagef("--store is required when --private is a bucket (the SQLite file goes in a folder)")
	}
	if priv != "" {
		return filepath.Join(priv, defaultStoreFile), nil
	}
	return "", usagef("--store or --private is required")
}

// sidecarConfig is everything openSidecar needs, built from flags by
// sidecarConfigFrom or directly by other commands.
type sidecarConfig struct {
	Private             string // private tree written by the exporter
	Store               string // store DSN (see storeDSN)
	ViewURL, BaseURL    string
	RetryMin, RetryMax  time.Duration
	MaxAttempts         int
	DeliveryTimeout     time.Duration
	DeliveryWorkers     int
	AllowPrivateTargets bool
	RateLimit           float64 // requests per second per app; 0: none
	SigningKeys         [][]byte
	InstanceID          string            // see delivery.Config.InstanceID
	AccessTokenTTL      time.Duration     // OAuth access tokens
	RefreshTokenTTL     time.Duration     // OAuth refresh tokens
	NoRequestLog        bool              // no log line per request (dev without --log-requests)
	TrustedProxies      []net.IPNet       // whose X-Forwarded-For sign-in believes
	HTTP                httpserver.Limits // of the server runSidecar starts; zero: none
	Logger              *slog.Logger
	Clock               clock.Clock // nil: clock.System()
}

// defaultSidecarConfig returns the settings the sidecar starts from: the
// defaults of packages delivery and sidecar.
func defaultSidecarConfig() sidecarConfig {
	d, s := delivery.DefaultConfig(), sidecar.DefaultConfig()
	return sidecarConfig{
		RetryMin: d.RetryMin, RetryMax: d.RetryMax, MaxAttempts: d.MaxAttempts,
		DeliveryTimeout: d.Timeout, DeliveryWorkers: d.Workers,
		RateLimit: s.RateLimit, Clock: s.Clock,
		AccessTokenTTL: oauth.DefaultConfig().AccessTokenLifespan, RefreshTokenTTL: oauth.DefaultConfig().RefreshTokenLifespan,
	}
}

// newSidecarConfig returns defaultSidecarConfig with the private tree,
// the store and the logger set.
func newSidecarConfig(private, store string, logger *slog.Logger) sidecarConfig {
	cfg := defaultSidecarConfig()
	cfg.Private, cfg.Store, cfg.Logger = private, store, logger
	return cfg
}

// configs returns the delivery and sidecar configurations of cfg.
func (cfg sidecarConfig) configs(reg *prometheus.Registry) (delivery.Config, sidecar.Config) {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	d := delivery.DefaultConfig()
	d.RetryMin, d.RetryMax, d.MaxAttempts = cfg.RetryMin, cfg.RetryMax, cfg.MaxAttempts
	d.Timeout, d.Workers, d.AllowPrivateTargets = cfg.DeliveryTimeout, cfg.DeliveryWorkers, cfg.AllowPrivateTargets
	d.Logger, d.Clock, d.InstanceID = logger, clock.Or(cfg.Clock), cfg.InstanceID
	s := sidecar.DefaultConfig()
	s.PrivateFS, s.PrivateDir = afero.NewOsFs(), cfg.Private
	s.ViewURL, s.BaseURL = cfg.ViewURL, cfg.BaseURL
	s.RateLimit, s.SigningKeys = cfg.RateLimit, cfg.SigningKeys
	s.Clock, s.Logger, s.NoRequestLog = clock.Or(cfg.Clock), logger, cfg.NoRequestLog
	if reg != nil {
		d.Registerer, s.Registerer, s.Gatherer = reg, reg, reg
	}
	return d, s
}

// validate checks the configurations cfg builds, once, in their packages.
// It returns a *usageError naming the fields that cannot work.
func (cfg sidecarConfig) validate() error {
	d, s := cfg.configs(nil)
	var ttl error
	if cfg.AccessTokenTTL <= 0 || cfg.RefreshTokenTTL <= 0 {
		ttl = usagef("--access-token-ttl and --refresh-token-ttl must be positive")
	}
	return errors.Join(validConfig(errors.Join(d.Validate(), s.Validate())), ttl)
}

// sidecarConfigFrom reads the sidecar's flags (deliveryFlags, storeFlag,
// --private, --view-url and --base-url) from c over
// defaultSidecarConfig. It returns a *usageError for bad values.
func (e *env) sidecarConfigFrom(c *cli.Context, logger *slog.Logger) (sidecarConfig, error) {
	cfg := defaultSidecarConfig()
	cfg.Private, cfg.ViewURL, cfg.BaseURL = c.String("private"), c.String("view-url"), c.String("base-url")
	cfg.AllowPrivateTargets = c.Bool("allow-private-targets")
	cfg.Logger, cfg.Clock = logger, e.clock
	if cfg.Private == "" {
		return cfg, usagef("--private is required")
	}
	dsn, err := storeDSN(c)
	if err != nil {
		return cfg, err
	}
	cfg.Store = dsn
	if err := readDeliveryFlags(c, &cfg); err != nil {
		return cfg, err
	}
	if cfg.HTTP, err = readServerLimits(c); err != nil {
		return cfg, err
	}
	if cfg.InstanceID == "" {
		cfg.InstanceID = defaultInstanceID(c.String("addr"))
	}
	return cfg, cfg.validate()
}

// readDeliveryFlags reads deliveryFlags from c into cfg; sidecar and dev
// share it. It returns a *usageError for a bad rate or signing key.
func readDeliveryFlags(c *cli.Context, cfg *sidecarConfig) error {
	cfg.RetryMin, cfg.RetryMax = c.Duration("retry-min"), c.Duration("retry-max")
	cfg.MaxAttempts, cfg.DeliveryTimeout = c.Int("max-attempts"), c.Duration("delivery-timeout")
	cfg.DeliveryWorkers = c.Int("delivery-workers")
	cfg.InstanceID = c.String("instance-id")
	cfg.AccessTokenTTL, cfg.RefreshTokenTTL = c.Duration("access-token-ttl"), c.Duration("refresh-token-ttl")
	var err error
	if cfg.RateLimit, err = parseRate(c.String("rate-limit")); err != nil {
		return usagef("--rate-limit: %v", err)
	}
	if cfg.SigningKeys, err = parseSigningKeys(c.StringSlice("signing-key")); err != nil {
		return usagef("--signing-key: %v", err)
	}
	if cfg.TrustedProxies, err = oauth.ParseTrustedProxies(splitList(c.StringSlice("trusted-proxies"))...); err != nil {
		return usagef("--trusted-proxies: %v", err)
	}
	return nil
}

// splitList splits comma-separated values and drops empty ones.
func splitList(values []string) []string {
	var out []string
	for _, v := range values {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// defaultInstanceID names a sidecar by its host and listen address, which
// stay the same across restarts and differ between sidecars running at
// once on one host. An address with port 0 names no port (every such
// sidecar on the host would share it), so the process id stands in: unique
// among running processes, though not kept across restarts.
func defaultInstanceID(addr string) string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	if _, port, err := net.SplitHostPort(addr); err == nil && port == "0" {
		addr = "pid-" + strconv.Itoa(os.Getpid())
	}
	id := host + "/" + addr
	if len(id) > 100 {
		id = id[:100]
	}
	return id
}

// parseRate parses "N/s", "N/m", "N/h" or "N" (per second) into requests
// per second; "0" means no limit.
func parseRate(s string) (float64, error) {
	num, unit, found := strings.Cut(strings.TrimSpace(s), "/")
	per := time.Second
	if found {
		switch strings.TrimSpace(unit) {
		case "s":
		case "m":
			per = time.Minute
		case "h":
			per = time.Hour
		default:
			return 0, fmt.Errorf("unknown unit %q in %q: use /s, /m or /h", unit, s)
		}
	}
	n, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || n < 0 || n != n || n > 1e9 {
		return 0, fmt.Errorf("%q is not a rate such as 100/s", s)
	}
	return n / per.Seconds(), nil
}

// parseSigningKeys decodes base64 (standard or URL alphabet, padded or not)
// signing keys; values may also be comma-separated.
func parseSigningKeys(values []string) ([][]byte, error) {
	var keys [][]byte
	for _, v := range values {
		for _, s := range strings.Split(v, ",") {
			s = strings.TrimSpace(s)
			if s == "" {
				continue
			}
			var k []byte
			var err error
			for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
				if k, err = enc.DecodeString(s); err == nil {
					break
				}
			}
			if err != nil {
				return nil, fmt.Errorf("a key is not base64")
			}
			if len(k) < authtoken.MinKeyLen {
				return nil, fmt.Errorf("a key is %d bytes, want at least %d", len(k), authtoken.MinKeyLen)
			}
			keys = append(keys, k)
		}
	}
	return keys, nil
}

// sidecarParts are the sidecar's pieces, built by openSidecar: "sidecar"
// serves Server alone, "dev" mounts it beside the static server, "watch"
// and "export" use Events to queue ready events.
type sidecarParts struct {
	Bucket   *blob.Bucket // the private tree's, when --private is one; else nil
	Store    *store.Store
	Queue    *delivery.Queue
	Events   *sidecar.Events
	Server   *sidecar.Server
	Registry *prometheus.Registry // served at /metrics: API, queue, Go and process metrics
}

// openSidecar opens the store and builds the queue, events and HTTP
// handler of cfg. The queue is not started: call Start. It returns an
// error when the store cannot be opened or a part cannot be built (the
// store is closed again then).
func openSidecar(ctx context.Context, cfg sidecarConfig) (*sidecarParts, error) {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	dcfg, scfg := cfg.configs(reg)
	var b *blob.Bucket
	if bucket.IsURL(cfg.Private) {
		var err error
		if b, err = bucket.Open(ctx, cfg.Private); err != nil {
			return nil, fmt.Errorf("--private: %w", err)
		}
		scfg.Private = privatetree.Bucket(b, publish.RedactURL(cfg.Private))
	}
	st, err := store.Open(ctx, cfg.Store, logger)
	if err != nil {
		closeBucket(b)
		return nil, fmt.Errorf("open store: %w", err)
	}
	parts, err := buildSidecar(ctx, cfg, st, reg, dcfg, scfg)
	if err != nil {
		closeBucket(b)
		st.Close()
		return nil, err
	}
	parts.Bucket = b
	return parts, nil
}

// closeBucket closes b, if any.
func closeBucket(b *blob.Bucket) {
	if b != nil {
		b.Close()
	}
}

// buildSidecar builds the queue, events and HTTP handler of cfg on st.
func buildSidecar(ctx context.Context, cfg sidecarConfig, st *store.Store, reg *prometheus.Registry, dcfg delivery.Config, scfg sidecar.Config) (*sidecarParts, error) {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	q, err := delivery.New(st, dcfg)
	if err != nil {
		return nil, fmt.Errorf("delivery queue: %w", err)
	}
	if scfg.OAuth, err = openOAuth(ctx, cfg, st, logger); err != nil {
		return nil, err
	}
	ev, err := sidecar.NewEvents(scfg, st, q)
	if err != nil {
		return nil, err
	}
	srv, err := sidecar.New(scfg, st, q, ev)
	if err != nil {
		return nil, err
	}
	return &sidecarParts{Store: st, Queue: q, Events: ev, Server: srv, Registry: reg}, nil
}

// Start starts delivering queued webhooks (those left by an earlier run
// included) until Close. It returns the queue's start error.
func (p *sidecarParts) Start(ctx context.Context) error { return p.Queue.Start(ctx) }

// Close stops taking new deliveries, waits for in-flight sends until ctx is
// done, and closes the store. It returns the first error.
func (p *sidecarParts) Close(ctx context.Context) error {
	err := p.Queue.Stop(ctx)
	closeBucket(p.Bucket)
	return errors.Join(err, p.Store.Close())
}

// sidecarCommand returns the "sidecar" command: the Portal API, webhook
// delivery and private documents on one listener.
func (e *env) sidecarCommand() *cli.Command {
	return &cli.Command{
		Name:  "sidecar",
		Usage: "serve the Portal API, webhook delivery and private documents",
		Description: `Serves /api/v1 (credential test, ready event object and dispatch, delivery
history and retry), /private/<guideId>/<file>?accessToken=..., the OAuth
authorization server (/oauth/authorize, /oauth/signin, /oauth/token,
/oauth/revoke and /.well-known/oauth-authorization-server; see
docs/oauth.md), /healthz, /readyz and /metrics, and delivers queued webhooks. On SIGTERM it stops
accepting requests, finishes in-flight ones and in-flight webhook sends,
and exits; queued deliveries resume at the next start.

Examples:
   guidepub sidecar --private private --addr 127.0.0.1:9090
   guidepub sidecar --private private --store postgres://guidepub@db/guidepub --view-url https://views.example.com
   GUIDEPUB_STORE=postgres://guidepub@db/guidepub GUIDEPUB_PRIVATE=/data/private guidepub sidecar`,
		Flags: flags(addrFlag("127.0.0.1:8081"), privateFlag(), storeFlag(), sidecarURLFlags(),
			deliveryFlags(), allowPrivateTargetsFlag(), serverFlags(httpserver.Default())),
		Action: e.runSidecarCommand,
	}
}

// runSidecarCommand is the "sidecar" command.
func (e *env) runSidecarCommand(c *cli.Context) error {
	logger := newLogger(e.stderr, slog.LevelInfo)
	cfg, err := e.sidecarConfigFrom(c, logger)
	if err != nil {
		return err
	}
	if fi, err := os.Stat(cfg.Private); !bucket.IsURL(cfg.Private) && (err != nil || !fi.IsDir()) {
		return usagef("--private %s is not a folder", cfg.Private)
	}
	limitMemoryTo(sidecarMemoryBudget(), logger)
	ln, err := listen(c.String("addr"), false)
	if err != nil {
		return err
	}
	return runSidecar(c.Context, cfg, ln, logger)
}

// runSidecar serves the sidecar of cfg on ln until ctx is done, then shuts
// down gracefully (at most shutdownTimeout). It returns the first error of
// building, serving or shutting down.
func runSidecar(ctx context.Context, cfg sidecarConfig, ln net.Listener, logger *slog.Logger) error {
	parts, err := openSidecar(ctx, cfg)
	if err != nil {
		ln.Close()
		return err
	}
	if err := parts.Start(context.WithoutCancel(ctx)); err != nil {
		ln.Close()
		parts.Close(context.Background())
		return err // Queue.Start says "start delivery queue"
	}
	logger.Info("sidecar listening", "addr", ln.Addr().String(), "store", parts.Store.Dialect(), "private", cfg.Private)
	return serveHTTP(ctx, ln, parts.Server, cfg.HTTP, logger, func(ctx context.Context) error {
		if err := parts.Close(ctx); err != nil {
			return fmt.Errorf("stop delivery queue: %w", err)
		}
		return nil
	})
}

package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/spf13/afero"
	"github.com/urfave/cli/v2"

	"github.com/guidepub/guidepub/sidecar"
	"github.com/guidepub/guidepub/sidecar/apitoken"
	"github.com/guidepub/guidepub/sidecar/authtoken"
	"github.com/guidepub/guidepub/sidecar/delivery"
	"github.com/guidepub/guidepub/sidecar/oauth"
	"github.com/guidepub/guidepub/sidecar/store"
)

// defaultStoreFile is the SQLite file used inside --private when --store is
// not given.
const defaultStoreFile = "guidepub.db"

// storeFlag returns the --store flag shared by sidecar, token, dev, watch
// and export.
func storeFlag() cli.Flag {
	return &cli.StringFlag{Name: "store", EnvVars: envVars("store"),
		Usage: "SQLite file path or postgres:// URL (default: " + defaultStoreFile + " inside --private)"}
}

// storeDSN returns the store of c: --store, else guidepub.db inside
// --private. It returns a *usageError when neither is set.
func storeDSN(c *cli.Context) (string, error) {
	if dsn := c.String("store"); dsn != "" {
		return dsn, nil
	}
	if priv := c.String("private"); priv != "" {
		return filepath.Join(priv, defaultStoreFile), nil
	}
	return "", usagef("--store or --private is required")
}

// deliveryFlags returns the flags that tune webhook delivery and the
// Portal API, shared by "sidecar" and "dev" (which add --addr, --private,
// --store and the URL flags themselves).
func deliveryFlags() []cli.Flag {
	return []cli.Flag{
		&cli.DurationFlag{Name: "retry-min", Value: 10 * time.Minute, EnvVars: envVars("retry-min"),
			Usage: "shortest wait before re-sending a delivery that got a 5xx, a timeout or no connection"},
		&cli.DurationFlag{Name: "retry-max", Value: 15 * time.Minute, EnvVars: envVars("retry-max"),
			Usage: "longest such wait (the wait is uniformly random in between)"},
		&cli.IntFlag{Name: "max-attempts", Value: 5, EnvVars: envVars("max-attempts"),
			Usage: "attempts per delivery, the first included"},
		&cli.DurationFlag{Name: "delivery-timeout", Value: 30 * time.Second, EnvVars: envVars("delivery-timeout"),
			Usage: "time limit of one delivery attempt"},
		&cli.IntFlag{Name: "delivery-workers", Value: 64, EnvVars: envVars("delivery-workers"),
			Usage: "deliveries sent at once"},
		&cli.BoolFlag{Name: "allow-private-targets", EnvVars: envVars("allow-private-targets"),
			Usage: "allow webhook URLs on loopback, private and link-local addresses (tests, on-premises)"},
		&cli.StringFlag{Name: "rate-limit", Value: "100/s", EnvVars: envVars("rate-limit"),
			Usage: "Portal API requests per app: N/s, N/m or N/h; 0 for no limit"},
		&cli.StringFlag{Name: "instance-id", EnvVars: envVars("instance-id"),
			Usage: "stable name of this sidecar: after a crash, the same name re-sends its in-flight deliveries at once " +
				"(default: host name and --addr; two running sidecars must not share one)"},
		&cli.DurationFlag{Name: "access-token-ttl", Value: oauth.DefaultConfig().AccessTokenLifespan, EnvVars: envVars("access-token-ttl"),
			Usage: "lifetime of an OAuth access token"},
		&cli.DurationFlag{Name: "refresh-token-ttl", Value: oauth.DefaultConfig().RefreshTokenLifespan, EnvVars: envVars("refresh-token-ttl"),
			Usage: "lifetime of an OAuth refresh token"},
		&cli.StringSliceFlag{Name: "signing-key", EnvVars: envVars("signing-key"),
			Usage: "base64 key (32+ bytes) signing private-document tokens; repeat or comma-separate to rotate: " +
				"the first signs, all verify (default: a key generated once and kept in the store)"},
	}
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
	InstanceID          string        // see delivery.Config.InstanceID
	AccessTokenTTL      time.Duration // OAuth access tokens
	RefreshTokenTTL     time.Duration // OAuth refresh tokens
	Logger              *slog.Logger
	Now                 func() time.Time // default time.Now
}

// sidecarConfigFrom reads the flags of deliveryFlags, storeFlag, --private,
// --view-url and --base-url from c. It returns a *usageError for bad values.
func sidecarConfigFrom(c *cli.Context, logger *slog.Logger) (sidecarConfig, error) {
	cfg := sidecarConfig{
		Private:             c.String("private"),
		ViewURL:             c.String("view-url"),
		BaseURL:             c.String("base-url"),
		RetryMin:            c.Duration("retry-min"),
		RetryMax:            c.Duration("retry-max"),
		MaxAttempts:         c.Int("max-attempts"),
		DeliveryTimeout:     c.Duration("delivery-timeout"),
		DeliveryWorkers:     c.Int("delivery-workers"),
		AllowPrivateTargets: c.Bool("allow-private-targets"),
		InstanceID:          c.String("instance-id"),
		AccessTokenTTL:      c.Duration("access-token-ttl"),
		RefreshTokenTTL:     c.Duration("refresh-token-ttl"),
		Logger:              logger,
	}
	if cfg.Private == "" {
		return cfg, usagef("--private is required")
	}
	dsn, err := storeDSN(c)
	if err != nil {
		return cfg, err
	}
	cfg.Store = dsn
	if cfg.RetryMin <= 0 || cfg.RetryMax < cfg.RetryMin {
		return cfg, usagef("--retry-min must be positive and at most --retry-max")
	}
	if cfg.MaxAttempts < 1 {
		return cfg, usagef("--max-attempts must be at least 1")
	}
	if cfg.DeliveryTimeout <= 0 {
		return cfg, usagef("--delivery-timeout must be positive")
	}
	if cfg.DeliveryWorkers < 1 {
		return cfg, usagef("--delivery-workers must be at least 1")
	}
	if cfg.InstanceID == "" {
		cfg.InstanceID = defaultInstanceID(c.String("addr"))
	}
	if cfg.AccessTokenTTL <= 0 || cfg.RefreshTokenTTL <= 0 {
		return cfg, usagef("--access-token-ttl and --refresh-token-ttl must be positive")
	}
	if cfg.RateLimit, err = parseRate(c.String("rate-limit")); err != nil {
		return cfg, usagef("--rate-limit: %v", err)
	}
	if cfg.SigningKeys, err = parseSigningKeys(c.StringSlice("signing-key")); err != nil {
		return cfg, usagef("--signing-key: %v", err)
	}
	return cfg, nil
}

// defaultInstanceID names a sidecar by its host and listen address, which
// stay the same across restarts and differ between sidecars running at
// once on one host.
func defaultInstanceID(addr string) string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
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
	st, err := store.Open(ctx, cfg.Store, logger)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	q, err := delivery.New(st, delivery.Config{
		RetryMin: cfg.RetryMin, RetryMax: cfg.RetryMax, MaxAttempts: cfg.MaxAttempts,
		Timeout: cfg.DeliveryTimeout, AllowPrivateTargets: cfg.AllowPrivateTargets,
		Workers: cfg.DeliveryWorkers, Logger: logger, Registerer: reg, Now: cfg.Now,
		InstanceID: cfg.InstanceID,
	})
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("delivery queue: %w", err)
	}
	auth, err := openOAuth(ctx, cfg, st, logger)
	if err != nil {
		st.Close()
		return nil, err
	}
	scfg := sidecar.Config{
		PrivateFS: afero.NewOsFs(), PrivateDir: cfg.Private,
		ViewURL: cfg.ViewURL, BaseURL: cfg.BaseURL,
		RateLimit: cfg.RateLimit, SigningKeys: cfg.SigningKeys, OAuth: auth,
		Now: cfg.Now, Logger: logger, Registerer: reg, Gatherer: reg,
	}
	ev, err := sidecar.NewEvents(scfg, st, q)
	if err != nil {
		st.Close()
		return nil, err
	}
	srv, err := sidecar.New(scfg, st, q, ev)
	if err != nil {
		st.Close()
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
	return errors.Join(err, p.Store.Close())
}

// newLogger returns the structured logger of long-running commands: JSON
// lines on stderr.
func newLogger(c *cli.Context) *slog.Logger {
	return slog.New(slog.NewJSONHandler(c.App.ErrWriter, nil))
}

// sidecarCommand returns the "sidecar" command: the Portal API, webhook
// delivery and private documents on one listener.
func sidecarCommand() *cli.Command {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "addr", Value: "127.0.0.1:8081", EnvVars: envVars("addr"), Usage: "HOST:PORT to listen on"},
		&cli.StringFlag{Name: "private", EnvVars: envVars("private"), Usage: "private tree written by export (records, events, private documents)"},
		storeFlag(),
	}
	for _, f := range urlFlags() { // the sidecar links nothing: only the hosts it logs
		if n := f.Names()[0]; n == "view-url" || n == "base-url" {
			flags = append(flags, f)
		}
	}
	flags = append(flags, deliveryFlags()...)
	return &cli.Command{
		Name:  "sidecar",
		Usage: "serve the Portal API, webhook delivery and private documents",
		Description: `Serves /api/v1 (credential test, ready event object and dispatch, delivery
history and retry), /private/<guideId>/<file>?accessToken=..., /healthz,
/readyz and /metrics, and delivers queued webhooks. On SIGTERM it stops
accepting requests, finishes in-flight ones and in-flight webhook sends,
and exits; queued deliveries resume at the next start.

Examples:
   guidepub sidecar --private private --addr 127.0.0.1:9090
   guidepub sidecar --private private --store postgres://guidepub@db/guidepub --view-url https://views.example.com
   GUIDEPUB_STORE=postgres://guidepub@db/guidepub GUIDEPUB_PRIVATE=/data/private guidepub sidecar`,
		Flags: flags,
		Action: func(c *cli.Context) error {
			logger := newLogger(c)
			cfg, err := sidecarConfigFrom(c, logger)
			if err != nil {
				return err
			}
			if fi, err := os.Stat(cfg.Private); err != nil || !fi.IsDir() {
				return usagef("--private %s is not a folder", cfg.Private)
			}
			ln, err := net.Listen("tcp", c.String("addr"))
			if err != nil {
				return fmt.Errorf("listen: %w", err)
			}
			return runSidecar(c.Context, cfg, ln, logger)
		},
	}
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
		return fmt.Errorf("start delivery queue: %w", err)
	}
	srv := &http.Server{
		Handler:           parts.Server,
		ReadHeaderTimeout: 10 * time.Second,
		// "OPTIONS *" reaches the handler (a JSON 404) instead of net/http's empty 200.
		DisableGeneralOptionsHandler: true,
		IdleTimeout:                  2 * time.Minute,
		ErrorLog:                     slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	logger.Info("sidecar listening", "addr", ln.Addr().String(), "store", parts.Store.Dialect(), "private", cfg.Private)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err = <-served: // Serve failed before any shutdown
	case <-ctx.Done():
	}
	logger.Info("sidecar shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if serr := srv.Shutdown(sctx); serr != nil {
		err = errors.Join(err, fmt.Errorf("shutdown: %w", serr))
	}
	if cerr := parts.Close(sctx); cerr != nil {
		err = errors.Join(err, fmt.Errorf("stop delivery queue: %w", cerr))
	}
	return err
}

// shutdownTimeout bounds a graceful shutdown: in-flight requests and
// webhook sends get this long to finish.
const shutdownTimeout = 40 * time.Second

// tokenCommand returns the "token" command: create, list and revoke Portal
// API credentials.
func tokenCommand() *cli.Command {
	storeFlags := []cli.Flag{
		storeFlag(),
		&cli.StringFlag{Name: "private", EnvVars: envVars("private"), Usage: "private tree (the store defaults to " + defaultStoreFile + " in it)"},
	}
	return &cli.Command{
		Name:  "token",
		Usage: "create, list and revoke Portal API credentials",
		Description: `Credentials for the Portal API: an app id (X-Svc-App-Id) and a token value
(X-Svc-App-Token). The value is printed once, at creation; the store keeps only
its SHA-256 hash. Scopes are the Portal API's: ` + strings.Join(apitoken.Scopes, ", ") + `.

Examples:
   guidepub token create --private private --owner user-1001 --scopes guide.events
   guidepub token create --store postgres://guidepub@db/guidepub --owner user-1001 --scopes guide.events --expires 720h --json
   guidepub token list --private private --owner user-1001
   guidepub token revoke --private private gpa_0123456789abcdef`,
		Subcommands: []*cli.Command{
			{
				Name:  "create",
				Usage: "create credentials for an owner; the token value is printed once and stored only as a hash",
				Description: `Examples:
   guidepub token create --private private --owner user-1001 --scopes guide.events
   guidepub token create --store postgres://guidepub@db/guidepub --owner user-1001 --scopes guide.events,guide.read --expires 720h --json`,
				Flags: append([]cli.Flag{
					&cli.StringFlag{Name: "owner", Usage: "owner (user) id whose guides the token may use", EnvVars: envVars("owner")},
					&cli.StringFlag{Name: "scopes", Usage: "comma-separated scopes: " + strings.Join(apitoken.Scopes, ","), EnvVars: envVars("scopes")},
					&cli.StringFlag{Name: "expires", Usage: "expiry: a duration from now (720h) or an RFC 3339 time; default never", EnvVars: envVars("expires")},
					&cli.BoolFlag{Name: "json", Usage: `print {"appId": ..., "token": ...} for scripts`, EnvVars: envVars("json")},
				}, storeFlags...),
				Action: tokenCreate,
			},
			{
				Name:  "list",
				Usage: "list credentials (never their values)",
				Description: `Examples:
   guidepub token list --private private
   guidepub token list --private private --owner user-1001 --json`,
				Flags: append([]cli.Flag{
					&cli.StringFlag{Name: "owner", Usage: "only this owner's credentials", EnvVars: envVars("owner")},
					&cli.BoolFlag{Name: "json", Usage: "print a JSON array", EnvVars: envVars("json")},
				}, storeFlags...),
				Action: tokenList,
			},
			{
				Name:  "revoke",
				Usage: "revoke credentials: requests with them fail from now on",
				Description: `Examples:
   guidepub token revoke --private private gpa_0123456789abcdef`,
				ArgsUsage: "APPID",
				Flags:     storeFlags,
				Action:    tokenRevoke,
			},
		},
	}
}

// openTokenStore opens the store named by --store or --private.
func openTokenStore(c *cli.Context) (*store.Store, error) {
	dsn, err := storeDSN(c)
	if err != nil {
		return nil, err
	}
	st, err := store.Open(c.Context, dsn, slog.New(slog.DiscardHandler))
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	return st, nil
}

// parseScopes splits a comma-separated scope list, refusing unknown scopes.
func parseScopes(s string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, sc := range strings.Split(s, ",") {
		sc = strings.TrimSpace(sc)
		if sc == "" {
			continue
		}
		if !apitoken.ValidScope(sc) {
			return nil, fmt.Errorf("unknown scope %q; scopes are %s", sc, strings.Join(apitoken.Scopes, ", "))
		}
		if !seen[sc] {
			out = append(out, sc)
			seen[sc] = true
		}
	}
	if len(out) == 0 {
		return nil, errors.New("at least one scope is required")
	}
	return out, nil
}

// parseExpires parses --expires: a positive duration from now or an RFC 3339
// time in the future. "" is no expiry (nil).
func parseExpires(s string, now time.Time) (*time.Time, error) {
	if s == "" {
		return nil, nil
	}
	var t time.Time
	if d, err := time.ParseDuration(s); err == nil {
		t = now.Add(d)
	} else if t, err = time.Parse(time.RFC3339, s); err != nil {
		return nil, fmt.Errorf("%q is neither a duration (720h) nor an RFC 3339 time", s)
	}
	if !t.After(now) {
		return nil, fmt.Errorf("%q is not in the future", s)
	}
	t = t.UTC().Truncate(time.Second)
	return &t, nil
}

func tokenCreate(c *cli.Context) error {
	owner := strings.TrimSpace(c.String("owner"))
	if owner == "" {
		return usagef("--owner is required")
	}
	scopes, err := parseScopes(c.String("scopes"))
	if err != nil {
		return usagef("--scopes: %v", err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	expires, err := parseExpires(c.String("expires"), now)
	if err != nil {
		return usagef("--expires: %v", err)
	}
	st, err := openTokenStore(c)
	if err != nil {
		return err
	}
	defer st.Close()
	appID, value, err := apitoken.New(nil)
	if err != nil {
		return err
	}
	if err := st.CreateToken(c.Context, store.Token{
		AppID: appID, OwnerID: owner, Scopes: scopes, Hash: apitoken.Hash(value),
		CreatedAt: now, ExpiresAt: expires,
	}); err != nil {
		return err
	}
	w := c.App.Writer
	if c.Bool("json") {
		return writeJSONLine(w, map[string]string{"appId": appID, "token": value})
	}
	fmt.Fprintf(w, "X-Svc-App-Id:    %s\nX-Svc-App-Token: %s\n", appID, value)
	fmt.Fprintf(w, "\nThis token value is shown only once: store it now. guidepub keeps only its hash.\n")
	fmt.Fprintf(w, "Owner %s, scopes %s, expires %s.\n", owner, strings.Join(scopes, ","), formatExpiry(expires))
	return nil
}

func formatExpiry(t *time.Time) string {
	if t == nil {
		return "never"
	}
	return t.UTC().Format(time.RFC3339)
}

// tokenInfo is one credential as "token list --json" prints it.
type tokenInfo struct {
	AppID     string     `json:"appId"`
	OwnerID   string     `json:"ownerId"`
	Scopes    []string   `json:"scopes"`
	CreatedAt time.Time  `json:"createdAt"`
	ExpiresAt *time.Time `json:"expiresAt,omitempty"`
	RevokedAt *time.Time `json:"revokedAt,omitempty"`
	Status    string     `json:"status"` // active, expired or revoked
}

func tokenList(c *cli.Context) error {
	st, err := openTokenStore(c)
	if err != nil {
		return err
	}
	defer st.Close()
	toks, err := st.Tokens(c.Context, c.String("owner"))
	if err != nil {
		return err
	}
	now := time.Now()
	infos := make([]tokenInfo, 0, len(toks))
	for _, t := range toks {
		status := "active"
		switch {
		case t.RevokedAt != nil:
			status = "revoked"
		case t.ExpiresAt != nil && !now.Before(*t.ExpiresAt):
			status = "expired"
		}
		scopes := t.Scopes
		if scopes == nil {
			scopes = []string{}
		}
		infos = append(infos, tokenInfo{AppID: t.AppID, OwnerID: t.OwnerID, Scopes: scopes,
			CreatedAt: t.CreatedAt.UTC(), ExpiresAt: t.ExpiresAt, RevokedAt: t.RevokedAt, Status: status})
	}
	w := c.App.Writer
	if c.Bool("json") {
		return writeJSONLine(w, infos)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "APP ID\tOWNER\tSCOPES\tCREATED\tEXPIRES\tSTATUS")
	for _, t := range infos {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", t.AppID, t.OwnerID, strings.Join(t.Scopes, ","),
			t.CreatedAt.Format(time.RFC3339), formatExpiry(t.ExpiresAt), t.Status)
	}
	return tw.Flush()
}

func tokenRevoke(c *cli.Context) error {
	if c.NArg() != 1 {
		return usagef("token revoke takes exactly one APPID")
	}
	appID := c.Args().First()
	st, err := openTokenStore(c)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := st.RevokeToken(c.Context, appID, time.Now().UTC()); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("no credentials with app id %q", appID)
		}
		return err
	}
	fmt.Fprintf(c.App.Writer, "revoked %s (running sidecars refuse it within %s)\n", appID, sidecar.DefaultTokenCacheTTL)
	return nil
}

// writeJSONLine writes v as one line of JSON.
func writeJSONLine(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

package main

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/afero"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/urfave/cli/v2"

	"github.com/guidepub/guidepub/exporter"
	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/fixtures"
	"github.com/guidepub/guidepub/sidecar/apitoken"
	"github.com/guidepub/guidepub/sidecar/store"
	"github.com/guidepub/guidepub/site"
	"github.com/guidepub/guidepub/site/serve"
)

// Layout of dev's work folder (--work-dir).
const (
	devSrcDir      = "src"      // the sample bundles, when --src is not given
	devExamplesDir = "examples" // sample bundles kept aside, to copy into src
	devOutDir      = "out"      // public tree
	devPrivateDir  = "private"  // private tree
	devStoreFile   = "guidepub.db"
)

// devExample is the sample bundle dev keeps out of the source folder, so a
// newcomer can try an upload by copying it in.
const devExample = "rue-saint-denis"

// devReceiverPath is where dev's own webhook receiver listens. A view id
// cannot contain '.', so no view can shadow it.
const devReceiverPath = "/dev.webhook"

// sidecarPaths are the path prefixes dev routes to the sidecar; everything
// else goes to the static server.
var sidecarPaths = append([]string{"/healthz", "/readyz", "/metrics"}, site.SidecarRoutes...)

// devCommand returns the "dev" command: watch, serve and the sidecar in one
// process.
func devCommand() *cli.Command {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "src", EnvVars: envVars("src"),
			Usage: "folder of bundles to watch (default: <work-dir>/src, filled once with the sample bundles)"},
		&cli.StringFlag{Name: "addr", Value: "127.0.0.1:8080", EnvVars: envVars("addr"),
			Usage: "host:port to listen on (port 0 picks a free one)"},
		&cli.StringFlag{Name: "work-dir", Value: ".guidepub", EnvVars: envVars("work-dir"),
			Usage: "work folder: out/ (public tree), private/, guidepub.db, and src/ and examples/ for the samples"},
		&cli.StringFlag{Name: "store", EnvVars: envVars("store"),
			Usage: "SQLite file or postgres:// URL of the store (default: <work-dir>/guidepub.db)"},
		&cli.StringFlag{Name: "view-url", EnvVars: envVars("view-url"), Usage: "public host of views (default: the listening address)"},
		&cli.StringFlag{Name: "unbranded-url", EnvVars: envVars("unbranded-url"), Usage: "public host of unbranded views (default: the listening address)"},
		&cli.StringFlag{Name: "embed-url", EnvVars: envVars("embed-url"), Usage: "public path of embedded views (default: <listening address>/embed)"},
		&cli.StringFlag{Name: "base-url", EnvVars: envVars("base-url"), Usage: "Portal host (default: the listening address)"},
	}
	flags = append(flags, watchFlags()...)
	for _, f := range deliveryFlags() {
		if f.Names()[0] != "allow-private-targets" { // always allowed in dev
			flags = append(flags, f)
		}
	}
	return &cli.Command{
		Name:  "dev",
		Usage: "watch, serve and run the sidecar in one process, on an embedded store: the whole service on one machine",
		Description: `Exports the bundles under --src (by default the sample bundles, copied once
into <work-dir>/src), watches them for uploads, and serves on one address:
/api/, /private/, /healthz, /readyz and /metrics from the sidecar, everything
else (the views' documents and media) from the exported tree. The store is a
SQLite file in the work folder; webhook deliveries go out from this process,
and loopback targets are allowed. It prints the URLs to try, and creates a
Portal API token for each owner of the exported guides (printed once).

The sample bundles' webhooks point at this process's own receiver,
` + devReceiverPath + `, which checks each delivery's signature and logs it.

Examples:
   guidepub dev                                  # the sample bundles, on 127.0.0.1:8080
   guidepub dev --src bundles --addr 127.0.0.1:9000
   cp -r .guidepub/examples/rue-saint-denis .guidepub/src/   # an upload, while dev runs`,
		Flags:        flags,
		OnUsageError: commandUsageError,
		Action:       runDev,
	}
}

// runDev is the dev command.
func runDev(c *cli.Context) error {
	ctx := c.Context
	logger := slog.New(slog.NewTextHandler(c.App.ErrWriter, nil))
	stdout := c.App.Writer

	work, err := filepath.Abs(c.String("work-dir"))
	if err != nil {
		return usagef("--work-dir: %v", err)
	}
	out, priv := filepath.Join(work, devOutDir), filepath.Join(work, devPrivateDir)
	for _, d := range []string{work, out, priv} {
		if err := ensureDir(d); err != nil {
			return cli.Exit(fmt.Sprintf("work folder: %v", err), exitFailure)
		}
	}

	ln, err := net.Listen("tcp", c.String("addr"))
	if err != nil {
		return cli.Exit(fmt.Sprintf("listen: %v", err), exitFailure)
	}
	defer ln.Close()
	base := "http://" + ln.Addr().String()
	fmt.Fprintf(stdout, "guidepub dev: listening on %s\n", base)

	src := c.String("src")
	if src == "" {
		src = filepath.Join(work, devSrcDir)
		if err := seedSamples(work, base+devReceiverPath); err != nil {
			return cli.Exit(fmt.Sprintf("copy the sample bundles: %v", err), exitFailure)
		}
	}
	if fi, err := os.Stat(src); err != nil || !fi.IsDir() {
		return usagef("--src %s is not a folder", src)
	}
	urlOr := func(flag, def string) string {
		if v := c.String(flag); v != "" {
			return v
		}
		return def
	}
	osfs := afero.NewOsFs()
	cfg := exporter.Config{
		Src: osfs, SrcDir: src, Out: osfs, OutDir: out, Private: osfs, PrivateDir: priv,
		ViewURL: urlOr("view-url", base), UnbrandedURL: urlOr("unbranded-url", base),
		EmbedURL: urlOr("embed-url", base+"/embed"), BaseURL: urlOr("base-url", base),
		Now: time.Now,
	}

	dsn := c.String("store")
	if dsn == "" {
		dsn = filepath.Join(work, devStoreFile)
	}
	rate, err := parseRate(c.String("rate-limit"))
	if err != nil {
		return usagef("--rate-limit: %v", err)
	}
	keys, err := parseSigningKeys(c.StringSlice("signing-key"))
	if err != nil {
		return usagef("--signing-key: %v", err)
	}
	parts, err := openSidecar(ctx, sidecarConfig{
		Private: priv, Store: dsn, ViewURL: cfg.ViewURL, BaseURL: cfg.BaseURL,
		RetryMin: c.Duration("retry-min"), RetryMax: c.Duration("retry-max"),
		MaxAttempts: c.Int("max-attempts"), DeliveryTimeout: c.Duration("delivery-timeout"),
		DeliveryWorkers:     c.Int("delivery-workers"),
		AllowPrivateTargets: true, // the samples' webhooks point at this process
		RateLimit:           rate, SigningKeys: keys, Logger: logger,
		InstanceID:     cmp.Or(c.String("instance-id"), defaultInstanceID(c.String("addr"))),
		AccessTokenTTL: c.Duration("access-token-ttl"), RefreshTokenTTL: c.Duration("refresh-token-ttl"),
	})
	if err != nil {
		return cli.Exit(err.Error(), exitFailure)
	}
	st := parts.Store
	static, err := serve.New(osfs, out, serve.Config{Logger: logger, NoWatch: true})
	if err != nil {
		return cli.Exit(err.Error(), exitFailure)
	}
	defer static.Close()

	srv := &http.Server{
		Handler:           devHandler(parts.Server, static, &devReceiver{privateDir: priv, url: base + devReceiverPath, logger: logger}),
		ReadHeaderTimeout: 10 * time.Second,
		// "OPTIONS *" reaches the handler (a JSON 404) instead of net/http's empty 200.
		DisableGeneralOptionsHandler: true,
		ErrorLog:                     slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	if err := parts.Start(context.WithoutCancel(ctx)); err != nil {
		parts.Close(context.Background())
		return cli.Exit(err.Error(), exitFailure)
	}
	defer func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		defer cancel()
		srv.Shutdown(stopCtx)
		if err := parts.Close(stopCtx); err != nil {
			logger.Warn("deliveries still in flight at exit; they are sent again after a restart", "error", err.Error())
		}
	}()

	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	go func() {
		if err := <-serveErr; err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("serve", "error", err.Error())
			stopWatch()
		}
	}()
	return watchAndExport(watchCtx, watchSetup{
		Exporter: cfg,
		Events:   parts.Events,
		Poll:     c.Duration("poll"),
		Debounce: c.Duration("debounce"),
		Logger:   logger,
		Stdout:   stdout,
		Stderr:   c.App.ErrWriter,
		Exported: func(ids []string) {
			var err error
			if ids == nil {
				err = static.Reload()
			} else {
				err = static.ReloadDirs(ids...)
			}
			if err != nil {
				logger.Error("reload the exported tree", "error", err.Error())
			}
		},
		Started: func(rep *exporter.Report) {
			if err := printDevGuide(ctx, stdout, devGuide{
				base: base, src: src, work: work, store: st, priv: priv, report: rep,
				examples: filepath.Join(work, devExamplesDir),
			}); err != nil {
				logger.Error("create Portal API tokens", "error", err.Error())
			}
			fmt.Fprintln(stdout, "guidepub dev: ready")
		},
	})
}

// devHandler routes the sidecar's paths to side, the receiver's to recv and
// everything else to static.
func devHandler(side, static, recv http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		if p == devReceiverPath {
			recv.ServeHTTP(w, r)
			return
		}
		for _, prefix := range sidecarPaths {
			if p == strings.TrimSuffix(prefix, "/") || strings.HasPrefix(p, prefix) {
				side.ServeHTTP(w, r)
				return
			}
		}
		static.ServeHTTP(w, r)
	})
}

// seedSamples copies the embedded sample bundles into <work>/src (and the
// example into <work>/examples), once: an existing src folder is left
// alone. Their webhooks are pointed at receiver.
func seedSamples(work, receiver string) error {
	src := filepath.Join(work, devSrcDir)
	if _, err := os.Stat(src); err == nil {
		return nil
	}
	tmp, err := os.MkdirTemp(work, ".seed-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	err = fs.WalkDir(fixtures.Bundles, "bundles", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p, "bundles"), "/")
		if rel == "" {
			return nil
		}
		folder, _, _ := strings.Cut(rel, "/")
		into := devSrcDir
		if folder == devExample {
			into = devExamplesDir
		}
		dst := filepath.Join(tmp, into, filepath.FromSlash(rel))
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		data, err := fs.ReadFile(fixtures.Bundles, p)
		if err != nil {
			return err
		}
		if path.Base(p) == bundle.FileName {
			if data, err = pointWebhooks(data, receiver); err != nil {
				return fmt.Errorf("%s: %w", rel, err)
			}
		}
		return os.WriteFile(dst, data, 0o644)
	})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(tmp, devSrcDir), 0o755); err != nil {
		return err
	}
	ex := filepath.Join(work, devExamplesDir)
	if _, err := os.Stat(filepath.Join(tmp, devExamplesDir)); err == nil {
		if err := os.RemoveAll(ex); err != nil {
			return err
		}
		if err := os.Rename(filepath.Join(tmp, devExamplesDir), ex); err != nil {
			return err
		}
	}
	return os.Rename(filepath.Join(tmp, devSrcDir), src)
}

// pointWebhooks returns guide.json data with its webhooks replaced by one,
// to url, keeping the first secret (or making one, so deliveries are
// signed).
func pointWebhooks(data []byte, url string) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var g map[string]any
	if err := dec.Decode(&g); err != nil {
		return nil, err
	}
	secret := ""
	if hooks, ok := g["webhooks"].([]any); ok {
		for _, h := range hooks {
			if m, ok := h.(map[string]any); ok {
				if s, ok := m["secret"].(string); ok && s != "" {
					secret = s
					break
				}
			}
		}
	}
	if secret == "" {
		key := make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, err
		}
		secret = bundle.SecretPrefix + base64.StdEncoding.EncodeToString(key)
	}
	g["webhooks"] = []any{map[string]any{"url": url, "secret": secret}}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(g); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// devGuide is what printDevGuide shows.
type devGuide struct {
	base, src, work, priv, examples string
	store                           *store.Store
	report                          *exporter.Report
}

// printDevGuide prints the URLs to try: views, the Portal API with a fresh
// token per owner, and how to upload. It returns an error when a token
// cannot be stored.
func printDevGuide(ctx context.Context, w io.Writer, g devGuide) error {
	var records []site.GuideRecord
	for _, r := range g.report.Guides {
		if r.Err != nil || r.GuideID == "" {
			continue
		}
		if rec, err := readRecord(g.priv, r.GuideID); err == nil {
			records = append(records, rec)
		}
	}
	// The example's owner needs a token too, to see its deliveries.
	var example *bundle.Guide
	if entries, err := os.ReadDir(g.examples); err == nil {
		for _, e := range entries {
			data, err := os.ReadFile(filepath.Join(g.examples, e.Name(), bundle.FileName))
			if err != nil {
				continue
			}
			if eg, problems := bundle.Parse(data); len(problems) == 0 {
				example = eg
				break
			}
		}
	}
	owners := map[string]bool{}
	for _, r := range records {
		owners[r.OwnerID] = true
	}
	if example != nil {
		owners[example.OwnerID] = true
	}
	type cred struct{ appID, token string }
	creds := map[string]cred{}
	var ownerIDs []string
	for o := range owners {
		ownerIDs = append(ownerIDs, o)
	}
	sort.Strings(ownerIDs)
	for _, o := range ownerIDs {
		appID, token, err := apitoken.New(nil)
		if err != nil {
			return err
		}
		err = g.store.CreateToken(ctx, store.Token{
			AppID: appID, OwnerID: o, Scopes: []string{apitoken.ScopeEvents, "guide.read", "guide.list"},
			Hash: apitoken.Hash(token), CreatedAt: time.Now().UTC(),
		})
		if err != nil {
			return err
		}
		creds[o] = cred{appID, token}
	}

	p := func(format string, a ...any) { fmt.Fprintf(w, format+"\n", a...) }
	p("")
	p("Views (public, no credentials):")
	for _, r := range records {
		id := r.DefaultViewID
		if r.Alias != "" {
			id = r.Alias
		}
		p("  guide %s (owner %s): views %s", r.GuideID, r.OwnerID, strings.Join(r.ViewIDs, ", "))
		p("    curl %s/%s", g.base, site.ViewFile(id, site.StatusFile))
		p("    curl %s/%s", g.base, site.ViewFile(id, site.SummaryFile))
		if r.Ready {
			p("    curl %s/%s", g.base, site.ViewFile(id, site.AutofillFile))
		}
	}
	curl := func(owner, method, apiPath string) string {
		c := creds[owner]
		m := ""
		if method != "GET" {
			m = "-X " + method + " "
		}
		return fmt.Sprintf("curl -s %s-H 'X-Svc-App-Id: %s' -H 'X-Svc-App-Token: %s' %s%s", m, c.appID, c.token, g.base, apiPath)
	}
	p("")
	p("Portal API: a token with scope %s was created for each owner (shown only now; the store keeps a hash):", apitoken.ScopeEvents)
	for _, o := range ownerIDs {
		p("  owner %s: X-Svc-App-Id: %s  X-Svc-App-Token: %s", o, creds[o].appID, creds[o].token)
	}
	var sample *site.GuideRecord
	for i := range records {
		if records[i].Ready {
			sample = &records[i]
			break
		}
	}
	if sample != nil {
		p("  try:")
		p("    %s", curl(sample.OwnerID, "POST", "/api/v1/integrations/test"))
		p("    %s", curl(sample.OwnerID, "GET", "/api/v1/guides/"+sample.GuideID+"/events/ready/object"))
		p("    %s", curl(sample.OwnerID, "POST", "/api/v1/guides/"+sample.GuideID+"/events/ready/dispatch"))
		p("    %s", curl(sample.OwnerID, "GET", "/api/v1/guides/"+sample.GuideID+"/events/deliveries"))
	}
	p("")
	p("Upload: copy a bundle folder into %s", g.src)
	if example != nil {
		p("  cp -r %s %s/", filepath.Join(g.examples, devExample), g.src)
		p("  then: curl %s/%s", g.base, site.ViewFile(example.DefaultView().ViewID, site.StatusFile))
	}
	p("  It is exported a moment after the last file lands; a bundle that is not valid yet is reported here")
	p("  and the published version stays. Deleting the folder unpublishes its views.")
	p("")
	p("Webhooks: each export that changes a ready guide POSTs its ready event to the guide's webhooks")
	p("(guide.json \"webhooks\"). The sample bundles point at %s%s, which checks the signature and logs", g.base, devReceiverPath)
	p("\"webhook received\" here. Deliveries and their attempts:")
	if example != nil {
		p("  %s", curl(example.OwnerID, "GET", "/api/v1/guides/"+example.GuideID+"/events/deliveries"))
	} else if sample != nil {
		p("  %s", curl(sample.OwnerID, "GET", "/api/v1/guides/"+sample.GuideID+"/events/deliveries"))
	}
	p("")
	p("Health: %s/healthz  %s/readyz  %s/metrics", g.base, g.base, g.base)
	p("Work folder: %s (public tree out/, private tree private/, store %s)", g.work, devStoreFile)
	return nil
}

// readRecord reads the GuideRecord of guideID from the private tree priv.
func readRecord(priv, guideID string) (site.GuideRecord, error) {
	var rec site.GuideRecord
	if !site.ValidID.MatchString(guideID) {
		return rec, fmt.Errorf("invalid guide id %q", guideID)
	}
	data, err := os.ReadFile(filepath.Join(priv, filepath.FromSlash(site.RecordPath(guideID))))
	if err != nil {
		return rec, err
	}
	err = json.Unmarshal(data, &rec)
	return rec, err
}

// devReceiver is dev's own webhook receiver: it verifies a delivery's
// Standard Webhooks signature with the secret the guide lists for its URL,
// logs it, and answers 204.
type devReceiver struct {
	privateDir, url string
	logger          *slog.Logger
}

func (d *devReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		http.Error(w, "POST a webhook delivery here", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 8<<20))
	if err != nil {
		http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
		return
	}
	var ev struct {
		Type    string `json:"type"`
		GuideID string `json:"guideId"`
	}
	if err := json.Unmarshal(body, &ev); err != nil {
		d.logger.Warn("webhook received: body is not a JSON object", "error", err.Error())
		http.Error(w, "body is not a JSON object", http.StatusBadRequest)
		return
	}
	signature := "unsigned"
	if rec, err := readRecord(d.privateDir, ev.GuideID); err == nil {
		for _, h := range rec.Webhooks {
			if h.URL != d.url || h.Secret == "" {
				continue
			}
			signature = "invalid"
			if wh, err := standardwebhooks.NewWebhook(h.Secret); err == nil && wh.Verify(body, r.Header) == nil {
				signature = "valid"
			}
		}
	}
	d.logger.Info("webhook received", "type", ev.Type, "guide", ev.GuideID,
		"webhook-id", r.Header.Get("webhook-id"), "signature", signature, "bytes", len(body))
	w.WriteHeader(http.StatusNoContent)
}

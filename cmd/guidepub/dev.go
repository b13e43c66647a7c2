package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/afero"
	"github.com/urfave/cli/v2"

	"github.com/guidepub/guidepub/exporter"
	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/exporter/pipeline"
	"github.com/guidepub/guidepub/sidecar"
	"github.com/guidepub/guidepub/sidecar/apitoken"
	"github.com/guidepub/guidepub/sidecar/store"
	"github.com/guidepub/guidepub/site"
	"github.com/guidepub/guidepub/site/httpserver"
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

// devCommand returns the "dev" command: watch, serve and the sidecar in one
// process.
func (e *env) devCommand() *cli.Command {
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

--src defaults to <work-dir>/src, filled once with the sample bundles;
--store to <work-dir>/guidepub.db; the URL flags to the listening address
(--embed-url to <listening address>/embed).

The sample bundles' webhooks point at this process's own receiver,
` + devReceiverPath + `, which checks each delivery's signature and logs it; run on
another --addr, dev points the samples it copied at its new address.

Examples:
   guidepub dev                                  # the sample bundles, on 127.0.0.1:8080
   guidepub dev --src bundles --addr 127.0.0.1:9000
   cp -r .guidepub/examples/rue-saint-denis .guidepub/src/   # an upload, while dev runs`,
		// allow-private-targets is not among them: dev always allows them.
		Flags:  flags(srcFlag(), addrFlag("127.0.0.1:8080"), devFlags(), storeFlag(), urlFlags(exporter.Config{}), watchFlags(), limitFlags(), deliveryFlags(), livePublishFlags(), serverFlags(devServerLimits())),
		Action: e.runDev,
	}
}

// runDev is the dev command: the exporter, watcher, static server and
// sidecar of "watch", "serve" and "sidecar", built from the same
// configurations, with dev's overrides (work folder, URLs of the listening
// address, private webhook targets allowed).
func (e *env) runDev(c *cli.Context) error {
	if err := checkWatchFlags(c); err != nil {
		return err
	}
	logger := newLogger(e.stderr, slog.LevelInfo)
	stdout := e.stdout

	work, err := filepath.Abs(c.String("work-dir"))
	if err != nil {
		return usagef("--work-dir: %v", err)
	}
	out, priv := filepath.Join(work, devOutDir), filepath.Join(work, devPrivateDir)
	side, err := e.devSidecarConfig(c, priv, logger)
	if err != nil {
		return err
	}
	// The exporter's settings are checked now, on the address asked for,
	// and read again once listening, on the address got (port 0).
	if _, err := e.devExporterConfig(c, "http://"+c.String("addr"), work, out, priv); err != nil {
		return err
	}
	for _, d := range []string{work, out, priv} {
		if err := ensureDir(d); err != nil {
			return fmt.Errorf("work folder: %w", err)
		}
	}

	ln, err := net.Listen("tcp", c.String("addr"))
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	defer ln.Close()
	base := "http://" + ln.Addr().String()
	fmt.Fprintf(stdout, "guidepub dev: listening on %s\n", base)

	src := c.String("src")
	if src == "" {
		src = filepath.Join(work, devSrcDir)
		moved, err := seedSamples(work, base+devReceiverPath)
		if err != nil {
			return fmt.Errorf("copy the sample bundles: %w", err)
		}
		if moved > 0 {
			fmt.Fprintf(stdout, "guidepub dev: the webhooks of %d sample bundles in %s now point at %s%s\n", moved, work, base, devReceiverPath)
		}
	}
	if fi, err := os.Stat(src); err != nil || !fi.IsDir() {
		return usagef("--src %s is not a folder", src)
	}
	cfg, err := e.devExporterConfig(c, base, src, out, priv)
	if err != nil {
		return err
	}

	side.Store = c.String("store")
	if side.Store == "" {
		side.Store = filepath.Join(work, devStoreFile)
	}
	side.ViewURL, side.BaseURL = cfg.ViewURL, cfg.BaseURL
	parts, static, err := startDevParts(c.Context, side, out, logger)
	if err != nil {
		return err
	}
	defer static.Close()
	// Live publishing's metrics join the sidecar's at /metrics.
	live, closeLive, err := e.openLive(c, cfg, logger, parts.Registry)
	if err != nil {
		parts.Close(c.Context)
		return err
	}
	defer closeLive()

	ctx, stop := context.WithCancel(c.Context)
	defer stop()
	mux := devMux(parts.Server, static, &devReceiver{privateDir: priv, url: base + devReceiverPath, logger: logger})
	served := make(chan error, 1)
	go func() {
		served <- serveHTTP(ctx, ln, mux, side.HTTP, logger, func(ctx context.Context) error {
			if err := parts.Close(ctx); err != nil {
				logger.Warn("deliveries still in flight at exit; they are sent again after a restart", "error", err.Error())
			}
			return nil
		})
		stop() // a server that fails stops the watcher too
	}()
	werr := watchAndExport(ctx, watchSetup{
		Exporter: cfg,
		Pipeline: pipeline.New(pipeline.Config{Events: eventQueue{parts.Events, logger}, Live: live, Clock: cfg.Clock, Logger: logger}),
		Poll:     c.Duration("poll"),
		Debounce: c.Duration("debounce"),
		Logger:   logger,
		Stdout:   stdout,
		Stderr:   e.stderr,
		Exported: func(ids []string) { reloadExported(static, ids, logger) },
		Started: func(rep *exporter.Report) {
			if err := printDevGuide(ctx, stdout, devGuide{
				base: base, src: src, work: work, store: parts.Store, priv: priv, report: rep,
				examples: filepath.Join(work, devExamplesDir), now: e.clock.Now(),
			}); err != nil {
				logger.Error("create Portal API tokens", "error", err.Error())
			}
			fmt.Fprintln(stdout, "guidepub dev: ready")
		},
	})
	stop()
	return errors.Join(werr, <-served)
}

// startDevParts opens the sidecar on side and the static server on the
// public tree out (not watching it: dev reloads it after each export), and
// starts the delivery queue. The caller closes both.
func startDevParts(ctx context.Context, side sidecarConfig, out string, logger *slog.Logger) (*sidecarParts, *serve.Server, error) {
	parts, err := openSidecar(ctx, side)
	if err != nil {
		return nil, nil, err
	}
	scfg := serve.DefaultConfig()
	scfg.Logger, scfg.NoWatch = logger, true
	static, err := serve.New(afero.NewOsFs(), out, scfg)
	if err != nil {
		parts.Close(context.Background())
		return nil, nil, err
	}
	if err := parts.Start(context.WithoutCancel(ctx)); err != nil {
		static.Close()
		parts.Close(context.Background())
		return nil, nil, err // Queue.Start says "start delivery queue"
	}
	return parts, static, nil
}

// devServerLimits are the defaults of dev's server limits: those of serve
// and sidecar, with request bodies as large as a ready event may be, for
// dev's own webhook receiver.
func devServerLimits() httpserver.Limits {
	l := httpserver.Default()
	l.MaxBodyBytes = int64(bundle.DefaultLimits.DocumentBytes)
	return l
}

// devSidecarConfig reads and validates the sidecar's settings before
// anything listens, exactly as "sidecar" does, with dev's overrides.
func (e *env) devSidecarConfig(c *cli.Context, priv string, logger *slog.Logger) (sidecarConfig, error) {
	side := defaultSidecarConfig()
	if err := readDeliveryFlags(c, &side); err != nil {
		return side, err
	}
	var err error
	if side.HTTP, err = readServerLimits(c); err != nil {
		return side, err
	}
	side.AllowPrivateTargets = true // the samples' webhooks point at this process
	side.Private, side.Logger, side.Clock = priv, logger, e.clock
	if side.InstanceID == "" {
		side.InstanceID = defaultInstanceID(c.String("addr"))
	}
	return side, side.validate()
}

// devExporterConfig returns the exporter's settings for dev: the export
// flags, with every URL on dev's own address unless a flag names another.
func (e *env) devExporterConfig(c *cli.Context, base, src, out, priv string) (exporter.Config, error) {
	urlOr := func(flag, def string) string {
		if v := c.String(flag); v != "" {
			return v
		}
		return def
	}
	osfs := afero.NewOsFs()
	cfg := exporter.DefaultConfig()
	var err error
	if cfg.Limits, err = readLimits(c); err != nil {
		return cfg, err
	}
	cfg.Src, cfg.SrcDir, cfg.Out, cfg.OutDir, cfg.Private, cfg.PrivateDir = osfs, src, osfs, out, osfs, priv
	cfg.ViewURL, cfg.UnbrandedURL = urlOr("view-url", base), urlOr("unbranded-url", base+"/"+site.UnbrandedDir)
	cfg.EmbedURL, cfg.BaseURL = urlOr("embed-url", base+"/embed"), urlOr("base-url", base)
	cfg.Clock = e.clock
	return cfg, validConfig(cfg.Validate())
}

// reloadExported has static check what an export changed: the folders of
// the view ids and aliases ids, and their unbranded and embedded pages in
// u/<id> and embed/<id> (see docs/pages.md); everything when ids is nil.
func reloadExported(static *serve.Server, ids []string, logger *slog.Logger) {
	if ids == nil {
		static.Reload()
		return
	}
	dirs := slices.Clone(ids)
	for _, id := range ids {
		dirs = append(dirs, site.UnbrandedDir+"/"+id, site.EmbedDir+"/"+id)
	}
	if err := static.ReloadDirs(dirs...); err != nil {
		logger.Error("reload the exported tree", "error", err.Error())
	}
}

// devMux routes the sidecar's paths to side, the receiver's to recv and
// everything else to static.
func devMux(side *sidecar.Server, static, recv http.Handler) http.Handler {
	mux := http.NewServeMux()
	for _, p := range []string{"/api", "/private", "/oauth", "/healthz", "/readyz", "/metrics"} {
		mux.Handle(p, side)
	}
	for _, p := range site.SidecarRoutes {
		mux.Handle(p, side)
	}
	mux.Handle(devReceiverPath, recv)
	mux.Handle("/", static)
	// The mux would redirect an unclean path, query (access token) and
	// all, before the sidecar's own guard saw it.
	return side.CleanPaths(mux)
}

// devGuide is what printDevGuide shows.
type devGuide struct {
	base, src, work, priv, examples string
	store                           *store.Store
	report                          *exporter.Report
	now                             time.Time // the tokens' creation time
}

// devScopes are the scopes of the Portal API tokens dev creates.
var devScopes = []string{apitoken.ScopeEvents, "guide.read", "guide.list"}

// devCred is a Portal API token dev created for an owner.
type devCred struct{ appID, token string }

// printDevGuide prints the URLs to try: views, the Portal API with a fresh
// token per owner, and how to upload. It returns an error when a token
// cannot be stored.
func printDevGuide(ctx context.Context, w io.Writer, g devGuide) error {
	records := exportedRecords(g.priv, g.report)
	example := readExample(g.examples)
	owners := map[string]bool{}
	for _, r := range records {
		owners[r.OwnerID] = true
	}
	if example != nil {
		owners[example.OwnerID] = true // to see the example's deliveries
	}
	ownerIDs := slices.Sorted(maps.Keys(owners))
	creds, err := createDevTokens(ctx, g.store, ownerIDs, g.now)
	if err != nil {
		return err
	}
	p := func(format string, a ...any) { fmt.Fprintf(w, format+"\n", a...) }
	curl := func(owner, method, apiPath string) string {
		c := creds[owner]
		m := ""
		if method != "GET" {
			m = "-X " + method + " "
		}
		return fmt.Sprintf("curl -s %s-H 'X-Svc-App-Id: %s' -H 'X-Svc-App-Token: %s' %s%s", m, c.appID, c.token, g.base, apiPath)
	}
	printDevViews(p, g.base, records)
	var sample *site.GuideRecord
	for i := range records {
		if records[i].Ready {
			sample = &records[i]
			break
		}
	}
	p("")
	p("Portal API: a token with scopes %s was created for each owner (shown only now; the store keeps a hash):", strings.Join(devScopes, ","))
	for _, o := range ownerIDs {
		p("  owner %s: X-Svc-App-Id: %s  X-Svc-App-Token: %s", o, creds[o].appID, creds[o].token)
	}
	if sample != nil {
		p("  try:")
		p("    %s", curl(sample.OwnerID, "POST", "/api/v1/integrations/test"))
		for _, call := range []struct{ method, path string }{{"GET", "ready/object"}, {"POST", "ready/dispatch"}, {"GET", "deliveries"}} {
			p("    %s", curl(sample.OwnerID, call.method, "/api/v1/guides/"+sample.GuideID+"/events/"+call.path))
		}
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
	if g.src == filepath.Join(g.work, devSrcDir) {
		p("(guide.json \"webhooks\"). The sample bundles point at %s%s, which checks the signature and logs", g.base, devReceiverPath)
		p("\"webhook received\" here. Deliveries and their attempts:")
	} else {
		p("(guide.json \"webhooks\"). A webhook at %s%s has its signature checked and is logged", g.base, devReceiverPath)
		p("as \"webhook received\" here. Deliveries and their attempts:")
	}
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

// exportedRecords returns the records of the guides rep exported.
func exportedRecords(priv string, rep *exporter.Report) []site.GuideRecord {
	var records []site.GuideRecord
	for _, r := range rep.Guides {
		if r.Err != nil || r.GuideID == "" {
			continue
		}
		if rec, err := readRecord(priv, r.GuideID); err == nil {
			records = append(records, rec)
		}
	}
	return records
}

// readExample returns the first valid example bundle under dir, or nil.
func readExample(dir string) *bundle.Guide {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name(), bundle.FileName))
		if err != nil {
			continue
		}
		if eg, problems := bundle.Parse(data); len(problems) == 0 {
			return eg
		}
	}
	return nil
}

// createDevTokens stores a Portal API token with devScopes for each owner
// and returns them; only their hashes are kept in the store.
func createDevTokens(ctx context.Context, st *store.Store, ownerIDs []string, now time.Time) (map[string]devCred, error) {
	creds := map[string]devCred{}
	for _, o := range ownerIDs {
		appID, token, err := apitoken.New(nil)
		if err != nil {
			return nil, err
		}
		err = st.CreateToken(ctx, store.Token{
			AppID: appID, OwnerID: o, Scopes: devScopes,
			Hash: apitoken.Hash(token), CreatedAt: now.UTC(),
		})
		if err != nil {
			return nil, err
		}
		creds[o] = devCred{appID, token}
	}
	return creds, nil
}

// printDevViews prints each exported guide's view pages and public
// documents.
func printDevViews(p func(string, ...any), base string, records []site.GuideRecord) {
	p("")
	p("Views (public, no credentials):")
	for _, r := range records {
		id := r.DefaultViewID
		if r.Alias != "" {
			id = r.Alias
		}
		p("  guide %s (owner %s): views %s", r.GuideID, r.OwnerID, strings.Join(r.ViewIDs, ", "))
		for _, v := range r.ViewIDs {
			// The view's pages: branded, unbranded, embedded (docs/pages.md).
			p("    pages of %s: %s/%s  %s/%s/%s  %s/%s/%s", v, base, v, base, site.UnbrandedDir, v, base, site.EmbedDir, v)
		}
		p("    curl %s/%s", base, site.ViewFile(id, site.StatusFile))
		p("    curl %s/%s", base, site.ViewFile(id, site.SummaryFile))
		if r.Ready {
			p("    curl %s/%s", base, site.ViewFile(id, site.AutofillFile))
		}
	}
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

// errNotFolder reports a --src or --work-dir that is not a folder.
var errNotFolder = errors.New("not a folder")

// ensureDir creates dir (and its parents) when missing and checks it is a
// folder.
func ensureDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("%s: %w", filepath.Clean(dir), errNotFolder)
	}
	return nil
}

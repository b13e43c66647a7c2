package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/spf13/afero"
	"github.com/urfave/cli/v2"

	"github.com/guidepub/guidepub/exporter"
	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/exporter/pipeline"
	"github.com/guidepub/guidepub/sidecar"
	"github.com/guidepub/guidepub/sidecar/delivery"
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
/api/, /private/, /oauth/, /healthz, /readyz and /metrics from the sidecar,
everything else (the views' documents and media) from the exported tree. The
store is a SQLite file in the work folder; webhook deliveries go out from this
process, and loopback targets are allowed.

Once the first export is done and its ready events were tried, it prints the
URLs and commands to try, ready to paste: a Portal API token for each owner
of the exported guides, a sample OAuth app with an owner's password and an
authorize URL, and the upload of an example. It makes those credentials on
the first run and keeps their secrets in <work-dir>/` + devCredsFile + ` (0600),
so every run prints the same ones; one the store no longer accepts (revoked
by hand) is replaced, and the one it replaces revoked.

Log lines are short lines for a person (--log-format json for JSON lines);
HTTP requests are not logged unless --log-requests.

--src defaults to <work-dir>/src, filled once with the sample bundles;
--store to <work-dir>/guidepub.db; the URL flags to the listening address
(--embed-url to <listening address>/embed).

The sample bundles' webhooks point at this process's own receiver,
` + devReceiverPath + `, which checks each delivery's signature and logs it; run on
another --addr, dev points the samples it copied at its new address. A ready
event's manageUrl (<base-url>/guides/<guideId>, the Portal's page in
production) answers with a page about the guide; the sample app's redirect
URI, ` + devCallbackPath + `, shows the code and the command that exchanges it.

Examples:
   guidepub dev                                  # the sample bundles, on 127.0.0.1:8080
   guidepub dev --src bundles --addr 127.0.0.1:9000
   guidepub dev --log-requests                   # a log line per HTTP request
   cp -r .guidepub/examples/rue-saint-denis .guidepub/src/   # an upload, while dev runs`,
		// allow-private-targets is not among them: dev always allows them.
		Flags:  flags(srcFlag(), addrFlag("127.0.0.1:8080"), devFlags(), storeFlag(), urlFlags(exporter.Config{}), watchFlags(), limitFlags(), deliveryFlags(), livePublishFlags(), serverFlags(devServerLimits())),
		Action: e.runDev,
	}
}

// devSetup is what runDev prepares before it starts the parts: checked
// settings, the work folder, the listener and the samples.
type devSetup struct {
	work, src, out, priv, base string
	ln                         net.Listener
	side                       sidecarConfig
	cfg                        exporter.Config
}

// runDev is the dev command: the exporter, watcher, static server and
// sidecar of "watch", "serve" and "sidecar", built from the same
// configurations, with dev's overrides (work folder, URLs of the listening
// address, private webhook targets allowed). Its log lines are short
// human lines by default, and its banner comes last and whole.
func (e *env) runDev(c *cli.Context) error {
	if err := checkWatchFlags(c); err != nil {
		return err
	}
	term := newDevLog(e.stdout, e.stderr)
	logger, err := term.logger(c.String("log-format"))
	if err != nil {
		return err
	}
	d, err := e.prepareDev(c, logger, term.stdout())
	if err != nil {
		return err
	}
	defer d.ln.Close()
	limitMemoryTo(devMemoryBudget(d.cfg), logger)
	parts, static, err := startDevParts(c.Context, d.side, d.out, logger)
	if err != nil {
		return err
	}
	defer static.Close()
	// Live publishing's metrics join the sidecar's at /metrics.
	live, closeLive, err := e.openLive(c, d.cfg, logger, parts.Registry, false)
	if err != nil {
		parts.Close(c.Context)
		return err
	}
	defer closeLive()

	ctx, stop := context.WithCancel(c.Context)
	defer stop()
	callback := &devCallback{}
	mux := devMux(parts.Server, static, devHandlers{
		receiver: &devReceiver{privateDir: d.priv, url: d.base + devReceiverPath, logger: logger},
		manage:   devManage{priv: d.priv, out: d.out, static: static},
		callback: callback,
	}, logRequestsOf(c, logger))
	served := make(chan error, 1)
	go func() {
		served <- serveHTTP(ctx, d.ln, mux, d.side.HTTP, logger, func(ctx context.Context) error {
			if err := parts.Queue.Stop(ctx); err != nil {
				logger.Warn("deliveries still in flight at exit; they are sent again after a restart", "error", err.Error())
			}
			return nil
		})
		stop() // a server that fails stops the watcher too
	}()
	events := &devEvents{eventQueue: eventQueue{ev: parts.Events, logger: logger}}
	werr := watchAndExport(ctx, watchSetup{
		Exporter: d.cfg,
		Pipeline: pipeline.New(pipeline.Config{Events: events, Live: live, Clock: d.cfg.Clock, Logger: logger}),
		Poll:     c.Duration("poll"),
		Debounce: c.Duration("debounce"),
		Quick:    c.Bool("quick"),
		Logger:   logger,
		Stdout:   term.stdout(),
		Stderr:   term.stderr(),
		Exported: func(ids []string) { reloadExported(static, ids, logger) },
		Started: func(rep *exporter.Report) {
			e.devReady(ctx, d, parts, rep, events, callback, term, logger)
		},
	})
	stop()
	serr := <-served
	// The store closes last: the watcher finishes the exports it had
	// started when interrupted, and queues their ready events.
	return errors.Join(werr, serr, parts.Store.Close())
}

// logRequestsOf returns logger when --log-requests asks for a line per
// request, else nil.
func logRequestsOf(c *cli.Context, logger *slog.Logger) *slog.Logger {
	if c.Bool("log-requests") {
		return logger
	}
	return nil
}

// prepareDev checks dev's settings, makes its work folder, listens, and
// copies the samples when --src is not given, saying so on stdout. It
// returns a *usageError for bad settings.
func (e *env) prepareDev(c *cli.Context, logger *slog.Logger, stdout io.Writer) (*devSetup, error) {
	work, err := filepath.Abs(c.String("work-dir"))
	if err != nil {
		return nil, usagef("--work-dir: %v", err)
	}
	d := &devSetup{work: work, out: filepath.Join(work, devOutDir), priv: filepath.Join(work, devPrivateDir)}
	if d.side, err = e.devSidecarConfig(c, d.priv, logger); err != nil {
		return nil, err
	}
	// The exporter's settings are checked now, on the address asked for,
	// and read again once listening, on the address got (port 0).
	if _, err := e.devExporterConfig(c, "http://"+c.String("addr"), work, d.out, d.priv); err != nil {
		return nil, err
	}
	for _, dir := range []string{work, d.out, d.priv} {
		if err := ensureDir(dir); err != nil {
			return nil, fmt.Errorf("work folder: %w", err)
		}
	}
	if d.ln, err = listen(c.String("addr"), true); err != nil {
		return nil, err
	}
	d.base = "http://" + d.ln.Addr().String()
	fmt.Fprintf(stdout, "guidepub dev: listening on %s\n", d.base)
	if err := d.finish(c, e, stdout); err != nil {
		d.ln.Close()
		return nil, err
	}
	return d, nil
}

// finish sets the source folder (copying the samples into the work folder
// when --src is not given), the exporter's settings on the listening
// address, and the store.
func (d *devSetup) finish(c *cli.Context, e *env, stdout io.Writer) error {
	d.src = c.String("src")
	if d.src == "" {
		d.src = filepath.Join(d.work, devSrcDir)
		moved, err := seedSamples(d.work, d.base+devReceiverPath)
		if err != nil {
			return fmt.Errorf("copy the sample bundles: %w", err)
		}
		if moved > 0 {
			fmt.Fprintf(stdout, "guidepub dev: the webhooks of %d sample bundles in %s now point at %s%s\n", moved, d.work, d.base, devReceiverPath)
		}
	}
	if fi, err := os.Stat(d.src); err != nil || !fi.IsDir() {
		return usagef("--src %s is not a folder", d.src)
	}
	var err error
	if d.cfg, err = e.devExporterConfig(c, d.base, d.src, d.out, d.priv); err != nil {
		return err
	}
	d.side.Store = c.String("store")
	if d.side.Store == "" {
		d.side.Store = filepath.Join(d.work, devStoreFile)
	}
	d.side.ViewURL, d.side.BaseURL = d.cfg.ViewURL, d.cfg.BaseURL
	d.side.NoRequestLog = !c.Bool("log-requests")
	return nil
}

// devReady is called once the first export is done: it makes or finds
// dev's credentials, waits for the ready events the export queued to be
// tried and for the log to be quiet, then prints the banner in one piece.
func (e *env) devReady(ctx context.Context, d *devSetup, parts *sidecarParts, rep *exporter.Report,
	events *devEvents, callback *devCallback, term *devLog, logger *slog.Logger) {
	b, err := newDevBanner(ctx, d, parts.Store, rep, e.clock.Now())
	if err != nil {
		logger.Error("dev credentials not made", "error", err.Error())
	}
	if b.oauth != nil {
		callback.add(b.oauth.try)
	}
	events.waitFirstAttempts(ctx, parts.Queue, devSettleMax)
	term.waitQuiet(ctx, devQuiet, devSettleMax)
	var buf bytes.Buffer
	b.write(&buf)
	fmt.Fprintln(&buf, "guidepub dev: ready")
	term.stdout().Write(buf.Bytes())
}

// How long the banner waits, at most, for the ready events of the first
// export to be tried, and then for the log to be quiet for devQuiet.
const (
	devSettleMax = 5 * time.Second
	devQuiet     = 150 * time.Millisecond
)

// devEvents is dev's EventQueue: it remembers the deliveries queued
// before the banner, which waits for their first attempt, so that their
// log lines come before it.
type devEvents struct {
	eventQueue
	mu      sync.Mutex
	pending []delivery.Delivery
	printed bool
}

// Enqueue queues as eventQueue does, remembering the deliveries until the
// banner is printed.
func (q *devEvents) Enqueue(ctx context.Context, guideID string) (pipeline.Enqueued, error) {
	ds, before, err := q.ev.Enqueue(ctx, guideID)
	if err != nil {
		return pipeline.Enqueued{}, err
	}
	q.mu.Lock()
	if !q.printed {
		q.pending = append(q.pending, ds...)
	}
	q.mu.Unlock()
	// The delivery queue logs each delivery queued: on dev's terminal,
	// once is enough.
	return pipeline.Enqueued{Queued: len(ds), SentBefore: before}, nil
}

// waitFirstAttempts returns once every delivery queued so far was tried
// (it left the queued state), or after max.
func (q *devEvents) waitFirstAttempts(ctx context.Context, queue *delivery.Queue, max time.Duration) {
	q.mu.Lock()
	pending := q.pending
	q.pending, q.printed = nil, true
	q.mu.Unlock()
	deadline := time.Now().Add(max)
	for len(pending) > 0 && time.Now().Before(deadline) && ctx.Err() == nil {
		pending = slices.DeleteFunc(pending, func(d delivery.Delivery) bool {
			got, err := queue.Delivery(ctx, d.GuideID, d.ID)
			return err != nil || got.State != delivery.StateQueued
		})
		time.Sleep(20 * time.Millisecond)
	}
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

// devHandlers are dev's own handlers beside the sidecar and the static
// server.
type devHandlers struct {
	receiver, manage, callback http.Handler
}

// devMux routes the sidecar's paths to side, dev's own paths to its
// handlers, and everything else to static. With requests set, every
// request gets a log line (the sidecar's through its own).
func devMux(side *sidecar.Server, static http.Handler, own devHandlers, requests *slog.Logger) http.Handler {
	wrap := func(h http.Handler) http.Handler {
		if requests == nil {
			return h
		}
		return logRequests(h, requests)
	}
	mux := http.NewServeMux()
	for _, p := range []string{"/api", "/private", "/oauth", "/healthz", "/readyz", "/metrics"} {
		mux.Handle(p, side)
	}
	for _, p := range site.SidecarRoutes {
		mux.Handle(p, side)
	}
	mux.Handle(devReceiverPath, wrap(own.receiver))
	mux.Handle(devCallbackPath, wrap(own.callback))
	mux.Handle(devManagePattern, wrap(own.manage))
	mux.Handle("/", wrap(static))
	// The mux would redirect an unclean path, query (access token) and
	// all, before the sidecar's own guard saw it.
	return side.CleanPaths(mux)
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

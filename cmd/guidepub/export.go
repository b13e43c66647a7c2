package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/afero"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/guidepub/guidepub/exporter"
	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/exporter/edge"
	"github.com/guidepub/guidepub/exporter/pipeline"
	"github.com/guidepub/guidepub/exporter/privatebucket"
	"github.com/guidepub/guidepub/exporter/publish"
	"github.com/guidepub/guidepub/sidecar"
	"github.com/guidepub/guidepub/sidecar/delivery"
	"github.com/guidepub/guidepub/sidecar/store"
	"github.com/guidepub/guidepub/site"
	"github.com/guidepub/guidepub/site/bucket"
)

// exportCommand returns the "export" command: one full, incremental build
// of every bundle.
func (e *env) exportCommand() *cli.Command {
	return &cli.Command{
		Name:  "export",
		Usage: "export every bundle under --src into the public (--out) and private (--private) trees",
		Description: `Renders each view's data/status, data/summary and reso/autofill (plus .br, .zst
and .gz siblings) and public media into --out, and each guide's record, ready
event and private documents into --private. Unchanged files are not rewritten;
files of removed views, aliases and guides are deleted. Exit status 1 when a
bundle was rejected (the others are still exported).

With --store, the ready event of every ready guide is queued for its webhooks
in the sidecar's store, once per guide revision: re-exporting unchanged
content queues nothing. With --shard i/n, only the bundle folders whose name
hashes to shard i are exported, with records of their own, so n machines
can share one full rebuild.

With --publish URL, the public files the export wrote or removed are then
uploaded to the bucket (no listing; see "watch --publish"), and the command
waits until they are there. A store that refuses the credentials, or a
missing bucket, ends it with exit status 1 and the reason; the uploads
wait in the outbox for the next export or watch with --publish.

Examples:
   guidepub export --src bundles --out public --private private
   guidepub export --src bundles --out public --private private --publish 's3://my-bucket?region=eu-west-1'
   guidepub export --src bundles --out public --private private --store private/guidepub.db
   guidepub export --src bundles --out public --private private --shard 1/4`,
		Flags:  flags(exportFlags(), eventFlags(), shardFlag(), livePublishFlags(), purgeFlags()),
		Action: e.runExport,
	}
}

// warnLocalURLs warns when the URL flags are left at their defaults,
// which point at localhost: every link in the documents and pages then
// leads to port 8080 of whoever opens them.
func warnLocalURLs(c *cli.Context, logger *slog.Logger) {
	var unset []string
	for _, f := range []string{"view-url", "unbranded-url", "embed-url", "base-url"} {
		if !c.IsSet(f) {
			unset = append(unset, "--"+f)
		}
	}
	if len(unset) > 0 {
		logger.Warn("export: URL flags left at their localhost defaults; pages and documents will link to http://localhost:8080 wherever they are served",
			"flags", strings.Join(unset, " "), "default", exporter.DefaultViewURL)
	}
}

// runExport is the "export" command.
func (e *env) runExport(c *cli.Context) error {
	cfg, err := e.exporterConfig(c)
	if err != nil {
		return err
	}
	if cfg.Shard, cfg.Shards, err = parseShard(c.String("shard")); err != nil {
		return err
	}
	logger := newLogger(e.stderr, slog.LevelInfo)
	limitMemoryTo(cfg.MemoryBudget(), logger)
	warnLocalURLs(c, logger)
	mirror, fromBucket, closeMirror, err := e.openMirror(c, cfg, logger)
	if err != nil {
		return err
	}
	defer closeMirror()
	live, closeLive, err := e.openLive(c, cfg, logger, nil, fromBucket > 0)
	if err != nil {
		return err
	}
	defer closeLive()
	purges, closeEdge, err := e.openEdge(c, cfg, logger, live)
	if err != nil {
		return err
	}
	defer closeEdge()
	events, closeStore, err := e.openEvents(c, cfg, logger)
	if err != nil {
		return err
	}
	defer closeStore()
	if f, ok := e.stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		cfg.Progress = e.stderr
	}
	ex, err := exporter.New(cfg)
	if err != nil {
		return err
	}
	pipe := pipeline.New(pipeline.Config{Events: events, Live: live, Edge: purges, Private: mirror, Clock: cfg.Clock, Logger: logger})
	// Uploads left by an earlier run start at once, before the export.
	ctx, cancel := context.WithCancel(c.Context)
	piped := make(chan struct{})
	go func() { pipe.Run(ctx); close(piped) }()
	defer func() { cancel(); <-piped }()
	rep, _, err := pipe.ExportAll(c.Context, func(each func(exporter.GuideResult)) (*exporter.Report, error) {
		return ex.ExportAllEach(c.Context, each)
	})
	if rep == nil {
		return fmt.Errorf("export failed: %w", err)
	}
	rejected := printProblems(e.stderr, rep.Guides)
	fmt.Fprintln(e.stdout, rep.Summary())
	if err != nil {
		return fmt.Errorf("export failed: %w", err)
	}
	if events != nil {
		fmt.Fprintf(e.stdout, "%d ready event deliveries queued\n", pipe.Queued())
		if failed := pipe.Failed(); len(failed) > 0 {
			return fmt.Errorf("ready event not queued for %d guide(s): %s", len(failed), strings.Join(failed, ", "))
		}
	}
	if err := finishLive(c, live, cfg, e.stdout); err != nil {
		return err
	}
	if err := finishMirror(c, mirror, e.stdout); err != nil {
		return err
	}
	if err := waitPurges(c, purges, purgesDir(cfg), e.stdout); err != nil {
		return err
	}
	if rejected > 0 {
		return fmt.Errorf("%d bundle(s) rejected", rejected)
	}
	return nil
}

// notURL returns a *usageError when the value of the folder flag flag
// is a URL.
func notURL(flag, value string) error {
	if !bucket.IsURL(value) {
		return nil
	}
	hint := ""
	switch flag {
	case "out":
		hint = "; to publish the public tree to a bucket, give a folder here and the bucket to --publish"
	case "private":
		hint = "; the private tree is a folder or a bucket (docs/deployment.md)"
	}
	return usagef("--%s %s is a URL, not a folder%s", flag, publish.RedactURL(value), hint)
}

// finishLive waits until the live publisher has every change in the
// bucket, and says so; nothing without one. It returns an error naming
// what waits in the outbox when the store refused or the wait ended.
func finishLive(c *cli.Context, live *publish.Live, cfg exporter.Config, stdout io.Writer) error {
	if live == nil {
		return nil
	}
	to := publish.RedactURL(c.String("publish"))
	n := live.Idle(c.Context)
	if err := live.Err(); err != nil {
		return fmt.Errorf("publish to %s: %w; uploads of %d guide(s) wait in %s and go with the next export or watch with --publish",
			to, publish.RedactError(err, c.String("publish")), n, outboxDir(cfg))
	}
	if n > 0 {
		return fmt.Errorf("interrupted: uploads of %d guide(s) wait in %s and go with the next export or watch with --publish", n, outboxDir(cfg))
	}
	fmt.Fprintln(stdout, "published to", to)
	return nil
}

// finishMirror mirrors to the private bucket the guides not mirrored yet
// (the public files are all in theirs by now), and says so; nothing
// without a mirror. It returns an error naming the bucket when some could
// not be: the next export or watch mirrors them.
func finishMirror(c *cli.Context, mirror *privatebucket.Mirror, stdout io.Writer) error {
	if mirror == nil {
		return nil
	}
	to := publish.RedactURL(c.String("private"))
	if err := mirror.SyncDirty(c.Context); err != nil {
		return fmt.Errorf("private tree not all in %s: %w; the next export or watch with this --private mirrors the rest", to, publish.RedactError(err, c.String("private")))
	}
	fmt.Fprintln(stdout, "private tree in", to)
	return nil
}

// exportPurgeWait bounds how long a one-shot command waits for the CDN to
// take its purges.
const exportPurgeWait = 2 * time.Minute

// waitPurges waits, up to exportPurgeWait, until the CDN took every purge
// queued (nothing without --purge), and says so. It returns an error when
// some are still queued in dir then: they go with the next run.
func waitPurges(c *cli.Context, purges *edge.Edge, dir string, stdout io.Writer) error {
	if purges == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(c.Context, exportPurgeWait)
	defer cancel()
	if n := purges.Idle(ctx); n > 0 {
		return fmt.Errorf("%d purge(s) not taken by the CDN yet: they wait in %s and go with the next export, publish or watch with --purge", n, dir)
	}
	fmt.Fprintln(stdout, "purged", c.String("purge"))
	return nil
}

// exporterConfig builds the exporter configuration from the flags of c,
// on the operating system's file system, starting from
// exporter.DefaultConfig. It returns a *usageError for bad flag values.
func (e *env) exporterConfig(c *cli.Context) (exporter.Config, error) {
	encs, err := site.ParseList(c.String("encodings"))
	if err != nil {
		return exporter.Config{}, usagef("--encodings: %v", err)
	}
	out, priv, err := localTrees(c)
	if err != nil {
		return exporter.Config{}, err
	}
	src := c.String("src")
	for _, f := range []struct{ flag, value string }{{"src", src}, {"out", out}, {"private", priv}} {
		if f.value == "" {
			return exporter.Config{}, usagef("--%s is required", f.flag)
		}
		if err := notURL(f.flag, f.value); err != nil {
			return exporter.Config{}, err
		}
	}
	if fi, err := os.Stat(src); err != nil || !fi.IsDir() {
		return exporter.Config{}, usagef("--src %s is not a folder", src)
	}
	if sameOrInside(priv, out) || sameOrInside(out, priv) {
		return exporter.Config{}, usagef("--out and --private must not contain each other")
	}
	for _, d := range []struct{ flag, dir string }{{"--out", out}, {"--private", priv}} {
		if sameOrInside(d.dir, src) || sameOrInside(src, d.dir) {
			return exporter.Config{}, usagef("%s and --src must not contain each other", d.flag)
		}
	}
	osfs := afero.NewOsFs()
	cfg := exporter.DefaultConfig()
	cfg.Src, cfg.SrcDir = osfs, src
	cfg.Out, cfg.OutDir = osfs, out
	cfg.Private, cfg.PrivateDir = osfs, priv
	cfg.ViewURL, cfg.UnbrandedURL = c.String("view-url"), c.String("unbranded-url")
	cfg.EmbedURL, cfg.BaseURL = c.String("embed-url"), c.String("base-url")
	cfg.SourceName = c.String("source-name")
	cfg.Encodings = encs
	cfg.Jobs = c.Int("jobs")
	if cfg.Limits, err = readLimits(c); err != nil {
		return exporter.Config{}, err
	}
	cfg.Clock = e.clock
	return cfg, validConfig(cfg.Validate())
}

// sameOrInside reports whether folder a is b or inside b.
func sameOrInside(a, b string) bool {
	ca, cb := cleanAbs(a), cleanAbs(b)
	return ca == cb || strings.HasPrefix(ca, strings.TrimSuffix(cb, string(os.PathSeparator))+string(os.PathSeparator))
}

func cleanAbs(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

// printProblems prints every problem of every rejected bundle on w, one per
// line, and returns how many bundles were rejected.
func printProblems(w io.Writer, results []exporter.GuideResult) int {
	n := 0
	for _, r := range results {
		var be *bundle.Error
		if errors.As(r.Err, &be) {
			n++
			for _, p := range be.Problems {
				fmt.Fprintln(w, p.String())
			}
		}
	}
	return n
}

// openEvents opens the store named by --store and returns the queue of
// ready events in it, and a function that closes the store. Only the store,
// the delivery queue (not started: a sidecar on the same store sends) and
// the events are built, not the sidecar's servers. It returns a nil queue
// when --store is not set, a *usageError for a bad --signing-key, and an
// error when the store cannot be opened.
func (e *env) openEvents(c *cli.Context, cfg exporter.Config, logger *slog.Logger) (pipeline.EventQueue, func(), error) {
	dsn := c.String("store")
	if dsn == "" {
		return nil, func() {}, nil
	}
	keys, err := parseSigningKeys(c.StringSlice("signing-key"))
	if err != nil {
		return nil, nil, usagef("--signing-key: %v", err)
	}
	scfg := newSidecarConfig(cfg.PrivateDir, dsn, logger)
	scfg.ViewURL, scfg.BaseURL, scfg.SigningKeys, scfg.Clock = cfg.ViewURL, cfg.BaseURL, keys, e.clock
	st, err := store.Open(c.Context, dsn, logger)
	if err != nil {
		return nil, nil, fmt.Errorf("open store: %w", err)
	}
	dcfg, evcfg := scfg.configs(nil)
	q, err := delivery.New(st, dcfg)
	if err != nil {
		st.Close()
		return nil, nil, fmt.Errorf("delivery queue: %w", err)
	}
	ev, err := sidecar.NewEvents(evcfg, st, q)
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return eventQueue{ev, logger}, func() { st.Close() }, nil
}

// eventQueue is the pipeline's EventQueue on the sidecar's events; it logs
// each delivery queued.
type eventQueue struct {
	ev     *sidecar.Events
	logger *slog.Logger
}

// Enqueue queues guideID's ready event; see sidecar.Events.Enqueue.
func (q eventQueue) Enqueue(ctx context.Context, guideID string) (pipeline.Enqueued, error) {
	ds, before, err := q.ev.Enqueue(ctx, guideID)
	if err != nil {
		return pipeline.Enqueued{}, err
	}
	q.logQueued(guideID, ds)
	return pipeline.Enqueued{Queued: len(ds), SentBefore: before}, nil
}

// logQueued logs each delivery queued for guideID's ready event.
func (q eventQueue) logQueued(guideID string, ds []delivery.Delivery) {
	for _, d := range ds {
		q.logger.Info("ready event queued", "guide", guideID, "url", d.URL, "delivery", d.ID)
	}
}

// parseShard parses --shard "i/n" (0 <= i < n); "" is the whole export.
func parseShard(s string) (i, n int, err error) {
	if s == "" {
		return 0, 1, nil
	}
	if _, err := fmt.Sscanf(s, "%d/%d", &i, &n); err != nil || n < 1 || i < 0 || i >= n || fmt.Sprintf("%d/%d", i, n) != s {
		return 0, 0, usagef("--shard %q: want i/n with 0 <= i < n, such as 0/4", s)
	}
	return i, n, nil
}

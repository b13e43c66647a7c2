package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/urfave/cli/v2"

	"github.com/guidepub/guidepub/exporter"
	"github.com/guidepub/guidepub/exporter/pipeline"
	"github.com/guidepub/guidepub/exporter/watch"
)

// watchCommand returns the "watch" command: re-export each bundle when it
// changes, beside one export of every bundle; see watchAndExport.
func (e *env) watchCommand() *cli.Command {
	return &cli.Command{
		Name:  "watch",
		Usage: "export every bundle, then re-export each one when it changes; queue ready events",
		Description: `Watches --src (recursively) and re-exports a bundle when anything in its
folder changes: at once when the upload ends with a rename (the bundle
folder renamed from its staging name, or its guide.json renamed into
place), otherwise once the upload has been quiet for --debounce; from the
start, while everything under --src is exported once, as "export" does,
beside it. Editor and temporary files
(4913, *.swp, *.swx, *~, .#*, *.tmp, *.part, *.crdownload, dot-files) are
ignored. A deleted bundle folder is unpublished. An invalid or incomplete
upload is reported once and leaves the published version as it was. A view
is re-exported the moment its expiresAt passes, and then reads "locked".

With --store, every export that changes a ready guide queues its ready event
for the guide's webhooks, once per revision: several watchers, or a watcher
and "export --store", never queue the same revision twice. The sidecar
("guidepub sidecar" on the same store) delivers them.

With --publish URL, the public files each export wrote or removed go to the
bucket a moment later (media, then documents and pages, then statuses;
removals last), without listing the bucket: the way to keep a CDN's bucket
current at any corpus size. What is still to upload is kept in
<private>/outbox, so a crash or a store outage resumes where it stopped;
failures retry every --publish-retry-max at most. --metrics-addr serves
Prometheus metrics (objects pending, oldest pending age, uploads, failures).

Examples:
   guidepub watch --src bundles --out public --private private
   guidepub watch --src bundles --out public --private private --store private/guidepub.db
   guidepub watch --src bundles --out public --private private --publish 's3://my-bucket?region=eu-west-1' --metrics-addr 127.0.0.1:9464
   guidepub watch --src /mnt/uploads --out public --private private --poll 5s   # network mount`,
		Flags:  flags(exportFlags(), watchFlags(), eventFlags(), livePublishFlags(), purgeFlags(), metricsFlag()),
		Action: e.runWatch,
	}
}

// runWatch is the "watch" command.
func (e *env) runWatch(c *cli.Context) error {
	if err := checkWatchFlags(c); err != nil {
		return err
	}
	cfg, err := e.exporterConfig(c)
	if err != nil {
		return err
	}
	logger := newLogger(e.stderr, slog.LevelInfo)
	limitMemoryTo(cfg.MemoryBudget(), logger)
	reg := prometheus.NewRegistry()
	mirror, fromBucket, closeMirror, err := e.openMirror(c, cfg, logger)
	if err != nil {
		return err
	}
	defer closeMirror()
	live, closeLive, err := e.openLive(c, cfg, logger, reg, fromBucket > 0)
	if err != nil {
		if c.Context.Err() != nil {
			return nil // stopped while another process held the outbox
		}
		return err
	}
	defer closeLive()
	purges, closeEdge, err := e.openEdge(c, cfg, logger, live)
	if err != nil {
		if c.Context.Err() != nil {
			return nil // stopped while another process held the queue
		}
		return err
	}
	defer closeEdge()
	events, closeStore, err := e.openEvents(c, cfg, logger)
	if err != nil {
		return err
	}
	defer closeStore()
	stopMetrics, err := serveMetrics(c.Context, c.String("metrics-addr"), reg, logger)
	if err != nil {
		return err
	}
	defer stopMetrics()
	return watchAndExport(c.Context, watchSetup{
		Exporter: cfg,
		Pipeline: pipeline.New(pipeline.Config{Events: events, Live: live, Edge: purges, Private: mirror, Clock: cfg.Clock, Logger: logger}),
		Poll:     c.Duration("poll"),
		Debounce: c.Duration("debounce"),
		Quick:    c.Bool("quick"),
		Logger:   logger,
		Stdout:   e.stdout,
		Stderr:   e.stderr,
	})
}

// watchSetup is what watchAndExport needs.
type watchSetup struct {
	Exporter exporter.Config
	Pipeline *pipeline.Pipeline // what follows each export; nil: nothing
	Poll     time.Duration      // > 0: poll instead of file system events
	Debounce time.Duration
	// Quick turns on the exporter's quick siblings for uploads
	// (exporter.Config.QuickSiblings).
	Quick  bool
	Logger *slog.Logger
	Stdout io.Writer // the summary of the first export
	Stderr io.Writer // problems of rejected bundles
	// Exported, when set, is called after each export or removal that
	// changed the published trees, with the public top-level folders (view
	// ids and aliases) that may have changed; nil means any (dev reloads
	// its static server).
	Exported func(ids []string)
	// Started, when set, is called once the first export is done and the
	// watcher runs, with that export's report.
	Started func(*exporter.Report)
}

// watchAndExport exports every bundle once, then re-exports bundles as they
// change until ctx is done, with the pipeline running beside (live uploads
// left by the last run go first). It returns nil when ctx ends, or the
// error that prevented watching.
//
// The exporter reads what it published (its records: every guide's, so
// the start's cost grows with the corpus) in the background
// (exporter.Start): an upload made as the process starts is found, sits
// out its quiet period and is published meanwhile, its ids checked
// through the records' ids index. The watches of the other folders wait
// for the records (watch.Config.Hold): adding them beside the records'
// read slowed that read down.
func watchAndExport(ctx context.Context, s watchSetup) error {
	// An upload made from here on, before the watcher watches --src, is
	// found by its stamps and exported first.
	since := time.Now()
	s.Exporter.Logger = nil // the watcher reports rejected bundles, once each
	s.Exporter.QuickSiblings = s.Quick
	if err := s.Exporter.Validate(); err != nil {
		return fmt.Errorf("exporter: %w", err)
	}
	pipe := s.Pipeline
	if pipe == nil {
		pipe = pipeline.New(pipeline.Config{Clock: s.Exporter.Clock, Logger: s.Logger})
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	// One clock for the exporter, the watcher and the retries: the
	// exporter's, which its Validate requires.
	clk := s.Exporter.Clock
	ex, err := exporter.Start(s.Exporter)
	if err != nil {
		return err
	}
	// Whatever ends the watcher, the records' read ends before this does.
	defer func() { _ = ex.Loaded() }()
	h := &exportHandler{pipe: pipe, ex: ex, logger: s.Logger, exported: s.Exported}
	// The watcher starts before the first export so that nothing uploaded
	// during it is missed, and runs beside it.
	wcfg := watch.DefaultConfig()
	wcfg.Dir, wcfg.Handler = s.Exporter.SrcDir, h
	wcfg.Debounce, wcfg.Poll = s.Debounce, s.Poll
	wcfg.Jobs, wcfg.Clock, wcfg.Logger, wcfg.Since = s.Exporter.Jobs, clk, s.Logger, since
	wcfg.Hold = ex.Records().Ready() // the records first, then the watches of every folder
	if err := validConfig(wcfg.Validate()); err != nil {
		return err
	}
	w, err := watch.New(wcfg)
	if err != nil {
		return err
	}
	piped := make(chan struct{})
	go func() { pipe.Run(ctx); close(piped) }()
	defer func() { cancel(); <-piped }()
	// The watcher runs from the start, so that an upload is exported at
	// once; the export of the whole tree (the catch-up) runs beside it.
	ran := make(chan error, 1)
	go func() { ran <- w.Run(ctx) }()
	if err := ex.Loaded(); err != nil {
		cancel()
		<-ran
		return err
	}
	rep, next, err := pipe.ExportAll(ctx, func(each func(exporter.GuideResult)) (*exporter.Report, error) { return ex.ExportAllEach(ctx, each) })
	if rep != nil {
		printProblems(s.Stderr, rep.Guides)
		fmt.Fprintln(s.Stdout, rep.Summary())
	}
	if err != nil {
		interrupted := ctx.Err() != nil
		cancel()
		<-ran
		if interrupted {
			return nil // interrupted during the first export
		}
		return fmt.Errorf("export failed: %w", err)
	}
	for i, g := range rep.Guides {
		if !next[i].IsZero() {
			w.Schedule(g.Folder, next[i])
		}
	}
	if s.Exported != nil {
		s.Exported(nil)
	}
	s.Logger.Info("watching for uploads", "src", s.Exporter.SrcDir, "mode", w.Mode())
	if s.Started != nil {
		s.Started(rep)
	}
	return <-ran
}

// exportHandler is the watcher's Handler: it exports or unpublishes a
// bundle through the pipeline, which queues its ready event and publishes
// what changed.
type exportHandler struct {
	pipe     *pipeline.Pipeline
	ex       *exporter.Exporter
	logger   *slog.Logger
	exported func(ids []string)
}

var _ watch.Handler = (*exportHandler)(nil)

// Changed exports folder. It returns the bundle's *bundle.Error when the
// bundle is rejected (nothing published changes), or an I/O error.
func (h *exportHandler) Changed(ctx context.Context, folder string) (time.Time, error) {
	res, next, err := h.pipe.ExportGuide(ctx, func() (*exporter.GuideResult, error) { return h.ex.ExportBundle(ctx, folder) })
	if err != nil {
		if res != nil && len(res.Changes) > 0 && h.exported != nil {
			// What a failed export wrote or took back is served as it is.
			h.exported(res.ChangedIDs())
		}
		return next, err
	}
	if !res.Changed {
		return next, nil
	}
	if res.Recompressed {
		msg := "compressed siblings finished"
		if res.Quick > 0 {
			msg = "compressed siblings finished in part: gave way to an upload" // the rest later
		}
		h.logger.Debug(msg, "folder", folder, "guide", res.GuideID, "written", res.Written)
	} else {
		h.logger.Info("guide exported", "folder", folder, "guide", res.GuideID, "revision", short(res.Revision),
			"ready", res.Ready, "written", res.Written, "deleted", res.Deleted, "quick", res.Quick)
	}
	if h.exported != nil {
		h.exported(res.ChangedIDs())
	}
	return next, nil
}

// Removed unpublishes what folder published. It returns the exporter's
// error when a file cannot be deleted.
func (h *exportHandler) Removed(ctx context.Context, folder string) error {
	res, _, err := h.pipe.ExportGuide(ctx, func() (*exporter.GuideResult, error) { return h.ex.RemoveBundle(ctx, folder) })
	if err != nil {
		return err
	}
	if res.Changed {
		h.logger.Info("guide unpublished", "folder", folder, "guide", res.GuideID, "deleted", res.Deleted)
		if h.exported != nil {
			h.exported(res.ChangedIDs())
		}
	}
	return nil
}

// short returns the first 12 characters of a revision, for logs.
func short(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}

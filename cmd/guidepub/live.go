package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/afero"
	"github.com/urfave/cli/v2"

	"github.com/guidepub/guidepub/exporter"
	"github.com/guidepub/guidepub/exporter/publish"
	"github.com/guidepub/guidepub/site"
	"github.com/guidepub/guidepub/site/httpserver"
)

// livePublishFlags are the flags of live publishing on export, watch and
// dev.
func livePublishFlags() []cli.Flag {
	def := publish.DefaultLiveConfig()
	return []cli.Flag{
		stringFlag("publish", "", "bucket URL (s3://, gs://, azblob://, file://) to upload each export's changed files to, as they are exported"),
		stringFlag("publish-prefix", def.Prefix, "key prefix inside the --publish bucket"),
		stringFlag("publish-encoding", publishEncodingName(def.Encoding), "document bytes to upload: identity, gzip or br"),
		&cli.DurationFlag{Name: "publish-retry-max", Value: def.RetryMax, EnvVars: envVars("publish-retry-max"),
			Usage: "longest wait between tries of a failed upload (they double from 250ms)"},
		pagesAsObjectsFlag(),
		edgeTTLFlag(),
	}
}

// metricsFlag is watch's Prometheus listener.
func metricsFlag() []cli.Flag {
	return []cli.Flag{stringFlag("metrics-addr", "", "HOST:PORT to serve Prometheus metrics on at /metrics (live publishing, Go, process); empty: none")}
}

// outboxDir is where live publishing keeps what is still to upload, in
// the private tree of cfg: one folder per shard, as the records, since
// one process at a time uses an outbox and shards publish side by side.
func outboxDir(cfg exporter.Config) string { return shardDir(cfg, site.OutboxDir) }

// shardDir is the folder name of the private tree of cfg, one per shard
// when the export is sharded (name-i-of-n), since one process at a time
// uses such a folder and shards run side by side.
func shardDir(cfg exporter.Config, name string) string {
	if cfg.Shards > 1 {
		return filepath.Join(cfg.PrivateDir, fmt.Sprintf("%s-%d-of-%d", name, cfg.Shard, cfg.Shards))
	}
	return filepath.Join(cfg.PrivateDir, name)
}

// openLive opens the --publish bucket and returns the live publisher for
// cfg's trees (nil without --publish) and a function that closes the
// bucket and releases the outbox. It waits while another process
// publishes from the same private tree (saying so). Its metrics go to reg
// when not nil; with compareFirst, each upload is skipped when the bucket
// holds the file already (publish.LiveConfig.CompareFirst). It returns a *usageError for bad flag values, and an
// error when the outbox cannot be read. The URL is printed redacted
// (publish.RedactURL) everywhere.
func (e *env) openLive(c *cli.Context, cfg exporter.Config, logger *slog.Logger, reg prometheus.Registerer, compareFirst bool) (*publish.Live, func(), error) {
	url := c.String("publish")
	if url == "" {
		return nil, func() {}, nil
	}
	enc, err := publish.ParseEncoding(c.String("publish-encoding"))
	if err != nil {
		return nil, nil, usagef("--publish-encoding: %v", err)
	}
	if c.Bool("pages-as-objects") && strings.HasPrefix(url, "file:") {
		return nil, nil, usagef("--pages-as-objects: a file:// bucket cannot hold a key that is also a folder; leave the flag out")
	}
	if c.Duration("publish-retry-max") < publish.DefaultRetryMin {
		return nil, nil, usagef("--publish-retry-max must be at least %v", publish.DefaultRetryMin)
	}
	bucket, err := publish.OpenBucket(c.Context, url)
	if err != nil {
		return nil, nil, usagef("--publish %s: %v", publish.RedactURL(url), publish.RedactError(err, url))
	}
	lcfg := publish.DefaultLiveConfig()
	lcfg.From, lcfg.FromDir = afero.NewOsFs(), cfg.OutDir
	lcfg.Bucket, lcfg.Prefix, lcfg.Encoding = bucket, c.String("publish-prefix"), enc
	lcfg.PagesAsObjects, lcfg.EdgeTTL = c.Bool("pages-as-objects"), c.Duration("edge-ttl")
	lcfg.RetryMax = c.Duration("publish-retry-max")
	lcfg.CompareFirst = compareFirst
	if cfg.Shards > 1 {
		// Shards publish disjoint guides: they need not wait for each other.
		lcfg.LeaseName = fmt.Sprintf("shard-%d-of-%d", cfg.Shard, cfg.Shards)
	}
	lcfg.OutboxDir = outboxDir(cfg)
	// The reconcile after a crash deletes what the export's records say
	// was withdrawn (read then, every shard's) whatever the limit of
	// deletions: the limit guards against a wrong tree only.
	lcfg.Withdrawals = publish.RecordsWithdrawals(cfg.Private, cfg.PrivateDir, cfg.Shards)
	// export is one-shot: a refused credential or a missing bucket ends it
	// (exit 1) rather than being retried with nobody watching; watch and
	// dev retry, and say so, until it is fixed.
	lcfg.FailPermanent = c.Command.Name == "export"
	lcfg.Clock, lcfg.Logger, lcfg.Registerer = e.clock, logger, reg
	if err := validConfig(lcfg.Validate()); err != nil {
		bucket.Close()
		return nil, nil, err
	}
	live, err := publish.NewLive(c.Context, lcfg)
	if err != nil {
		bucket.Close()
		return nil, nil, err
	}
	return live, func() { live.Close(); bucket.Close() }, nil
}

// serveMetrics serves reg (with Go and process metrics) at /metrics on
// addr until ctx ends or the returned stop is called; an empty addr serves
// nothing. It returns a *usageError when addr cannot be listened on.
func serveMetrics(ctx context.Context, addr string, reg *prometheus.Registry, logger *slog.Logger) (stop func(), err error) {
	if addr == "" {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, usagef("--metrics-addr: %v", err)
	}
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		if err := serveHTTP(ctx, ln, mux, httpserver.Default(), logger); err != nil {
			logger.Error("metrics server", "error", err.Error())
		}
		close(done)
	}()
	logger.Info("metrics", "url", fmt.Sprintf("http://%s/metrics", ln.Addr()))
	return func() { cancel(); <-done }, nil
}

package main

import (
	"log/slog"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/guidepub/guidepub/exporter"
	"github.com/guidepub/guidepub/exporter/edge"
	"github.com/guidepub/guidepub/exporter/publish"
	"github.com/guidepub/guidepub/site"
)

// purgeFlags are the flags of purging the edge on export, watch and
// publish.
func purgeFlags() []cli.Flag {
	return []cli.Flag{stringFlag("purge", "",
		"CDN to purge what each change touched once it is in place: varnish+http://HOST:PORT, cloudfront://DISTRIBUTION_ID, fastly://SERVICE_ID or cloudflare://ZONE_ID (docs/hosting.md)")}
}

// purgesDir is where the purges owed to the CDN wait, in the private
// tree of cfg: one folder per shard, as the outbox.
func purgesDir(cfg exporter.Config) string { return shardDir(cfg, site.PurgesDir) }

// treeOriginLag is how long a purge waits when the CDN reads the tree
// through an origin server: guidepub serve sees a renamed file up to
// 300 ms after the rename (its watcher gathers a burst of renames), and a
// purge before then would let the edge fetch and keep the old file.
const treeOriginLag = time.Second

// openEdge returns the purge queue of the --purge CDN (nil without
// --purge) and a function that releases it. With live, a guide's purges
// wait until its files are in the bucket. It waits while another process
// purges from the same private tree. It returns a *usageError for a bad
// --purge URL, and an error when the queue cannot be read.
func (e *env) openEdge(c *cli.Context, cfg exporter.Config, logger *slog.Logger, live *publish.Live) (*edge.Edge, func(), error) {
	raw := c.String("purge")
	if raw == "" {
		return nil, func() {}, nil
	}
	purger, err := edge.Parse(raw, os.Getenv)
	if err != nil {
		return nil, nil, usagef("%v", err)
	}
	ecfg := edge.Config{Dir: purgesDir(cfg), Purger: purger, Clock: e.clock, Logger: logger}
	if live != nil {
		ecfg.Settled = live.Settled // the bucket reads as written once uploaded
	} else {
		ecfg.Delay = treeOriginLag
	}
	q, err := edge.Open(c.Context, ecfg)
	if err != nil {
		return nil, nil, err
	}
	logger.Info("purging the edge", "cdn", purger.String())
	return q, func() { q.Close() }, nil
}

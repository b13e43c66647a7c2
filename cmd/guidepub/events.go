package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/urfave/cli/v2"

	"github.com/guidepub/guidepub/exporter"
	"github.com/guidepub/guidepub/sidecar"
)

// eventFlags returns --store and --signing-key for the commands that queue
// ready events after exporting ("export" and "watch"). Unlike the
// sidecar's, their --store has no default: without it no event is queued.
func eventFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "store", EnvVars: envVars("store"),
			Usage: "SQLite file or postgres:// URL of the sidecar's store: the ready event of every guide whose " +
				"content changed is queued there for delivery (without it, no events are queued)"},
		&cli.StringSliceFlag{Name: "signing-key", EnvVars: envVars("signing-key"),
			Usage: "the sidecar's --signing-key, when it has one, so queued events carry tokens it accepts"},
	}
}

// openEvents opens the store named by --store and returns the Events that
// queue ready events into it, and a function that closes the store. It
// returns nil Events when --store is not set, a *usageError for a bad
// --signing-key, and an error when the store cannot be opened.
func openEvents(c *cli.Context, cfg exporter.Config, logger *slog.Logger) (*sidecar.Events, func(), error) {
	dsn := c.String("store")
	if dsn == "" {
		return nil, func() {}, nil
	}
	keys, err := parseSigningKeys(c.StringSlice("signing-key"))
	if err != nil {
		return nil, nil, usagef("--signing-key: %v", err)
	}
	// The queue only records deliveries here; a sidecar on the same store
	// sends them.
	parts, err := openSidecar(c.Context, sidecarConfig{
		Private: cfg.PrivateDir, Store: dsn, ViewURL: cfg.ViewURL, BaseURL: cfg.BaseURL,
		SigningKeys: keys, Logger: logger,
	})
	if err != nil {
		return nil, nil, err
	}
	return parts.Events, func() { parts.Store.Close() }, nil
}

// queueReadyEvents queues the ready event of every ready guide of rep for
// its webhooks. The store keeps one delivery per guide revision and
// webhook, so guides that did not change queue nothing new, and a guide
// whose event could not be queued by an earlier run is queued now. It
// returns how many deliveries were queued and the guides whose event could
// not be queued.
func queueReadyEvents(ctx context.Context, ev *sidecar.Events, rep *exporter.Report, logger *slog.Logger) (queued int, failed []string) {
	for _, g := range rep.Guides {
		if g.Err != nil || !g.Ready || g.GuideID == "" {
			continue
		}
		ds, err := ev.Enqueue(ctx, g.GuideID)
		if err != nil {
			logger.Error("ready event not queued", "guide", g.GuideID, "error", err.Error())
			failed = append(failed, g.GuideID)
			continue
		}
		for _, d := range ds {
			logger.Info("ready event queued", "guide", g.GuideID, "url", d.URL, "delivery", d.ID)
		}
		queued += len(ds)
	}
	return queued, failed
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

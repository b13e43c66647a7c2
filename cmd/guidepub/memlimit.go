package main

import (
	"log/slog"

	"github.com/guidepub/guidepub/exporter"
	"github.com/guidepub/guidepub/sidecar"
	"github.com/guidepub/guidepub/sidecar/oauth"
	"github.com/guidepub/guidepub/site/memlimit"
	"github.com/guidepub/guidepub/site/serve"
)

// limitMemoryTo sets the Go memory limit of a process documented to take
// budget bytes (site/memlimit), unless GOMEMLIMIT is set.
func limitMemoryTo(budget int64, logger *slog.Logger) {
	limit, set := memlimit.Set(budget)
	logger.Debug("memory limit", "bytes", limit, "budget", budget, "fromGOMEMLIMIT", !set)
}

// sidecarMemoryBudget is the memory budget of the sidecar command, whose
// OAuth server has the default configuration.
func sidecarMemoryBudget() int64 { return sidecar.MemoryBudget(oauth.DefaultConfig()) }

// devMemoryBudget is the memory budget of dev, which runs an exporter
// with cfg, a sidecar and a static server in one process: the sum of
// theirs.
func devMemoryBudget(cfg exporter.Config) int64 {
	return cfg.MemoryBudget() + sidecarMemoryBudget() + serve.DefaultConfig().CacheBytes + serveHeadroom
}

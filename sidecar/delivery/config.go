package delivery

import (
	"log/slog"
	mrand "math/rand/v2"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/guidepub/guidepub/site/clock"
	"github.com/guidepub/guidepub/site/config"
)

// Config tunes a Queue. Start from DefaultConfig: zero values are zero,
// and New refuses what Validate refuses.
type Config struct {
	RetryMin, RetryMax  time.Duration // default 10m, 15m (uniform random between)
	MaxAttempts         int           // default 5
	Timeout             time.Duration // per attempt, default 30s
	AllowPrivateTargets bool          // allow loopback, private and other non-public addresses
	Workers             int           // concurrent sends per sidecar, default 64
	Logger              *slog.Logger
	Registerer          prometheus.Registerer // may be nil

	// Clock tells attempt times, webhook-timestamp and the retry schedule;
	// nil is clock.System().
	Clock clock.Clock
	// Rand draws the retry delays; default seeded from crypto/rand. It is
	// used under a lock.
	Rand *mrand.Rand
	// PollInterval is how often each sidecar looks for due attempts; default
	// 1s on PostgreSQL and 50ms on SQLite. It is the fallback: a queued
	// delivery wakes the queues at once (LISTEN/NOTIFY on PostgreSQL; on
	// SQLite, a direct wake-up in the queueing process and the wake file
	// for the others: see wake.go).
	PollInterval time.Duration
	// RescueAfter is how long an attempt may stay "running" before it counts
	// as lost with a dead process and is scheduled again by any sidecar;
	// never less than Timeout + 10s (the job's own limit, Timeout + 5s,
	// plus a margin), which zero gives.
	RescueAfter time.Duration
	// InstanceID names this sidecar stably across restarts (River's client
	// id). At Start, the deliveries a process with the same id left in
	// flight are sent again at once. Empty: a random id, and no such
	// reclaim. Two live sidecars must not share one.
	InstanceID string
	// ResponseLimit is how many bytes of a response body are read (and
	// discarded); default 64 KiB.
	ResponseLimit int64

	// fetchCooldown overrides River's fetch cooldown (fetchCooldown in
	// river.go), for tests: River sends at most one insert notification
	// per cooldown, so a long one shows what happens to the inserts it
	// does not announce.
	fetchCooldown time.Duration
}

// DefaultConfig returns the delivery settings "guidepub sidecar" starts
// from: retries 10 to 15 minutes apart, 5 attempts of at most 30 seconds,
// 64 sends at once, public targets only.
func DefaultConfig() Config {
	return Config{
		RetryMin: 10 * time.Minute, RetryMax: 15 * time.Minute,
		MaxAttempts: 5, Timeout: 30 * time.Second, Workers: 64,
		Clock: clock.System(),
	}
}

// Validate returns one *config.FieldError per field that cannot work
// (joined), or nil: retry delays positive and in order, at least one
// attempt, a positive timeout and 1 to 10000 workers.
func (c Config) Validate() error {
	var p config.Problems
	p.Add(c.RetryMin > 0, "RetryMin", "must be positive, got %s", c.RetryMin)
	p.Add(c.RetryMax >= c.RetryMin, "RetryMax", "must be at least RetryMin (%s), got %s", c.RetryMin, c.RetryMax)
	p.Add(c.MaxAttempts >= 1, "MaxAttempts", "must be at least 1, got %d", c.MaxAttempts)
	p.Add(c.Timeout > 0, "Timeout", "must be positive, got %s", c.Timeout)
	p.Add(c.Workers >= 1 && c.Workers <= 10000, "Workers", "must be between 1 and 10000, got %d", c.Workers)
	p.Add(c.PollInterval >= 0, "PollInterval", "must not be negative, got %s", c.PollInterval)
	p.Add(len(c.InstanceID) <= 100, "InstanceID", "must be at most 100 characters, got %d", len(c.InstanceID))
	return p.Err()
}

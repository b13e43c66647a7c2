package sidecar

import "github.com/guidepub/guidepub/sidecar/oauth"

// Overhead is the memory a sidecar takes besides its password checks'
// budget: the Portal API, the delivery queue, the store's connections and
// the HTTP connections in flight. Under BenchmarkSignInFlood (30 sign-ins
// at once) a sidecar took about 100 MiB besides the checks' 256 MiB.
const Overhead = 128 << 20

// MemoryBudget returns the memory, in bytes, that a sidecar whose OAuth
// server has ocfg takes at most, what a container running it must be
// given: the password checks' budget (oauth.Config.PasswordHashMemoryMiB)
// plus Overhead. cmd/guidepub sets the Go memory limit from it
// (site/memlimit).
func MemoryBudget(ocfg oauth.Config) int64 {
	return int64(ocfg.PasswordHashMemoryMiB)<<20 + Overhead
}

package oauth

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"
)

// errBusy is returned when a password check could not start in time
// because the hash memory budget was in use.
var errBusy = errors.New("too many password checks at once")

// hashLimiter bounds the memory that password checks take together. Each
// argon2id check allocates the memory its hash names (m, 64 MiB for
// guidepub's hashes) for as long as it runs, so unbounded concurrent
// sign-ins would take that many times 64 MiB. A check holds its share of a
// fixed budget while it runs; one that cannot start within wait is refused
// with errBusy. The semaphore is first come, first served.
type hashLimiter struct {
	sem       *semaphore.Weighted
	budgetKiB int64
	wait      time.Duration

	inUse, peak atomic.Int64 // KiB held now, and the most held at once
}

func newHashLimiter(budgetMiB int, wait time.Duration) *hashLimiter {
	kib := int64(budgetMiB) * 1024
	return &hashLimiter{sem: semaphore.NewWeighted(kib), budgetKiB: kib, wait: wait}
}

// check is CheckPassword within the budget: it waits up to l.wait for the
// hash's memory to be free, and returns errBusy if it was not, or
// errBadHash for an unreadable hash.
func (l *hashLimiter) check(ctx context.Context, encoded, password string) (bool, error) {
	h, err := parseHash(encoded)
	if err != nil {
		return false, err
	}
	// A hash that needs more than the whole budget runs alone.
	need := min(int64(h.memKiB), l.budgetKiB)
	wctx, cancel := context.WithTimeout(ctx, l.wait)
	defer cancel()
	if err := l.sem.Acquire(wctx, need); err != nil {
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		return false, errBusy
	}
	defer l.sem.Release(need)
	n := l.inUse.Add(need)
	defer l.inUse.Add(-need)
	for p := l.peak.Load(); n > p && !l.peak.CompareAndSwap(p, n); p = l.peak.Load() {
	}
	return h.matches(password), nil
}

// Package memlimit sets the Go runtime's soft memory limit
// (runtime/debug.SetMemoryLimit) from the memory a guidepub process is
// documented to need (its budget: what a container running it is told to
// give it), so that it keeps to that promise with the default flags.
// Without a limit the garbage collector lets the heap grow to twice what
// is live before it collects, so a process whose decodes hold their
// budget takes much more than it (docs/robustness.md#memory-limit).
package memlimit

import (
	"math"
	"os"
	"runtime/debug"
)

// Share is the part of a budget given to the runtime as its limit, in
// hundredths. The limit counts the memory the runtime manages; the rest of
// the budget is for what it does not count (the binary's code and data,
// resident once touched) and for what the collector, running beside the
// program, has not yet freed when a large allocation comes.
const Share = 90

// For returns the Go memory limit, in bytes, of a process whose resident
// memory must stay within budget bytes: Share % of it.
func For(budget int64) int64 {
	if budget > math.MaxInt64/Share {
		return budget / 100 * Share
	}
	return budget * Share / 100
}

// Set sets the runtime's memory limit to For(budget), unless the operator
// set GOMEMLIMIT: then the runtime has applied theirs, and it stands. It
// returns the limit in force and whether Set chose it.
func Set(budget int64) (limit int64, set bool) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return debug.SetMemoryLimit(-1), false
	}
	limit = For(budget)
	debug.SetMemoryLimit(limit)
	return limit, true
}

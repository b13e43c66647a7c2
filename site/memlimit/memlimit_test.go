package memlimit

import (
	"math"
	"runtime/debug"
	"testing"
)

func TestFor(t *testing.T) {
	for _, tc := range []struct{ budget, want int64 }{
		{(512 + 150) << 20, 624_741_580}, // export and watch at the default --max-decode-memory: 595.8 MiB
		{100, 90},
		{0, 0},
		{math.MaxInt64, math.MaxInt64 / 100 * 90},
	} {
		if got := For(tc.budget); got != tc.want {
			t.Errorf("For(%d) = %d, want %d", tc.budget, got, tc.want)
		}
	}
}

// TestSet: without GOMEMLIMIT the limit is the budget's share; with it,
// the operator's limit stands, whatever the budget.
func TestSet(t *testing.T) {
	old := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(old) })

	debug.SetMemoryLimit(math.MaxInt64)
	t.Setenv("GOMEMLIMIT", "")
	if limit, set := Set(1 << 30); !set || limit != For(1<<30) || debug.SetMemoryLimit(-1) != For(1<<30) {
		t.Errorf("Set(1 GiB) without GOMEMLIMIT: %d %v, runtime %d; want %d set", limit, set, debug.SetMemoryLimit(-1), For(1<<30))
	}

	// The runtime reads GOMEMLIMIT at start; here the test stands in for
	// it with the value the operator gave.
	t.Setenv("GOMEMLIMIT", "300MiB")
	debug.SetMemoryLimit(300 << 20)
	if limit, set := Set(1 << 30); set || limit != 300<<20 || debug.SetMemoryLimit(-1) != 300<<20 {
		t.Errorf("Set(1 GiB) with GOMEMLIMIT=300MiB: %d %v, runtime %d; want the operator's 300 MiB untouched",
			limit, set, debug.SetMemoryLimit(-1))
	}
}

package main

import (
	"context"
	"io"
	"math"
	"path/filepath"
	"runtime/debug"
	"testing"
	"time"

	"github.com/guidepub/guidepub/exporter"
	"github.com/guidepub/guidepub/site/memlimit"
)

// TestCommandsSetMemoryLimit: export, watch, sidecar and dev set the Go
// memory limit from their documented budget (export and watch:
// --max-decode-memory plus exporter.ExportOverhead; the sidecar: its
// password checks' budget plus sidecar.Overhead; dev: the sum of its
// parts'), and leave an operator's GOMEMLIMIT alone.
func TestCommandsSetMemoryLimit(t *testing.T) {
	old := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(old) })
	t.Setenv("GOMEMLIMIT", "")
	exportBudget := func(decodeMiB int64) int64 { return decodeMiB<<20 + exporter.ExportOverhead }
	devCfg := exporter.DefaultConfig()
	devCfg.Limits.DecodeMemory = 100
	// An empty source: the limit is set before any export.
	tree := func() []string {
		root := t.TempDir()
		return []string{"--src", t.TempDir(), "--out", filepath.Join(root, "out"), "--private", filepath.Join(root, "private")}
	}
	for _, tc := range []struct {
		args   []string
		budget int64
	}{
		{append([]string{"export", "--max-decode-memory", "300"}, tree()...), exportBudget(300)},
		{append([]string{"watch", "--max-decode-memory", "200"}, tree()...), exportBudget(200)},
		{[]string{"sidecar", "--addr", "127.0.0.1:0", "--private", t.TempDir()}, sidecarMemoryBudget()},
		{[]string{"dev", "--addr", "127.0.0.1:0", "--work-dir", t.TempDir(), "--max-decode-memory", "100"}, devMemoryBudget(devCfg)},
	} {
		t.Run(tc.args[0], func(t *testing.T) {
			debug.SetMemoryLimit(math.MaxInt64)
			want := memlimit.For(tc.budget)
			if got := runUntilLimit(t, tc.args, want); got != want {
				t.Errorf("memory limit %d, want %d (%d MiB of a budget of %d MiB)", got, want, want>>20, tc.budget>>20)
			}
		})
	}

	// GOMEMLIMIT is read by the runtime at start; the test sets the limit
	// it would have set.
	t.Setenv("GOMEMLIMIT", "1GiB")
	debug.SetMemoryLimit(1 << 30)
	// (run, not runCLI, which takes the command's limit back.)
	if err := run(context.Background(), append([]string{"guidepub", "export"}, tree()...), io.Discard, io.Discard); err != nil {
		t.Fatalf("export: %v", err)
	}
	if got := debug.SetMemoryLimit(-1); got != 1<<30 {
		t.Errorf("memory limit %d with GOMEMLIMIT=1GiB, want the operator's %d", got, 1<<30)
	}
}

// runUntilLimit runs guidepub with args until it ends or the Go memory
// limit is want (at most 20 s), then stops it, and returns the limit.
func runUntilLimit(t *testing.T, args []string, want int64) int64 {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, append([]string{"guidepub"}, args...), io.Discard, io.Discard) }()
	defer func() { cancel(); <-done }()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
		if got := debug.SetMemoryLimit(-1); got == want {
			return got
		}
		select {
		case err := <-done:
			done <- err
			return debug.SetMemoryLimit(-1)
		case <-time.After(5 * time.Millisecond):
		}
	}
	return debug.SetMemoryLimit(-1)
}

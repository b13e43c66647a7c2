package main

import (
	"bytes"
	"context"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

// exportedTree exports the sample bundles with the CLI and returns the
// public tree.
func exportedTree(t *testing.T) string {
	t.Helper()
	src := fixtureSrc(t)
	out, priv := filepath.Join(t.TempDir(), "public"), filepath.Join(t.TempDir(), "private")
	if code, _, stderr := runCLI(t, "export", "--src", src, "--out", out, "--private", priv); code != 0 {
		t.Fatalf("export: %d %s", code, stderr)
	}
	return out
}

func TestServeCommandUsage(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"serve"}, exitUsage, ""},
		{[]string{"serve", "--dir", filepath.Join(dir, "absent")}, exitUsage, ""},
		{[]string{"serve", "--print-config", "apache", "--dir", dir}, exitUsage, ""},
		{[]string{"serve", "--print-config", "nginx"}, exitUsage, ""},
		{[]string{"serve", "--print-config", "nginx", "--dir", dir, "--addr", "127.0.0.1:80; evil"}, exitUsage, ""},
		{[]string{"serve", "--print-config", "nginx", "--dir", dir, "--addr", "127.0.0.1:8080", "--sidecar", "127.0.0.1:8081"}, 0, "gzip_static on;"},
		{[]string{"serve", "--print-config", "caddy", "--dir", dir, "--addr", ":8080"}, 0, "precompressed br zstd gzip"},
		{[]string{"serve", "--print-config", "headers"}, 0, "Content-Type: application/json"},
		{[]string{"publish", "--from", dir}, exitUsage, ""},
		{[]string{"publish", "--from", dir, "--to", "file://" + dir, "--encoding", "zstd"}, exitUsage, ""},
		{[]string{"publish", "--from", dir, "--to", "nope://bucket"}, exitUsage, ""},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tc.args...)
			if code != tc.code || !strings.Contains(stdout, tc.out) {
				t.Fatalf("exit %d (want %d), stdout %.200q, stderr %q", code, tc.code, stdout, stderr)
			}
		})
	}
}

func TestServeCommand(t *testing.T) {
	out := exportedTree(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var stdout, stderr bytes.Buffer
	go func() {
		done <- run(ctx, []string{"guidepub", "serve", "--dir", out, "--addr", addr}, &stdout, &stderr)
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve ended with %v", err)
		}
	}()

	var view string
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			view = e.Name()
			break
		}
	}
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}, Timeout: 5 * time.Second}
	var resp *http.Response
	for start := time.Now(); time.Since(start) < 10*time.Second; time.Sleep(20 * time.Millisecond) {
		req, _ := http.NewRequest("GET", "http://"+addr+"/"+view+"/data/status", nil)
		req.Header.Set("Accept-Encoding", "gzip, br")
		if resp, err = client.Do(req); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("serve does not answer: %v\n%s", err, stderr.String())
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != "br" || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("status %d, headers %v", resp.StatusCode, resp.Header)
	}
}

func TestPublishCommand(t *testing.T) {
	out := exportedTree(t)
	bucket := t.TempDir()
	url := "file://" + bucket
	code, stdout, stderr := runCLI(t, "publish", "--from", out, "--to", url, "--dry-run")
	if code != 0 || !strings.Contains(stdout, "upload ") || !strings.Contains(stdout, "dry run:") {
		t.Fatalf("dry run: %d %q %q", code, stdout, stderr)
	}
	if entries, _ := os.ReadDir(bucket); len(entries) != 0 {
		t.Fatalf("dry run wrote %d entries", len(entries))
	}
	code, stdout, stderr = runCLI(t, "publish", "--from", out, "--to", url, "--encoding", "gzip", "--jobs", "2")
	if code != 0 || !strings.Contains(stdout, "published:") {
		t.Fatalf("publish: %d %q %q", code, stdout, stderr)
	}
	code, stdout, _ = runCLI(t, "publish", "--from", out, "--to", url, "--encoding", "gzip")
	if code != 0 || !strings.Contains(stdout, " 0 uploaded") {
		t.Fatalf("second publish: %d %q", code, stdout)
	}
	// Remove a view: --max-deletes 0 refuses, and nothing is deleted.
	entries, _ := os.ReadDir(out)
	var victim string
	for _, e := range entries {
		if e.IsDir() {
			victim = e.Name()
		}
	}
	if err := os.RemoveAll(filepath.Join(out, victim)); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runCLI(t, "publish", "--from", out, "--to", url, "--encoding", "gzip", "--max-deletes", "0")
	if code != exitFailure || !strings.Contains(stderr, "exceed the limit") {
		t.Fatalf("max-deletes 0: %d %q", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(bucket, victim)); err != nil {
		t.Fatalf("refused run deleted %s: %v", victim, err)
	}
}

// TestLimitMemory checks that serve bounds the Go runtime's memory to its
// cache budget plus serveHeadroom, and leaves a GOMEMLIMIT set by the
// operator alone.
func TestLimitMemory(t *testing.T) {
	old := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(old) })
	discard := slog.New(slog.DiscardHandler)

	debug.SetMemoryLimit(math.MaxInt64)
	t.Setenv("GOMEMLIMIT", "")
	limitMemory(32<<20, discard)
	if got, want := debug.SetMemoryLimit(-1), int64(32<<20+serveHeadroom); got != want {
		t.Errorf("memory limit %d, want %d", got, want)
	}

	debug.SetMemoryLimit(math.MaxInt64)
	t.Setenv("GOMEMLIMIT", "1GiB")
	limitMemory(32<<20, discard)
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("memory limit %d with GOMEMLIMIT set, want it untouched", got)
	}
}

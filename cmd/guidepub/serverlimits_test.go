package main

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"testing"
	"time"

	"github.com/guidepub/guidepub/fixtures"
)

// startCommand runs guidepub with args (listening on 127.0.0.1:0) in this
// process until the test ends, and returns the address it logged.
func startCommand(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stderr := &fixtures.SyncBuffer{}
	done := make(chan error, 1)
	limit := debug.SetMemoryLimit(-1) // the command sets its own; taken back at the end
	go func() { done <- run(ctx, append([]string{"guidepub"}, args...), io.Discard, stderr) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(45 * time.Second):
			t.Error("the command did not stop")
		}
		debug.SetMemoryLimit(limit)
	})
	addr := regexp.MustCompile(`"addr":"(?:http://)?(127\.0\.0\.1:\d+)"`)
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if m := addr.FindStringSubmatch(stderr.String()); m != nil {
			return m[1]
		}
		select {
		case err := <-done:
			t.Fatalf("guidepub %s ended: %v\n%s", args[0], err, stderr)
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatalf("guidepub %s logged no address:\n%s", args[0], stderr)
	return ""
}

// TestSlowClientIsCut: a POST to /oauth/token that trickles its body a
// byte every 2 s is cut at --read-timeout, by the sidecar and by serve,
// on a real listener; without a read timeout (as the sidecar had none)
// it stayed open as long as the client liked.
func TestSlowClientIsCut(t *testing.T) {
	const readTimeout = 3 * time.Second
	limits := []string{"--read-timeout", readTimeout.String(), "--read-header-timeout", "2s"}
	pub := t.TempDir()
	if err := os.MkdirAll(filepath.Join(pub, "v1"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range [][]string{
		{"sidecar", "--addr", "127.0.0.1:0", "--private", t.TempDir()},
		{"serve", "--addr", "127.0.0.1:0", "--dir", pub},
	} {
		t.Run(cmd[0], func(t *testing.T) {
			addr := startCommand(t, append(cmd, limits...)...)
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			start := time.Now()
			if _, err := io.WriteString(c, "POST /oauth/token HTTP/1.1\r\nHost: x\r\n"+
				"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 200\r\n\r\ngrant_type="); err != nil {
				t.Fatal(err)
			}
			closed := make(chan error, 1)
			go func() {
				_, err := io.Copy(io.Discard, c) // until the server closes
				closed <- err
			}()
			tick := time.NewTicker(2 * time.Second)
			defer tick.Stop()
			for {
				select {
				case err := <-closed:
					took := time.Since(start)
					if took > readTimeout+4*time.Second || (err != nil && !errors.Is(err, net.ErrClosed) && !isReset(err)) {
						t.Fatalf("connection closed after %v (%v), want about %v", took, err, readTimeout)
					}
					return
				case <-tick.C:
					if time.Since(start) > 5*readTimeout {
						t.Fatalf("a body trickled a byte every 2 s is still read after %v", time.Since(start))
					}
					c.Write([]byte("a"))
				}
			}
		})
	}
}

// isReset reports whether err is a connection reset: the server may close
// with unread bytes in its buffer.
func isReset(err error) bool {
	var op *net.OpError
	return errors.As(err, &op)
}

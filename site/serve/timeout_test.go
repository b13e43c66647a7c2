package serve

import (
	"bytes"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/spf13/afero"
)

// TestHTTPServerDropsStalledClients runs the server HTTPServer returns on a
// real socket and checks that a client that never sends its request, or
// sends it and never reads the response, loses its connection once the
// timeout has passed instead of holding it open.
func TestHTTPServerDropsStalledClients(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "v1", "doc"), 0o755); err != nil {
		t.Fatal(err)
	}
	// Large enough to fill the socket buffers of both ends.
	big := bytes.Repeat([]byte{0xA5}, 64<<20)
	if err := os.WriteFile(filepath.Join(dir, "v1", "doc", "photo.jpg"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	const timeout = 300 * time.Millisecond
	cfg := Config{NoWatch: true, MemoryLimit: -1, ReadHeaderTimeout: timeout, ReadTimeout: timeout, WriteTimeout: timeout, IdleTimeout: timeout}
	s, err := New(afero.NewOsFs(), dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })

	tests := []struct {
		name string
		send string // what the client writes before it stalls
	}{
		{"never sends", ""},
		{"sends half a header", "GET /v1/doc/photo.jpg HTTP/1.1\r\nHost: x\r\n"},
		{"never reads the response", "GET /v1/doc/photo.jpg HTTP/1.1\r\nHost: x\r\n\r\n"},
		{"idle after a response", "HEAD /v1/doc/photo.jpg HTTP/1.1\r\nHost: x\r\n\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			closed := make(chan struct{})
			hs := cfg.HTTPServer(s)
			hs.ConnState = func(_ net.Conn, st http.ConnState) {
				if st == http.StateClosed {
					close(closed)
				}
			}
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			go func() { _ = hs.Serve(l) }()
			t.Cleanup(func() { _ = hs.Close() })

			c, err := net.Dial("tcp", l.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if tcp, ok := c.(*net.TCPConn); ok {
				_ = tcp.SetReadBuffer(4096)
			}
			if tt.send != "" {
				if _, err := c.Write([]byte(tt.send)); err != nil {
					t.Fatal(err)
				}
			}
			select {
			case <-closed:
			case <-time.After(20 * timeout):
				t.Fatalf("connection still open %v after the client stalled (timeouts %v)", 20*timeout, timeout)
			}
		})
	}
}

// TestHTTPServerDefaults checks that a zero Config gets every timeout and
// a negative one turns a limit off.
func TestHTTPServerDefaults(t *testing.T) {
	hs := Config{}.HTTPServer(http.NotFoundHandler())
	for name, got := range map[string]time.Duration{
		"ReadHeaderTimeout": hs.ReadHeaderTimeout, "ReadTimeout": hs.ReadTimeout,
		"WriteTimeout": hs.WriteTimeout, "IdleTimeout": hs.IdleTimeout,
	} {
		if got <= 0 || got >= 65*time.Second {
			t.Errorf("%s = %v, want a limit under 65s", name, got)
		}
	}
	if got := (Config{WriteTimeout: -1}).HTTPServer(nil).WriteTimeout; got != 0 {
		t.Errorf("WriteTimeout -1 gives %v, want 0 (no limit)", got)
	}
}

package serve

import (
	"bytes"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/site/config"
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
	cfg := Config{NoWatch: true, ReadHeaderTimeout: timeout, ReadTimeout: timeout, WriteTimeout: timeout, IdleTimeout: timeout}
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

// TestHTTPServerDefaults checks that DefaultConfig limits every phase of
// a connection, that zero means no limit, and that Validate refuses a
// negative one.
func TestHTTPServerDefaults(t *testing.T) {
	def := DefaultConfig().HTTPServer(http.NotFoundHandler())
	zero := Config{}.HTTPServer(http.NotFoundHandler())
	for name, got := range map[string][2]time.Duration{
		"ReadHeaderTimeout": {def.ReadHeaderTimeout, zero.ReadHeaderTimeout}, "ReadTimeout": {def.ReadTimeout, zero.ReadTimeout},
		"WriteTimeout": {def.WriteTimeout, zero.WriteTimeout}, "IdleTimeout": {def.IdleTimeout, zero.IdleTimeout},
	} {
		if got[0] <= 0 || got[0] >= 65*time.Second {
			t.Errorf("default %s = %v, want a limit under 65s", name, got[0])
		}
		if got[1] != 0 {
			t.Errorf("zero %s gives %v, want 0 (no limit)", name, got[1])
		}
	}
	var fe *config.FieldError
	if err := (Config{WriteTimeout: -1}).Validate(); !errors.As(err, &fe) || fe.Field != "WriteTimeout" {
		t.Errorf("Validate with WriteTimeout -1: %v, want a WriteTimeout field error", err)
	}
}

package httpserver

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/guidepub/guidepub/site/config"
)

// bigFile writes size bytes to a file and returns its path.
func bigFile(t *testing.T, size int) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "photo.jpg")
	if err := os.WriteFile(p, bytes.Repeat([]byte{0xA5}, size), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// fileHandler serves the file at /file (http.ServeContent: the
// connection's ReadFrom, sendfile) and the same bytes from memory at /mem
// (one Write), and reads the request body at /body.
func fileHandler(t *testing.T, path string) http.Handler {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/file", func(w http.ResponseWriter, r *http.Request) {
		f, err := os.Open(path)
		if err != nil {
			t.Error(err)
			return
		}
		defer f.Close()
		http.ServeContent(w, r, "", time.Time{}, f)
	})
	mux.HandleFunc("/mem", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", fmt.Sprint(len(data)))
		w.Write(data)
	})
	mux.HandleFunc("/body", func(w http.ResponseWriter, r *http.Request) {
		n, err := io.Copy(io.Discard, r.Body)
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			w.WriteHeader(http.StatusRequestEntityTooLarge)
			return
		}
		fmt.Fprint(w, n)
	})
	return mux
}

// start serves hs on a loopback listener (with small send buffers) and
// returns its address and a channel closed when the first connection is
// closed.
func start(t *testing.T, hs *http.Server) (string, <-chan struct{}) {
	t.Helper()
	closed := make(chan struct{})
	var once sync.Once
	hs.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateClosed {
			once.Do(func() { close(closed) })
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = hs.Serve(smallSendBuffers{l}) }()
	t.Cleanup(func() { _ = hs.Close() })
	return l.Addr().String(), closed
}

// dialSmall connects with a small receive buffer, so a response fills the
// socket buffers of both ends quickly.
func dialSmall(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	if tcp, ok := c.(*net.TCPConn); ok {
		_ = tcp.SetReadBuffer(4096)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestStalledClientsAreCut runs a server on a real socket and checks that
// a client that never sends its request, sends half of it, trickles its
// body, never reads the response (from a file or from memory) or sits
// idle loses its connection once its limit has passed.
func TestStalledClientsAreCut(t *testing.T) {
	const timeout = 300 * time.Millisecond
	path := bigFile(t, 64<<20) // fills the socket buffers of both ends
	l := Limits{ReadHeaderTimeout: timeout, ReadTimeout: 2 * timeout, WriteTimeout: timeout, IdleTimeout: timeout, MaxBodyBytes: 1 << 20}
	for _, tc := range []struct {
		name    string
		send    string // what the client writes before it stalls
		trickle bool   // then a byte of body every timeout/2
	}{
		{"never sends", "", false},
		{"sends half a header", "GET /file HTTP/1.1\r\nHost: x\r\n", false},
		{"trickles its body", "POST /body HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n", true},
		{"never reads a file", "GET /file HTTP/1.1\r\nHost: x\r\n\r\n", false},
		{"never reads from memory", "GET /mem HTTP/1.1\r\nHost: x\r\n\r\n", false},
		{"idle after a response", "HEAD /file HTTP/1.1\r\nHost: x\r\n\r\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, closed := start(t, l.Server(fileHandler(t, path)))
			c := dialSmall(t, addr)
			if _, err := io.WriteString(c, tc.send); err != nil {
				t.Fatal(err)
			}
			tick := time.NewTicker(timeout / 2)
			defer tick.Stop()
			deadline := time.After(20 * timeout)
			for {
				select {
				case <-closed:
					return
				case <-tick.C:
					if tc.trickle {
						c.Write([]byte("a"))
					}
				case <-deadline:
					t.Fatalf("connection still open %v after the client stalled (limits %v)", 20*timeout, timeout)
				}
			}
		})
	}
}

// download reads the body of path from addr with small socket buffers,
// taking step bytes every pause, and returns how many body bytes it got
// and the read error.
func download(t *testing.T, addr, path string, step int, pause time.Duration) (int64, error) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.(*net.TCPConn).SetReadBuffer(32 << 10)
	if _, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", path); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReaderSize(c, 4096), nil)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var got int64
	for {
		n, err := io.CopyN(io.Discard, resp.Body, int64(step))
		got += n
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			return got, err
		}
		time.Sleep(pause)
	}
}

// smallSendBuffers accepts connections with a small send buffer, so that
// the kernel does not take a whole response off the server's hands.
type smallSendBuffers struct{ net.Listener }

func (l smallSendBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tcp, ok := c.(*net.TCPConn); ok {
		_ = tcp.SetWriteBuffer(32 << 10)
	}
	return c, err
}

// TestSlowDownloadIsNotCut: a client that takes a 4 MiB file at 256 KiB
// every 100 ms needs 1.6 s, past the 1 s WriteTimeout: it gets the whole
// file, from disk and from memory, because the deadline follows its
// progress. The stock http.Server.WriteTimeout (one deadline for the
// whole response, what serve had) cuts the same download.
func TestSlowDownloadIsNotCut(t *testing.T) {
	const size, timeout = 4 << 20, time.Second
	path := bigFile(t, size)
	l := Limits{WriteTimeout: timeout}
	addr, _ := start(t, l.Server(fileHandler(t, path)))
	for _, p := range []string{"/file", "/mem"} {
		got, err := download(t, addr, p, WriteChunk, 100*time.Millisecond)
		if err != nil || got < size {
			t.Errorf("%s: got %d bytes (%v), want the whole response (over %d)", p, got, err, size)
		}
	}
	stock := &http.Server{Handler: fileHandler(t, path), WriteTimeout: timeout}
	addr, _ = start(t, stock)
	if got, _ := download(t, addr, "/file", WriteChunk, 100*time.Millisecond); got >= size {
		t.Errorf("the stock WriteTimeout let the slow download finish (%d bytes): the test shows nothing", got)
	}
}

// TestBodyLimit: a request announcing a body over MaxBodyBytes is answered
// 413 unread; a chunked one fails to read past the limit; one within it
// is read whole.
func TestBodyLimit(t *testing.T) {
	l := Limits{MaxBodyBytes: 1000}
	addr, _ := start(t, l.Server(fileHandler(t, bigFile(t, 10))))
	for _, tc := range []struct {
		name   string
		size   int
		length int64 // -1: chunked
		want   int
	}{
		{"within", 1000, 1000, 200},
		{"announced over", 1001, 1001, 413},
		{"chunked over", 5000, -1, 413},
	} {
		req, _ := http.NewRequest("POST", "http://"+addr+"/body", io.MultiReader(strings.NewReader(strings.Repeat("a", tc.size))))
		req.ContentLength = tc.length
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s: status %d %s, want %d", tc.name, resp.StatusCode, body, tc.want)
		}
		if tc.length > 1000 && !strings.Contains(string(body), `"code":"invalid_argument"`) {
			t.Errorf("%s: body %s, want a JSON error", tc.name, body)
		}
	}
}

// TestDefaults checks that Default limits every phase of a connection
// and the body, that zero means no limit, and that Validate refuses a
// negative value.
func TestDefaults(t *testing.T) {
	def := Default()
	for name, v := range map[string]time.Duration{
		"ReadHeaderTimeout": def.ReadHeaderTimeout, "ReadTimeout": def.ReadTimeout,
		"WriteTimeout": def.WriteTimeout, "IdleTimeout": def.IdleTimeout,
	} {
		if v <= 0 || v >= 65*time.Second {
			t.Errorf("default %s = %v, want a limit under 65s", name, v)
		}
	}
	if def.MaxBodyBytes <= 0 || def.MaxBodyBytes > 8<<20 {
		t.Errorf("default MaxBodyBytes = %d, want a limit", def.MaxBodyBytes)
	}
	hs := def.Server(http.NotFoundHandler())
	if hs.ReadHeaderTimeout != def.ReadHeaderTimeout || hs.ReadTimeout != def.ReadTimeout || hs.IdleTimeout != def.IdleTimeout ||
		hs.MaxHeaderBytes != MaxHeaderBytes || hs.WriteTimeout != 0 {
		t.Errorf("server %+v does not carry the limits", hs)
	}
	zero := Limits{}.Server(http.NotFoundHandler())
	if zero.ReadHeaderTimeout != 0 || zero.ReadTimeout != 0 || zero.IdleTimeout != 0 {
		t.Error("zero limits give a limit")
	}
	var fe *config.FieldError
	if err := (Limits{WriteTimeout: -1}).Validate(); !errors.As(err, &fe) || fe.Field != "WriteTimeout" {
		t.Errorf("Validate with WriteTimeout -1: %v, want a WriteTimeout field error", err)
	}
	if err := Default().Validate(); err != nil {
		t.Errorf("Validate(Default()): %v", err)
	}
}

// Package httpserver is the one home of the limits of every HTTP server
// guidepub starts (sidecar, serve, dev, the metrics listener of watch):
// how long a client may take to send its request headers and its whole
// request, how long a response may wait for the client to take it, how
// long a connection may sit idle, and how large a request body may be.
// Commands read them from the same flags (docs/cli.md) and build their
// *http.Server with Limits.Server; docs/serving.md explains each limit.
package httpserver

import (
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/guidepub/guidepub/site/config"
)

// Defaults of Limits, as Default sets them.
const (
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultReadTimeout       = 30 * time.Second
	DefaultWriteTimeout      = 30 * time.Second
	DefaultIdleTimeout       = 60 * time.Second
	DefaultMaxBodyBytes      = 1 << 20
)

// MaxHeaderBytes bounds the request line and headers of every request.
const MaxHeaderBytes = 64 << 10

// WriteChunk is the part of a response that must be taken within
// WriteTimeout: the write deadline moves on with every WriteChunk bytes a
// client takes, so a slow but steady download of a large file is never
// cut (a client must take at least WriteChunk per WriteTimeout: 8.7 KB/s
// at the default 30 s), while one that stops reading is.
const WriteChunk = 256 << 10

// Limits are the time and size limits of a server. Start from Default: in
// every field zero means no limit, never "the default".
type Limits struct {
	// ReadHeaderTimeout bounds the time to send the request line and
	// headers.
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds the time to send the whole request, body
	// included, from the connection's first byte: a body trickled a byte
	// at a time is cut at it.
	ReadTimeout time.Duration
	// WriteTimeout bounds how long each WriteChunk of a response may wait
	// for the client to take it: not the whole response, which may take
	// as long as a legitimate slow download of a large file takes (as
	// nginx's send_timeout, which bounds the time between two writes).
	WriteTimeout time.Duration
	// IdleTimeout bounds the wait for the next request on a keep-alive
	// connection.
	IdleTimeout time.Duration
	// MaxBodyBytes bounds a request body: a request that announces a
	// larger one is answered 413 unread; a larger chunked body fails to
	// read past it.
	MaxBodyBytes int64
}

// Default returns the limits every command starts from.
func Default() Limits {
	return Limits{
		ReadHeaderTimeout: DefaultReadHeaderTimeout,
		ReadTimeout:       DefaultReadTimeout,
		WriteTimeout:      DefaultWriteTimeout,
		IdleTimeout:       DefaultIdleTimeout,
		MaxBodyBytes:      DefaultMaxBodyBytes,
	}
}

// Validate returns one *config.FieldError per field that is negative
// (joined), or nil.
func (l Limits) Validate() error {
	var p config.Problems
	for _, t := range []struct {
		name string
		v    time.Duration
	}{
		{"ReadHeaderTimeout", l.ReadHeaderTimeout}, {"ReadTimeout", l.ReadTimeout},
		{"WriteTimeout", l.WriteTimeout}, {"IdleTimeout", l.IdleTimeout},
	} {
		p.Add(t.v >= 0, t.name, "must not be negative, got %s", t.v)
	}
	p.Add(l.MaxBodyBytes >= 0, "MaxBodyBytes", "must not be negative, got %d", l.MaxBodyBytes)
	return p.Err()
}

// Server returns an *http.Server that serves h within l. The server's own
// WriteTimeout is left at zero: the handler moves the write deadline on
// as the response is taken (see WriteChunk).
func (l Limits) Server(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           l.Handler(h),
		ReadHeaderTimeout: l.ReadHeaderTimeout,
		ReadTimeout:       l.ReadTimeout,
		IdleTimeout:       l.IdleTimeout,
		MaxHeaderBytes:    MaxHeaderBytes,
	}
}

// Handler wraps h with the body limit and the write deadline of l; Server
// applies it.
func (l Limits) Handler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if l.MaxBodyBytes > 0 {
			if r.ContentLength > l.MaxBodyBytes {
				tooLarge(w, l.MaxBodyBytes)
				return
			}
			r.Body = http.MaxBytesReader(w, r.Body, l.MaxBodyBytes)
		}
		if l.WriteTimeout > 0 {
			pw := &progressWriter{ResponseWriter: w, rc: http.NewResponseController(w), timeout: l.WriteTimeout}
			// The response's end (the last buffered bytes) is written
			// after h returns, within its own WriteTimeout.
			defer pw.extend()
			w = pw
		}
		h.ServeHTTP(w, r)
	})
}

// tooLarge answers a request whose announced body is over limit, with the
// sidecar's error body.
func tooLarge(w http.ResponseWriter, limit int64) {
	body := `{"code":"invalid_argument","message":"the request body is over ` + strconv.FormatInt(limit, 10) + ` bytes"}` + "\n"
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Connection", "close")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusRequestEntityTooLarge)
	io.WriteString(w, body)
}

package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/lmittmann/tint"
	"golang.org/x/term"
)

// devLog is dev's terminal: its log lines on stderr and its messages and
// banner on stdout go through one lock, so that no log line cuts the
// banner, and it knows when the last log line was written, so that the
// banner waits for the start's lines to end and comes last.
type devLog struct {
	mu        sync.Mutex
	lastLog   time.Time
	out, errw io.Writer
}

// newDevLog returns the devLog of the writers stdout and stderr.
func newDevLog(stdout, stderr io.Writer) *devLog { return &devLog{out: stdout, errw: stderr} }

// lockedWriter writes to w under l's lock; log marks log lines.
type lockedWriter struct {
	l   *devLog
	w   io.Writer
	log bool
}

func (lw lockedWriter) Write(p []byte) (int, error) {
	lw.l.mu.Lock()
	defer lw.l.mu.Unlock()
	if lw.log {
		lw.l.lastLog = time.Now()
	}
	return lw.w.Write(p)
}

// stdout is dev's standard output; each Write is whole on the terminal.
func (l *devLog) stdout() io.Writer { return lockedWriter{l: l, w: l.out} }

// stderr is dev's standard error: log lines and rejected bundles' problems.
func (l *devLog) stderr() io.Writer { return lockedWriter{l: l, w: l.errw, log: true} }

// waitQuiet returns once no log line was written for quiet, or after max,
// or when ctx is done.
func (l *devLog) waitQuiet(ctx context.Context, quiet, max time.Duration) {
	deadline := time.Now().Add(max)
	for time.Now().Before(deadline) {
		l.mu.Lock()
		since := time.Since(l.lastLog)
		l.mu.Unlock()
		if since >= quiet {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(quiet - since):
		}
	}
}

// Dev's log formats (--log-format).
const (
	devLogText = "text"
	devLogJSON = "json"
)

// logger returns dev's logger in format: short human lines (tint: time,
// level, message, attributes; in colour on a terminal) or JSON lines, as
// the other commands write them.
func (l *devLog) logger(format string) (*slog.Logger, error) {
	switch format {
	case devLogJSON:
		return newLogger(l.stderr(), slog.LevelInfo), nil
	case devLogText:
		return slog.New(tint.NewTextHandler(l.stderr(), &tint.Options{
			Level: slog.LevelInfo, TimeFormat: time.TimeOnly, NoColor: !isTerminal(l.errw),
			ReplaceAttr: shortDevAttr,
		})), nil
	}
	return nil, usagef("--log-format %q: want %s or %s", format, devLogText, devLogJSON)
}

// shortDevAttr leaves out of dev's human lines the attributes a person
// trying guidepub does not read: webhook message ids (the receiver shows
// the signature check instead) and the remote address of requests.
func shortDevAttr(_ []string, a slog.Attr) slog.Attr {
	switch a.Key {
	case "webhook_id", "webhook-id", "remote":
		return slog.Attr{}
	}
	return a
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// logRequests wraps h with one log line per request, for dev's
// --log-requests (the sidecar's own requests log themselves).
func logRequests(h http.Handler, logger *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(sw, r)
		logger.Info("request", "method", r.Method, "path", r.URL.Path, "status", sw.status,
			"bytes", sw.bytes, "duration", time.Since(start))
	})
}

// statusRecorder remembers a response's status and size.
type statusRecorder struct {
	http.ResponseWriter
	status int
	bytes  int64
	wrote  bool
}

func (s *statusRecorder) WriteHeader(code int) {
	if !s.wrote {
		s.status, s.wrote = code, true
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(p []byte) (int, error) {
	s.wrote = true
	n, err := s.ResponseWriter.Write(p)
	s.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the connection (the static
// server's read and write deadlines).
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

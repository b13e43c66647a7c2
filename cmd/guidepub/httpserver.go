package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"syscall"
	"time"

	"github.com/guidepub/guidepub/site/httpserver"
)

// shutdownTimeout bounds a graceful shutdown: in-flight requests and
// webhook sends get this long to finish.
const shutdownTimeout = 40 * time.Second

// serveHTTP serves h on ln within limits (the --read-timeout... flags,
// see serverFlags) until ctx is done or serving fails, then shuts the
// server down gracefully (at most shutdownTimeout) and calls each cleanup
// with the shutdown's context. It is the one HTTP server of serve,
// sidecar, dev and the metrics listener. It returns the first error of
// serving, shutting down or cleaning up; nil after a graceful shutdown.
func serveHTTP(ctx context.Context, ln net.Listener, h http.Handler, limits httpserver.Limits, logger *slog.Logger, cleanup ...func(context.Context) error) error {
	hs := limits.Server(h)
	// "OPTIONS *" reaches the handler (a JSON 404 from the sidecar) instead
	// of net/http's empty 200.
	hs.DisableGeneralOptionsHandler = true
	hs.ErrorLog = slog.NewLogLogger(logger.Handler(), slog.LevelWarn)
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	var err error
	select {
	case serr := <-served: // Serve failed before any shutdown
		err = fmt.Errorf("serve: %w", serr)
	case <-ctx.Done():
	}
	logger.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if serr := hs.Shutdown(sctx); serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, fmt.Errorf("shutdown: %w", serr))
	}
	for _, f := range cleanup {
		err = errors.Join(err, f(sctx))
	}
	return err
}

// listen listens on addr, the --addr of serve, sidecar or dev. When
// another process has the address, its error says how to choose another:
// --addr or GUIDEPUB_ADDR, and for dev, which make run starts, make run's
// ADDR.
func listen(addr string, dev bool) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err == nil {
		return ln, nil
	}
	if !errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("listen: %w", err)
	}
	other := "127.0.0.1:8090"
	if host, port, serr := net.SplitHostPort(addr); serr == nil {
		if p, perr := strconv.Atoi(port); perr == nil && p > 0 && p < 65526 {
			other = net.JoinHostPort(host, strconv.Itoa(p+10))
		}
	}
	how := "--addr " + other + " (or GUIDEPUB_ADDR=" + other + ")"
	if dev {
		how += ", or with make: make run ADDR=" + other
	}
	return nil, fmt.Errorf("%w: another process listens there; stop it, or choose another address: %s", err, how)
}

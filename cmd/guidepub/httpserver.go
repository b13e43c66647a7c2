package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
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

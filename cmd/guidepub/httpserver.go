package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// shutdownTimeout bounds a graceful shutdown: in-flight requests and
// webhook sends get this long to finish.
const shutdownTimeout = 40 * time.Second

// serveHTTP serves h on ln until ctx is done or serving fails, then shuts
// the server down gracefully (at most shutdownTimeout) and calls each
// cleanup with the shutdown's context. It is the one HTTP server of
// serve, sidecar and dev. It returns the first error of serving, shutting
// down or cleaning up; nil after a graceful shutdown.
func serveHTTP(ctx context.Context, ln net.Listener, h http.Handler, logger *slog.Logger, cleanup ...func(context.Context) error) error {
	hs := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
	return serveHTTPServer(ctx, ln, hs, logger, cleanup...)
}

// serveHTTPServer is serveHTTP with the server's timeouts given (serve's
// come from its configuration, see docs/serving.md).
func serveHTTPServer(ctx context.Context, ln net.Listener, hs *http.Server, logger *slog.Logger, cleanup ...func(context.Context) error) error {
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

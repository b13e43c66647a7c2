package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/afero"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/guidepub/guidepub/exporter/publish"
	"github.com/guidepub/guidepub/site/serve"
)

// serveCommand returns the "serve" command: the public tree served as a
// CDN would, or the same rules printed for nginx, Caddy or a _headers host.
func serveCommand() *cli.Command {
	return &cli.Command{
		Name:  "serve",
		Usage: "serve an exported public tree (--dir) like a CDN, or print the same rules for nginx, Caddy or _headers",
		Description: `Serves each document's .br, .zst, .gz sibling or the identity file by
Accept-Encoding, with Content-Type, Vary, a strong ETag per encoding,
Cache-Control and nosniff; answers 304, HEAD and ranges; unknown paths get a
JSON 404. Documents are held in memory and reloaded when the tree changes.

With --print-config nginx|caddy|headers it writes the same rules for another
web server to standard output and exits; --sidecar adds the routes that send
/api/ and /private/ to the sidecar.

Examples:
   guidepub serve --dir public --addr 127.0.0.1:8080
   curl -H 'Accept-Encoding: br' http://127.0.0.1:8080/<viewId>/data/summary --compressed
   guidepub serve --dir /srv/guidepub/public --print-config nginx --sidecar 127.0.0.1:9090 > guidepub.conf`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "dir", Usage: "exported public tree (the export's --out)", EnvVars: envVars("dir")},
			&cli.StringFlag{Name: "addr", Value: "127.0.0.1:8080", Usage: "listen address host:port", EnvVars: envVars("addr")},
			&cli.StringFlag{Name: "print-config", Usage: "print a configuration instead of serving: " + strings.Join(serve.ConfigKinds, ", ")},
			&cli.StringFlag{Name: "sidecar", Usage: "with --print-config: host:port of the sidecar for /api/ and /private/", EnvVars: envVars("sidecar")},
			&cli.Int64Flag{Name: "memory-limit", Value: serve.DefaultMemoryLimit, EnvVars: envVars("memory-limit"),
				Usage: "media files up to this many bytes are held in memory; larger ones stream from disk"},
		},
		Action: func(c *cli.Context) error {
			dir := c.String("dir")
			if kind := c.String("print-config"); kind != "" {
				if !slices.Contains(serve.ConfigKinds, kind) {
					return usagef("--print-config: want one of %s", strings.Join(serve.ConfigKinds, ", "))
				}
				if dir == "" && kind != "headers" {
					return usagef("--dir is required")
				}
				if dir != "" {
					dir = cleanAbs(dir)
				}
				err := serve.WriteConfig(c.App.Writer, kind, serve.ConfigOptions{Dir: dir, Listen: c.String("addr"), Sidecar: c.String("sidecar")})
				if err != nil {
					return usagef("%v", err)
				}
				return nil
			}
			if dir == "" {
				return usagef("--dir is required")
			}
			if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
				return usagef("--dir %s is not a folder", dir)
			}
			logger := slog.New(slog.NewTextHandler(c.App.ErrWriter, nil))
			srv, err := serve.New(afero.NewOsFs(), dir, serve.Config{Logger: logger, MemoryLimit: c.Int64("memory-limit")})
			if err != nil {
				return cli.Exit(err.Error(), exitFailure)
			}
			defer srv.Close()
			l, err := net.Listen("tcp", c.String("addr"))
			if err != nil {
				return cli.Exit(fmt.Sprintf("listen: %v", err), exitFailure)
			}
			logger.Info("serving", "dir", dir, "addr", "http://"+l.Addr().String(), "files", srv.Files())
			return serveUntilDone(c.Context, l, srv, logger)
		},
	}
}

// serveUntilDone serves h on l until ctx is done, then shuts down
// gracefully, giving open requests 10 seconds. It returns the server's
// error, nil after a graceful shutdown.
func serveUntilDone(ctx context.Context, l net.Listener, h http.Handler, logger *slog.Logger) error {
	hs := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(l) }()
	select {
	case err := <-errc:
		return cli.Exit(fmt.Sprintf("serve: %v", err), exitFailure)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := hs.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return cli.Exit(fmt.Sprintf("shutdown: %v", err), exitFailure)
	}
	logger.Info("stopped")
	return nil
}

// publishCommand returns the "publish" command: upload the public tree to
// object storage.
func publishCommand() *cli.Command {
	return &cli.Command{
		Name:  "publish",
		Usage: "upload an exported public tree (--from) to object storage (--to s3://…, gs://…, azblob://…, file://…)",
		Description: `Uploads every file of the tree with its Content-Type and Cache-Control. Object
stores do not negotiate encodings: with --encoding gzip or br the document
keys hold the compressed bytes with Content-Encoding set; media are always
uploaded as they are. Unchanged objects are skipped (content hash); media go
up first, then summaries and autofill documents, then statuses, and stale
objects are deleted last (at most --max-deletes, else nothing is deleted).
A failed run leaves readers a consistent tree; running it again completes it.

Credentials come from the store's usual environment (AWS_ACCESS_KEY_ID…,
GOOGLE_APPLICATION_CREDENTIALS, AZURE_STORAGE_ACCOUNT…). An S3-compatible
server: s3://bucket?endpoint=http://host:port&use_path_style=true&disable_https=true&region=us-east-1

Examples:
   guidepub publish --from public --to 's3://my-bucket?region=eu-west-1' --encoding br --dry-run
   guidepub publish --from public --to 's3://my-bucket?region=eu-west-1' --encoding br
   guidepub publish --from public --to gs://my-bucket --prefix site/`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "from", Usage: "exported public tree (the export's --out)", EnvVars: envVars("from")},
			&cli.StringFlag{Name: "to", Usage: "bucket URL", EnvVars: envVars("to")},
			&cli.StringFlag{Name: "prefix", Usage: "key prefix inside the bucket, e.g. site/ (stale objects are looked for under it only)", EnvVars: envVars("prefix")},
			&cli.StringFlag{Name: "encoding", Value: "identity", Usage: "document bytes to upload: identity, gzip or br", EnvVars: envVars("encoding")},
			&cli.IntFlag{Name: "jobs", Value: publish.DefaultJobs, Usage: "uploads at once", EnvVars: envVars("publish-jobs")},
			&cli.IntFlag{Name: "max-deletes", Value: publish.DefaultMaxDeletes, Usage: "refuse (and delete nothing) when more stale objects than this would go", EnvVars: envVars("max-deletes")},
			&cli.BoolFlag{Name: "dry-run", Usage: "list what would change, change nothing", EnvVars: envVars("dry-run")},
			&cli.BoolFlag{Name: "force", Usage: "upload every object even when its bytes are unchanged (after a change of headers)", EnvVars: envVars("force")},
		},
		Action: func(c *cli.Context) error {
			from, to := c.String("from"), c.String("to")
			if from == "" || to == "" {
				return usagef("--from and --to are required")
			}
			if fi, err := os.Stat(from); err != nil || !fi.IsDir() {
				return usagef("--from %s is not a folder", from)
			}
			enc, err := publish.ParseEncoding(c.String("encoding"))
			if err != nil {
				return usagef("--encoding: %v", err)
			}
			if c.Int("jobs") < 1 {
				return usagef("--jobs must be at least 1")
			}
			if c.Int("max-deletes") < 0 {
				return usagef("--max-deletes must not be negative")
			}
			bucket, err := publish.OpenBucket(c.Context, to)
			if err != nil {
				return usagef("--to: %v", err)
			}
			defer bucket.Close()
			maxDeletes := c.Int("max-deletes")
			if maxDeletes == 0 {
				maxDeletes = -1 // Config's zero value means the default
			}
			cfg := publish.Config{
				From: afero.NewOsFs(), FromDir: filepath.Clean(from),
				Bucket: bucket, Prefix: c.String("prefix"),
				Encoding: enc, Jobs: c.Int("jobs"), MaxDeletes: maxDeletes,
				DryRun: c.Bool("dry-run"), Force: c.Bool("force"),
				Logger: slog.New(slog.NewTextHandler(c.App.ErrWriter, &slog.HandlerOptions{Level: slog.LevelWarn})),
			}
			if f, ok := c.App.ErrWriter.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
				cfg.Progress = c.App.ErrWriter
			}
			if cfg.DryRun {
				cfg.Plan = c.App.Writer
			}
			rep, err := publish.Publish(c.Context, cfg)
			if rep != nil {
				fmt.Fprintln(c.App.Writer, rep.Summary())
			}
			if err != nil {
				return cli.Exit(fmt.Sprintf("publish: %v", err), exitFailure)
			}
			return nil
		},
	}
}

package main

import (
	"log/slog"
	"os"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/spf13/afero"
	"github.com/urfave/cli/v2"

	"github.com/guidepub/guidepub/site/httpserver"
	"github.com/guidepub/guidepub/site/serve"
)

// serveCommand returns the "serve" command: the public tree served as a
// CDN would, or the same rules printed for nginx, Caddy or a _headers host.
func (e *env) serveCommand() *cli.Command {
	return &cli.Command{
		Name:  "serve",
		Usage: "serve an exported public tree (--dir) like a CDN, or print the same rules for nginx, Caddy or _headers",
		Description: `Serves each document's .br, .zst, .gz sibling or the identity file by
Accept-Encoding, with Content-Type, Vary, a strong ETag per encoding,
Cache-Control and nosniff; answers 304, HEAD and ranges. An unknown path gets
a 404: the HTML 404 page for a browser (a request whose Accept names
text/html), a JSON body for anything else. Nothing is read at start: documents and small files are cached
within --cache-bytes as they are asked for, larger media stream from disk,
and a change of the tree drops what it touched from the cache.

Every answer for a path of a view (its documents, pages, media, and the
404 of a missing file under it) names the view's surrogate key,
guidepub-<id>, in xkey (Varnish), Surrogate-Key (Fastly) and Cache-Tag
(Cloudflare), so that a purge by key takes them all out of a CDN.
--edge-ttl lets the CDN keep them longer than browsers do.

With --print-config nginx|caddy|headers it writes the same rules for another
web server to standard output and exits; --sidecar adds the routes that send
/api/ and /private/ to the sidecar. --print-config varnish writes a VCL for
Varnish (with the xkey vmod) in front of guidepub serve at --addr: files kept
--edge-ttl (a day when 0), purges by key from --purge-acl.

Examples:
   guidepub serve --dir public --addr 127.0.0.1:8080
   curl -H 'Accept-Encoding: br' http://127.0.0.1:8080/<viewId>/data/summary --compressed
   guidepub serve --dir /srv/guidepub/public --print-config nginx --sidecar 127.0.0.1:9090 > guidepub.conf
   guidepub serve --addr 127.0.0.1:8080 --edge-ttl 24h --print-config varnish > /etc/varnish/default.vcl`,
		Flags:  flags(serveFlags(), addrFlag("127.0.0.1:8080"), printConfigFlags(), serverFlags(httpserver.Default())),
		Action: e.runServe,
	}
}

// runServe is the "serve" command.
func (e *env) runServe(c *cli.Context) error {
	dir := c.String("dir")
	if kind := c.String("print-config"); kind != "" {
		return e.printServeConfig(c, kind, dir)
	}
	if dir == "" {
		return usagef("--dir is required")
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return usagef("--dir %s is not a folder", dir)
	}
	cfg := serve.DefaultConfig()
	cfg.CacheBytes, cfg.SmallFileLimit = c.Int64("cache-bytes"), c.Int64("small-file-limit")
	cfg.Poll, cfg.EdgeTTL = c.Duration("poll"), c.Duration("edge-ttl")
	if err := validConfig(cfg.Validate()); err != nil {
		return err
	}
	limits, err := readServerLimits(c)
	if err != nil {
		return err
	}
	logger := newLogger(e.stderr, slog.LevelInfo)
	cfg.Logger = logger
	limitMemory(cfg.CacheBytes, logger)
	srv, err := serve.New(afero.NewOsFs(), dir, cfg)
	if err != nil {
		return err
	}
	defer srv.Close()
	l, err := listen(c.String("addr"), false)
	if err != nil {
		return err
	}
	logger.Info("serving", "dir", dir, "addr", "http://"+l.Addr().String(), "cacheBytes", cfg.CacheBytes)
	// Read, write and idle limits: a client that stops sending or reading
	// cannot hold a connection (docs/serving.md#connection-limits).
	return serveHTTP(c.Context, l, srv, limits, logger)
}

// serveHeadroom is the memory "serve" allows itself beyond its cache: the
// watches, connections and the garbage of the requests in flight.
const serveHeadroom = 64 << 20

// limitMemory sets the Go runtime's soft memory limit to the cache budget
// plus serveHeadroom, unless GOMEMLIMIT is set. Without it the garbage
// collector lets the heap grow to twice what is live, so a full 64 MiB
// cache would take about three times its budget (see docs/serving.md).
func limitMemory(cacheBytes int64, logger *slog.Logger) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	limit := cacheBytes + serveHeadroom
	debug.SetMemoryLimit(limit)
	logger.Debug("memory limit", "bytes", limit)
}

// printServeConfig writes the web-server configuration kind for dir.
func (e *env) printServeConfig(c *cli.Context, kind, dir string) error {
	if !slices.Contains(serve.ConfigKinds, kind) {
		return usagef("--print-config: want one of %s", strings.Join(serve.ConfigKinds, ", "))
	}
	if dir == "" && kind != "headers" && kind != "varnish" {
		return usagef("--dir is required")
	}
	if dir != "" {
		dir = cleanAbs(dir)
	}
	if c.Duration("edge-ttl") < 0 {
		return usagef("--edge-ttl must not be negative")
	}
	var acl []string
	for _, a := range c.StringSlice("purge-acl") {
		acl = append(acl, strings.Split(a, ",")...)
	}
	err := serve.WriteConfig(e.stdout, kind, serve.ConfigOptions{Dir: dir, Listen: c.String("addr"), Sidecar: c.String("sidecar"),
		EdgeTTL: c.Duration("edge-ttl"), PurgeACL: acl})
	if err != nil {
		return usagef("%v", err)
	}
	return nil
}

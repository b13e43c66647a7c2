package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/guidepub/guidepub/exporter"
	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/exporter/bundleschema"
	"github.com/guidepub/guidepub/exporter/publish"
	"github.com/guidepub/guidepub/exporter/watch"
	"github.com/guidepub/guidepub/sidecar"
	"github.com/guidepub/guidepub/sidecar/apitoken"
	"github.com/guidepub/guidepub/sidecar/delivery"
	"github.com/guidepub/guidepub/sidecar/oauth"
	"github.com/guidepub/guidepub/site"
	"github.com/guidepub/guidepub/site/config"
	"github.com/guidepub/guidepub/site/httpserver"
	"github.com/guidepub/guidepub/site/serve"
)

// Every flag of guidepub is declared once, here, as a function returning a
// fresh flag (urfave/cli flags keep parsed state, so commands never share
// one value). Commands compose these with flags(...). Defaults come from
// the packages' DefaultConfig; see docs/cli.md.

// flags concatenates groups of flags.
func flags(groups ...[]cli.Flag) []cli.Flag {
	var out []cli.Flag
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

func stringFlag(name, value, usage string) *cli.StringFlag {
	return &cli.StringFlag{Name: name, Value: value, Usage: usage, EnvVars: envVars(name)}
}

// Sources and trees.

func srcFlag() []cli.Flag {
	return []cli.Flag{stringFlag("src", "", "folder of bundles (<src>/<folder>/guide.json)")}
}

func treeFlags() []cli.Flag {
	return []cli.Flag{
		stringFlag("out", "", "public tree to write (served as is by a CDN)"),
		stringFlag("private", "", "private tree written by export (records, events, private documents; never published): "+
			"a folder, or a bucket URL (s3://, gs://, azblob://, file://) kept from a local cache in --work-dir"),
		workDirFlag(),
	}
}

func privateFlag() []cli.Flag {
	return []cli.Flag{stringFlag("private", "", "private tree written by export (records, events, private documents; never published): a folder, or the bucket URL export mirrors it to (then --store is required)")}
}

// storeFlag is --store; where it defaults to depends on the command (see
// each command's storeDSN).
func storeFlag() []cli.Flag {
	return []cli.Flag{stringFlag("store", "", "SQLite file or postgres:// URL of the sidecar's store "+
		"(sidecar, token: default "+defaultStoreFile+" inside --private; dev: inside --work-dir; "+
		"export, watch: none, and without it no ready event is queued)")}
}

func addrFlag(value string) []cli.Flag {
	return []cli.Flag{stringFlag("addr", value, "HOST:PORT to listen on (port 0 picks a free one)")}
}

// urlFlags are the URL settings of every command that renders or serves
// links. dev leaves them empty by default: its defaults are its own
// listening address.
func urlFlags(def exporter.Config) []cli.Flag {
	return flags(viewURLFlag(def), []cli.Flag{
		stringFlag("unbranded-url", def.UnbrandedURL, "public host of unbranded views"),
		stringFlag("embed-url", def.EmbedURL, "public path of embedded views (iframes)"),
	}, baseURLFlag(def))
}

func viewURLFlag(def exporter.Config) []cli.Flag {
	return []cli.Flag{stringFlag("view-url", def.ViewURL, "public host of views: {view_url}/<viewId>")}
}

func baseURLFlag(def exporter.Config) []cli.Flag {
	return []cli.Flag{stringFlag("base-url", def.BaseURL, "Portal host: manage links and the Portal API")}
}

// Export.

func exportFlags() []cli.Flag {
	def := exporter.DefaultConfig()
	return flags(srcFlag(), treeFlags(), []cli.Flag{
		stringFlag("encodings", site.FormatList(def.Encodings),
			"compressed siblings written beside each document: a comma-separated subset of br,zstd,gzip, or \"none\""),
		&cli.IntFlag{Name: "jobs", Value: def.Jobs, EnvVars: envVars("jobs"),
			Usage: "documents compressed at once (twice as many guides are read and written meanwhile)"},
		stringFlag("source-name", def.SourceName, "value of the autofill ...Source fields"),
	}, urlFlags(def), limitFlags())
}

func shardFlag() []cli.Flag {
	return []cli.Flag{stringFlag("shard", "", "export only shard i of n (i/n, such as 0/4) to split a full rebuild across machines")}
}

// eventFlags are what "export" and "watch" need to queue ready events.
func eventFlags() []cli.Flag {
	return flags(storeFlag(), signingKeyFlag())
}

func signingKeyFlag() []cli.Flag {
	return []cli.Flag{&cli.StringSliceFlag{Name: "signing-key", EnvVars: envVars("signing-key"),
		Usage: "base64 key (32+ bytes) signing private-document tokens; repeat or comma-separate to rotate: " +
			"the first signs, all verify (default: a key generated once and kept in the store)"}}
}

// limitFlags bound what one bundle may hold (docs/robustness.md); the
// defaults are bundle.DefaultLimits.
func limitFlags() []cli.Flag {
	d := bundle.DefaultLimits
	intFlag := func(name string, value int, usage string) cli.Flag {
		return &cli.IntFlag{Name: name, Value: value, EnvVars: envVars(name), Usage: usage}
	}
	return []cli.Flag{
		intFlag("max-views", d.Views, "views one bundle may hold"),
		intFlag("max-buildings", d.Buildings, "buildings one bundle may hold"),
		intFlag("max-floors", d.Floors, "floors one bundle may hold, all buildings together"),
		intFlag("max-rooms", d.Rooms, "rooms one bundle may hold, all floors together"),
		intFlag("max-wall-segments", d.WallSegments, "wall segments one bundle may hold, all rooms together"),
		intFlag("max-photos", d.Photos, "photos one bundle may hold"),
		intFlag("max-documents", d.Documents, "document files one bundle may name, all languages together"),
		intFlag("max-webhooks", d.Webhooks, "webhooks one bundle may hold"),
		intFlag("max-phones", d.Phones, "phone numbers one bundle's banner may hold"),
		intFlag("max-emails", d.Emails, "email addresses one bundle's banner may hold"),
		intFlag("max-social-links", d.SocialLinks, "social links one bundle's banner may hold"),
		intFlag("max-document-size", d.DocumentBytes, "bytes one file written for a bundle (document, view page, ready event, record...) may have"),
		intFlag("max-image-pixels", d.ImagePixels, "pixels (width × height) one image of a bundle may have"),
		intFlag("max-image-work", d.ImageWork, "millions of pixel passes (pixels × scans of a progressive JPEG) decoding one image may take"),
		intFlag("max-decode-memory", d.DecodeMemory, "MiB the image decodes and PDF rewrites of an export may take together; a file needing more is refused"),
	}
}

// readLimits reads limitFlags from c. A limit below 1 is bad usage: zero
// would read as "the default" in package bundle.
func readLimits(c *cli.Context) (bundle.Limits, error) {
	for _, f := range limitFlags() {
		if name := f.Names()[0]; c.Int(name) < 1 {
			return bundle.Limits{}, usagef("--%s must be at least 1, got %d", name, c.Int(name))
		}
	}
	return bundle.Limits{
		Views: c.Int("max-views"), Buildings: c.Int("max-buildings"), Floors: c.Int("max-floors"),
		Rooms: c.Int("max-rooms"), WallSegments: c.Int("max-wall-segments"), Photos: c.Int("max-photos"),
		Documents: c.Int("max-documents"), Webhooks: c.Int("max-webhooks"),
		Phones: c.Int("max-phones"), Emails: c.Int("max-emails"), SocialLinks: c.Int("max-social-links"),
		DocumentBytes: c.Int("max-document-size"), ImagePixels: c.Int("max-image-pixels"),
		ImageWork: c.Int("max-image-work"), DecodeMemory: c.Int("max-decode-memory"),
	}, nil
}

func validateFlags() []cli.Flag {
	return flags(srcFlag(), limitFlags(), []cli.Flag{
		&cli.BoolFlag{Name: "schema", EnvVars: envVars("schema"),
			Usage: "also check each guide.json against the shipped JSON Schema (" + bundleschema.FileName + ")"},
		&cli.BoolFlag{Name: "print-schema", Usage: "print the JSON Schema of guide.json and exit"},
	})
}

// Watch.

func watchFlags() []cli.Flag {
	def := watch.DefaultConfig()
	return []cli.Flag{
		&cli.DurationFlag{Name: "poll", Value: def.Poll, EnvVars: envVars("poll"),
			Usage: "scan --src at this interval instead of using file system events (for network mounts); " +
				"polling is also chosen, with a warning, when events cannot be set up"},
		&cli.DurationFlag{Name: "debounce", Value: def.Debounce, EnvVars: envVars("debounce"),
			Usage: "quiet period after the last change of a bundle before it is exported " +
				"(an upload that ends with a rename into place is exported at once)"},
		&cli.BoolFlag{Name: "quick", Value: true, EnvVars: envVars("quick"),
			Usage: "write a changed guide's compressed siblings with fast settings first, then again with the final ones " +
				"right after: served sooner; false writes the final bytes at once (fewer bucket uploads)"},
	}
}

// checkWatchFlags checks --debounce and --poll as the watcher will, so
// that watch and dev report a bad value before they start anything (open
// a store, create a folder, listen); watchAndExport checks the whole
// watcher configuration again.
func checkWatchFlags(c *cli.Context) error {
	wcfg := watch.DefaultConfig()
	wcfg.Debounce, wcfg.Poll = c.Duration("debounce"), c.Duration("poll")
	var p config.Problems
	for _, fe := range config.Fields(wcfg.Validate()) {
		if fe.Field == "Debounce" || fe.Field == "Poll" || fe.Field == "MaxWait" {
			p.Add(false, fe.Field, "%s", fe.Problem)
		}
	}
	return validConfig(p.Err())
}

// serverFlags are the limits of the HTTP server of serve, sidecar and dev
// (docs/serving.md#connection-limits); def gives their defaults.
func serverFlags(def httpserver.Limits) []cli.Flag {
	dur := func(name string, value time.Duration, usage string) cli.Flag {
		return &cli.DurationFlag{Name: name, Value: value, EnvVars: envVars(name), Usage: usage}
	}
	return []cli.Flag{
		dur("read-header-timeout", def.ReadHeaderTimeout, "time a client has to send its request line and headers; 0: no limit"),
		dur("read-timeout", def.ReadTimeout, "time a client has to send its whole request, body included; 0: no limit"),
		dur("write-timeout", def.WriteTimeout, fmt.Sprintf("time a client has to take each %d KiB of a response "+
			"(a slow but steady download is never cut); 0: no limit", httpserver.WriteChunk>>10)),
		dur("idle-timeout", def.IdleTimeout, "time a keep-alive connection may wait for its next request; 0: no limit"),
		&cli.Int64Flag{Name: "max-body-bytes", Value: def.MaxBodyBytes, EnvVars: envVars("max-body-bytes"),
			Usage: "largest request body, in bytes (413 beyond); 0: no limit"},
	}
}

// readServerLimits reads serverFlags from c. It returns a *usageError for
// a negative value.
func readServerLimits(c *cli.Context) (httpserver.Limits, error) {
	l := httpserver.Limits{
		ReadHeaderTimeout: c.Duration("read-header-timeout"), ReadTimeout: c.Duration("read-timeout"),
		WriteTimeout: c.Duration("write-timeout"), IdleTimeout: c.Duration("idle-timeout"),
		MaxBodyBytes: c.Int64("max-body-bytes"),
	}
	return l, validConfig(l.Validate())
}

// Serve and publish.

func serveFlags() []cli.Flag {
	def := serve.DefaultConfig()
	return []cli.Flag{
		stringFlag("dir", "", "exported public tree (the export's --out)"),
		&cli.Int64Flag{Name: "cache-bytes", Value: def.CacheBytes, EnvVars: envVars("cache-bytes"),
			Usage: "memory for the cache of documents and small files, in bytes; 0 caches nothing"},
		&cli.Int64Flag{Name: "small-file-limit", Value: def.SmallFileLimit, EnvVars: envVars("small-file-limit"),
			Usage: "media files up to this many bytes are cached; larger ones stream from disk"},
		&cli.DurationFlag{Name: "poll", Value: def.Poll, EnvVars: envVars("poll"),
			Usage: "do not watch --dir; check a cached file against it once it is older than this (network file systems, huge trees); 0 watches"},
		edgeTTLFlag(),
	}
}

// edgeTTLFlag is --edge-ttl of serve and of the commands that publish to
// a bucket (site.FileHeaders).
func edgeTTLFlag() cli.Flag {
	return &cli.DurationFlag{Name: "edge-ttl", EnvVars: envVars("edge-ttl"),
		Usage: "how long a CDN keeps the files of a view: Surrogate-Control and CDN-Cache-Control max-age and s-maxage " +
			"(the browser's max-age is unchanged); only safe when every change is purged at the edge, or a hidden view stays there that long; " +
			"0: CDNs follow Cache-Control"}
}

func printConfigFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "print-config", Usage: "print a configuration instead of serving: " + strings.Join(serve.ConfigKinds, ", ")},
		stringFlag("sidecar", "", "with --print-config: host:port of the sidecar for /api/ and /private/"),
		&cli.StringSliceFlag{Name: "purge-acl", EnvVars: envVars("purge-acl"),
			Usage: "with --print-config varnish: addresses and CIDR ranges (comma-separated) Varnish accepts purges from " +
				"(default: " + strings.Join(serve.DefaultPurgeACL, ",") + ")"},
	}
}

func publishFlags() []cli.Flag {
	def := publish.DefaultConfig()
	return []cli.Flag{
		stringFlag("from", "", "exported public tree (the export's --out)"),
		stringFlag("to", "", "bucket URL"),
		stringFlag("prefix", def.Prefix, "key prefix inside the bucket, e.g. site/ (stale objects are looked for under it only)"),
		stringFlag("encoding", publishEncodingName(def.Encoding), "document bytes to upload: identity, gzip or br"),
		&cli.IntFlag{Name: "jobs", Value: def.Jobs, Usage: "uploads at once", EnvVars: envVars("publish-jobs")},
		&cli.IntFlag{Name: "max-deletes", Value: def.MaxDeletes, EnvVars: envVars("max-deletes"),
			Usage: "refuse (and delete nothing) when more stale objects than this would go, not counting those the --private records say the export withdrew (hides, locks, expiries: always deleted); it guards against a wrong --from; 0 allows no other deletion"},
		&cli.BoolFlag{Name: "dry-run", Usage: "list what would change, change nothing", EnvVars: envVars("dry-run")},
		&cli.BoolFlag{Name: "force", Usage: "upload every object even when its bytes are unchanged (after a change of headers)", EnvVars: envVars("force")},
		&cli.BoolFlag{Name: "delete-foreign", EnvVars: envVars("delete-foreign"),
			Usage: "also delete stale objects guidepub did not write (no guidepub-sha256 metadata: files put there by hand or by another tool); by default they stay"},
		stringFlag("private", "", "the export's private tree: files whose size and modification time are still those the export recorded "+
			"are compared by their recorded hashes, without reading them; a bucket URL: its records are taken into --work-dir first"),
		workDirFlag(),
		&cli.IntFlag{Name: "shards", Value: 1, EnvVars: envVars("shards"),
			Usage: "with --private: the export ran as --shard i/N; read the records of all N shards"},
		&cli.BoolFlag{Name: "rehash", Usage: "with --private: read every local file anyway", EnvVars: envVars("rehash")},
		pagesAsObjectsFlag(),
		edgeTTLFlag(),
	}
}

// pagesAsObjectsFlag is publish's and live publishing's key layout option.
func pagesAsObjectsFlag() cli.Flag {
	return &cli.BoolFlag{Name: "pages-as-objects", EnvVars: envVars("pages-as-objects"),
		Usage: "upload each view page as the object of its URL (vKT301A beside vKT301A/data/status) instead of vKT301A/index.html: " +
			"for S3 + CloudFront without a rewrite; not for file:// or stores that keep keys as files"}
}

// Sidecar.

// deliveryFlags tune webhook delivery and the Portal API. dev composes
// them without allowPrivateTargetsFlag, which it always sets.
func deliveryFlags() []cli.Flag {
	def := delivery.DefaultConfig()
	return flags([]cli.Flag{
		&cli.DurationFlag{Name: "retry-min", Value: def.RetryMin, EnvVars: envVars("retry-min"),
			Usage: "shortest wait before re-sending a delivery that got a 5xx, a timeout or no connection"},
		&cli.DurationFlag{Name: "retry-max", Value: def.RetryMax, EnvVars: envVars("retry-max"),
			Usage: "longest such wait (the wait is uniformly random in between)"},
		&cli.IntFlag{Name: "max-attempts", Value: def.MaxAttempts, EnvVars: envVars("max-attempts"),
			Usage: "attempts per delivery, the first included"},
		&cli.DurationFlag{Name: "delivery-timeout", Value: def.Timeout, EnvVars: envVars("delivery-timeout"),
			Usage: "time limit of one delivery attempt"},
		&cli.IntFlag{Name: "delivery-workers", Value: def.Workers, EnvVars: envVars("delivery-workers"),
			Usage: "deliveries sent at once"},
		stringFlag("rate-limit", fmt.Sprintf("%g/s", sidecar.DefaultConfig().RateLimit), "Portal API requests per app: N/s, N/m or N/h; 0 for no limit"),
		stringFlag("instance-id", "", "stable name of this sidecar: after a crash, the same name re-sends its in-flight deliveries at once "+
			"(default: host name and --addr; two running sidecars must not share one)"),
		&cli.DurationFlag{Name: "access-token-ttl", Value: oauth.DefaultConfig().AccessTokenLifespan, EnvVars: envVars("access-token-ttl"),
			Usage: "lifetime of an OAuth access token"},
		&cli.DurationFlag{Name: "refresh-token-ttl", Value: oauth.DefaultConfig().RefreshTokenLifespan, EnvVars: envVars("refresh-token-ttl"),
			Usage: "lifetime of an OAuth refresh token"},
		&cli.StringSliceFlag{Name: "trusted-proxies", EnvVars: envVars("trusted-proxies"),
			Usage: "addresses or CIDR ranges of the reverse proxies in front (comma-separated): from them, a sign-in's client address is " +
				"taken from X-Forwarded-For; from any other peer that header is ignored (default: none, the TCP peer is the client)"},
	}, signingKeyFlag())
}

func allowPrivateTargetsFlag() []cli.Flag {
	return []cli.Flag{&cli.BoolFlag{Name: "allow-private-targets", EnvVars: envVars("allow-private-targets"),
		Usage: "allow webhook URLs on loopback, private and link-local addresses (tests, on-premises)"}}
}

// sidecarURLFlags are the URL flags the sidecar logs (it links nothing).
func sidecarURLFlags() []cli.Flag {
	def := exporter.DefaultConfig()
	return flags(viewURLFlag(def), baseURLFlag(def))
}

// Token.

func ownerFlag(usage string) []cli.Flag {
	return []cli.Flag{stringFlag("owner", "", usage)}
}

func jsonFlag(usage string) []cli.Flag {
	return []cli.Flag{&cli.BoolFlag{Name: "json", Usage: usage, EnvVars: envVars("json")}}
}

func tokenCreateFlags() []cli.Flag {
	return []cli.Flag{
		stringFlag("scopes", "", "comma-separated scopes: "+strings.Join(apitoken.Scopes, ",")),
		stringFlag("expires", "", "expiry: a duration from now (720h) or an RFC 3339 time; default never"),
	}
}

// Dev.

func devFlags() []cli.Flag {
	return []cli.Flag{
		stringFlag("work-dir", ".guidepub", "work folder: out/ (public tree), private/, guidepub.db, "+devCredsFile+" (the secrets of dev's credentials), and src/ and examples/ for the samples"),
		stringFlag("log-format", devLogText, "log lines on standard error: text (short lines for a person) or json (as the other commands write them)"),
		&cli.BoolFlag{Name: "log-requests", EnvVars: envVars("log-requests"), Usage: "log every HTTP request (off: the log shows exports, events and webhooks)"},
	}
}

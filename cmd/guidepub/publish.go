package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/afero"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/guidepub/guidepub/exporter"
	"github.com/guidepub/guidepub/exporter/edge"
	"github.com/guidepub/guidepub/exporter/publish"
	"github.com/guidepub/guidepub/exporter/records"
	"github.com/guidepub/guidepub/site"
	"github.com/guidepub/guidepub/site/bucket"
)

// publishCommand returns the "publish" command: upload the public tree to
// object storage.
func (e *env) publishCommand() *cli.Command {
	return &cli.Command{
		Name:  "publish",
		Usage: "upload an exported public tree (--from) to object storage (--to s3://…, gs://…, azblob://…, file://…)",
		Description: `Uploads every file of the tree with its Content-Type and Cache-Control. Object
stores do not negotiate encodings: with --encoding gzip or br the document
keys hold the compressed bytes with Content-Encoding set; media are always
uploaded as they are. Unchanged objects are skipped (content hash); media go
up first, then summaries and autofill documents, then statuses, and stale
objects are deleted last (at most --max-deletes, else nothing is deleted).
Only stale objects guidepub wrote (they carry its guidepub-sha256 metadata)
are deleted: files put in the bucket by hand or by another tool stay, and
are counted in the summary; --delete-foreign deletes them too.
With --private (the export's private tree), a file whose size and
modification time are those the export recorded is compared by its
recorded hashes without being read; --rehash reads every file anyway. The
records also say what the export withdrew (a file of a view it holds that
it no longer lists: a hide, a lock, an expiry): those stale objects are
deleted whatever their number, and only the others count against
--max-deletes, which guards against a wrong --from. Without --private every
stale object counts. An object the records list as public is never
withdrawn, whatever the tree holds.
A failed run leaves readers a consistent tree; running it again completes it.
The local walk and the bucket listing are merged in key order, so memory
stays flat whatever the size of the tree. A view page is uploaded under its
index.html key (vKT301A/index.html); --pages-as-objects uploads it as the
object vKT301A instead, for S3 behind CloudFront without a rewrite.

To keep a bucket current as bundles arrive, run "watch --publish URL":
it uploads what each export changed, without listing the bucket.

Credentials come from the store's usual environment (AWS_ACCESS_KEY_ID…,
GOOGLE_APPLICATION_CREDENTIALS, AZURE_STORAGE_ACCOUNT…). An S3-compatible
server: s3://bucket?endpoint=http://host:port&use_path_style=true&disable_https=true&region=us-east-1

Examples:
   guidepub publish --from public --to 's3://my-bucket?region=eu-west-1' --encoding br --dry-run
   guidepub publish --from public --to 's3://my-bucket?region=eu-west-1' --encoding br
   guidepub publish --from public --private private --to 's3://my-bucket?region=eu-west-1'
   guidepub publish --from public --to gs://my-bucket --prefix site/`,
		Flags:  append(publishFlags(), purgeFlags()...),
		Action: e.runPublish,
	}
}

// publishEncodingName is the --encoding name of enc.
func publishEncodingName(enc site.Encoding) string {
	if enc.Name == "" {
		return publish.Identity.Name
	}
	return enc.Name
}

// runPublish is the "publish" command.
func (e *env) runPublish(c *cli.Context) error {
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
	priv, err := e.publishPrivate(c)
	if err != nil {
		return err
	}
	recs, err := exportRecords(priv, c.Int("shards"))
	if err != nil {
		return err
	}
	bucket, err := publish.OpenBucket(c.Context, to)
	if err != nil {
		return usagef("--to %s: %v", publish.RedactURL(to), publish.RedactError(err, to))
	}
	defer bucket.Close()
	cfg := publish.DefaultConfig()
	cfg.From, cfg.FromDir = afero.NewOsFs(), filepath.Clean(from)
	cfg.Bucket, cfg.Prefix = bucket, c.String("prefix")
	cfg.Encoding, cfg.Jobs, cfg.MaxDeletes = enc, c.Int("jobs"), c.Int("max-deletes")
	cfg.DryRun, cfg.Force, cfg.DeleteForeign = c.Bool("dry-run"), c.Bool("force"), c.Bool("delete-foreign")
	cfg.Rehash = c.Bool("rehash")
	if recs != nil {
		cfg.KnownDigest, cfg.Withdrawn = publish.RecordedDigests(recs...), publish.RecordedWithdrawals(recs...)
	}
	cfg.PagesAsObjects, cfg.EdgeTTL = c.Bool("pages-as-objects"), c.Duration("edge-ttl")
	if cfg.PagesAsObjects && strings.HasPrefix(to, "file:") {
		return usagef("--pages-as-objects: a file:// bucket cannot hold a key that is also a folder; leave the flag out")
	}
	cfg.Logger = newLogger(e.stderr, slog.LevelWarn)
	if f, ok := e.stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		cfg.Progress = e.stderr
	}
	if cfg.DryRun {
		cfg.Plan = e.stdout
	}
	if err := validConfig(cfg.Validate()); err != nil {
		return err
	}
	purges, closeEdge, err := e.openPublishEdge(c)
	if err != nil {
		return err
	}
	defer closeEdge()
	rep, err := publish.Publish(c.Context, cfg)
	if rep != nil {
		fmt.Fprintln(e.stdout, rep.Summary())
	}
	if rep != nil && !rep.DryRun && rep.Uploaded+rep.Deleted > 0 && purges != nil {
		// Publish compares a whole tree with a whole bucket and does not
		// keep which guide an object belongs to: everything is purged.
		if perr := purgeAllAfter(c, purges, e.stdout); perr != nil {
			return errors.Join(err, perr)
		}
	}
	if err != nil {
		return publish.RedactError(err, to) // it says "publish: …"
	}
	return nil
}

// openPublishEdge is openEdge for publish, whose queue is in --private
// (required with --purge).
func (e *env) openPublishEdge(c *cli.Context) (*edge.Edge, func(), error) {
	if c.String("purge") == "" {
		return nil, func() {}, nil
	}
	if c.String("private") == "" {
		return nil, nil, usagef("--purge needs --private: the purges owed wait there until the CDN takes them")
	}
	return e.openEdge(c, publishEdgeConfig(c), newLogger(e.stderr, slog.LevelWarn), nil)
}

// publishEdgeConfig is the export configuration publish's purge queue is
// found by: the private tree of --private (its cache in --work-dir when
// --private is a bucket).
func publishEdgeConfig(c *cli.Context) exporter.Config {
	priv := c.String("private")
	if bucket.IsURL(priv) {
		if work, err := workDir(c); err == nil {
			priv = filepath.Join(work, "private")
		}
	}
	return exporter.Config{PrivateDir: filepath.Clean(priv)}
}

// purgeAllAfter queues a purge of everything and waits for the CDN to
// take it (waitPurges).
func purgeAllAfter(c *cli.Context, purges *edge.Edge, stdout io.Writer) error {
	if err := purges.PurgeAll(); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(c.Context)
	done := make(chan struct{})
	go func() { purges.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	return waitPurges(c, purges, purgesDir(publishEdgeConfig(c)), stdout)
}

// exportRecords returns the records of the export in the private tree
// priv of an export run as shards shards, or nil when priv is "" (every
// file is read, every stale object counts against --max-deletes).
func exportRecords(priv string, shards int) ([]*records.Records, error) {
	if priv == "" {
		return nil, nil
	}
	if err := notURL("private", priv); err != nil {
		return nil, err
	}
	if fi, err := os.Stat(priv); err != nil || !fi.IsDir() {
		return nil, usagef("--private %s is not a folder", priv)
	}
	if shards < 1 {
		return nil, usagef("--shards must be at least 1")
	}
	recs, err := publish.OpenRecords(afero.NewOsFs(), filepath.Clean(priv), shards)
	if err != nil {
		return nil, fmt.Errorf("publish: %w", err)
	}
	return recs, nil
}

package main

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/afero"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/guidepub/guidepub/exporter/publish"
	"github.com/guidepub/guidepub/exporter/records"
	"github.com/guidepub/guidepub/site"
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
recorded hashes without being read; --rehash reads every file anyway.
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
		Flags:  publishFlags(),
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
	known, err := recordedDigests(c.String("private"), c.Int("shards"))
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
	cfg.KnownDigest, cfg.Rehash = known, c.Bool("rehash")
	cfg.PagesAsObjects = c.Bool("pages-as-objects")
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
	rep, err := publish.Publish(c.Context, cfg)
	if rep != nil {
		fmt.Fprintln(e.stdout, rep.Summary())
	}
	if err != nil {
		return publish.RedactError(err, to) // it says "publish: …"
	}
	return nil
}

// recordedDigests returns the KnownDigest of the export records in the
// private tree priv of an export run as shards shards, or nil when priv
// is "" (every file is read).
func recordedDigests(priv string, shards int) (publish.KnownDigest, error) {
	if priv == "" {
		return nil, nil
	}
	if fi, err := os.Stat(priv); err != nil || !fi.IsDir() {
		return nil, usagef("--private %s is not a folder", priv)
	}
	if shards < 1 {
		return nil, usagef("--shards must be at least 1")
	}
	recs := make([]*records.Records, shards)
	for i := range shards {
		r, err := records.OpenRecords(afero.NewOsFs(), filepath.Clean(priv), i, shards)
		if err != nil {
			return nil, fmt.Errorf("publish: %w", err)
		}
		recs[i] = r
	}
	return publish.RecordedDigests(recs...), nil
}

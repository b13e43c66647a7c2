package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/spf13/afero"
	"github.com/urfave/cli/v2"

	"github.com/guidepub/guidepub/exporter"
	"github.com/guidepub/guidepub/exporter/privatebucket"
	"github.com/guidepub/guidepub/exporter/publish"
	"github.com/guidepub/guidepub/exporter/records"
	"github.com/guidepub/guidepub/site/bucket"
)

// workDirFlag is the local folder of export and watch when --private is a
// bucket.
func workDirFlag() cli.Flag {
	return stringFlag("work-dir", "", "with --private s3://…: the local cache of the private tree (and of the public tree without --out); "+
		"losing it costs a download of the records (default: guidepub/<hash of the URL> in the user's cache folder)")
}

// localTrees returns the folders export and watch write: --out and
// --private, or, when --private is a bucket URL, the cache folders in
// --work-dir (private/, and public/ when --out is not given but --publish
// is). It returns a *usageError when a folder is missing.
func localTrees(c *cli.Context) (out, priv string, err error) {
	out, priv = c.String("out"), c.String("private")
	if !bucket.IsURL(priv) {
		return out, priv, nil
	}
	work, err := workDir(c)
	if err != nil {
		return "", "", err
	}
	if out == "" && c.String("publish") != "" {
		out = filepath.Join(work, "public")
	}
	priv = filepath.Join(work, "private")
	for _, d := range []string{out, priv} {
		if d == "" {
			continue
		}
		if err := os.MkdirAll(d, 0o700); err != nil {
			return "", "", usagef("--work-dir: %v", err)
		}
	}
	return out, priv, nil
}

// workDir returns --work-dir, or guidepub/<hash of the --private URL> in
// the user's cache folder.
func workDir(c *cli.Context) (string, error) {
	if work := c.String("work-dir"); work != "" {
		return work, nil
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", usagef("--work-dir is required: no user cache folder (%v)", err)
	}
	sum := sha256.Sum256([]byte(publish.RedactURL(c.String("private"))))
	return filepath.Join(cache, "guidepub", hex.EncodeToString(sum[:8])), nil
}

// publishPrivate returns publish's private tree: --private, or, when it is
// a bucket URL, publish/ in --work-dir made a copy of the bucket's
// records, every shard's (records.RecordsDir). It is not the exporter's
// cache (private/), whose records may be newer than the bucket's. Only the
// records are taken: the marks of withdrawn ids stay with the exporter's
// cache, so objects they would name count against --max-deletes.
func (e *env) publishPrivate(c *cli.Context) (string, error) {
	url := c.String("private")
	if !bucket.IsURL(url) {
		return url, nil
	}
	work, err := workDir(c)
	if err != nil {
		return "", err
	}
	priv := filepath.Join(work, "publish")
	if err := os.MkdirAll(priv, 0o700); err != nil {
		return "", usagef("--work-dir: %v", err)
	}
	b, err := bucket.Open(c.Context, url)
	if err != nil {
		return "", usagef("--private %s: %v", publish.RedactURL(url), publish.RedactError(err, url))
	}
	defer b.Close()
	n := max(c.Int("shards"), 1)
	for i := range n {
		m := privatebucket.New(privatebucket.Config{Bucket: b, Local: afero.NewOsFs(), LocalDir: priv, RecordsDir: records.RecordsDir(i, n)})
		if _, err := m.Pull(c.Context); err != nil {
			return "", fmt.Errorf("--private %s: %w", publish.RedactURL(url), publish.RedactError(err, url))
		}
	}
	return priv, nil
}

// openMirror opens the --private bucket, when --private is one, and starts
// its mirror of cfg's private tree (the cache): records the bucket has and
// the cache lacks are downloaded, before the exporter reads them. It
// returns nil and a no-op without a bucket, and how many records came from
// the bucket (then every upload compares first: the cache was behind).
func (e *env) openMirror(c *cli.Context, cfg exporter.Config, logger *slog.Logger) (*privatebucket.Mirror, int, func(), error) {
	url := c.String("private")
	if !bucket.IsURL(url) {
		return nil, 0, func() {}, nil
	}
	b, err := bucket.Open(c.Context, url)
	if err != nil {
		return nil, 0, nil, usagef("--private %s: %v", publish.RedactURL(url), publish.RedactError(err, url))
	}
	m := privatebucket.New(privatebucket.Config{Bucket: b, Local: cfg.Private, LocalDir: cfg.PrivateDir,
		RecordsDir: records.RecordsDir(cfg.Shard, cfg.Shards), Logger: logger})
	n, err := m.Start(c.Context)
	if err != nil {
		b.Close()
		return nil, 0, nil, fmt.Errorf("--private %s: %w", publish.RedactURL(url), publish.RedactError(err, url))
	}
	if n > 0 {
		logger.Info("private tree: records taken from the bucket into the local cache", "records", n, "cache", cfg.PrivateDir)
	}
	return m, n, func() { b.Close() }, nil
}

package publish

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/afero"
	"gocloud.dev/blob"

	"github.com/guidepub/guidepub/exporter/records"
	"github.com/guidepub/guidepub/exporter/write"
	"github.com/guidepub/guidepub/site"
	"github.com/guidepub/guidepub/site/bucket"
)

// Digest is what comparing a local file with a bucket object needs of
// the file's bytes (bucket.Digest, the one definition).
type Digest = bucket.Digest

// KnownDigest returns the recorded digest of the public file rel (slash
// path relative to the tree) when info, its current state, shows the file
// untouched since the digest was recorded, and false otherwise. It lets a
// full reconcile recognise unchanged files without reading them.
type KnownDigest func(rel string, info fs.FileInfo) (Digest, bool)

// Upload phases: a reader of the bucket may look at any moment, so what
// others point at goes first.
const (
	phaseMedia   = iota // media, the stylesheet and any other plain file
	phaseContent        // data/summary, reso/autofill and pages
	phaseStatus         // data/status: says "ready" only once the rest is there
	numPhases
)

// phaseOf returns the upload phase of the public file rel: by its row of
// the hide table (site.PublicFiles) for a file the exporter writes, by its
// name for any other file of the tree.
func phaseOf(rel string) int {
	if f, _, ok := site.PublicFileOf(rel); ok {
		switch {
		case f.Kind == site.FileStatus:
			return phaseStatus
		case f.Group == site.GroupMedia || f.Group == site.GroupShared:
			return phaseMedia // what pages link goes before them
		}
		return phaseContent
	}
	switch {
	case strings.HasSuffix(rel, "/"+site.StatusFile):
		return phaseStatus
	case site.IsDocument(rel):
		return phaseContent
	}
	return phaseMedia
}

// keyer maps public files to keys under one configuration.
type keyer struct {
	prefix         string // "" or ending in "/"
	pagesAsObjects bool
}

func newKeyer(cfg Config) keyer {
	p := cfg.Prefix
	if p != "" && !strings.HasSuffix(p, "/") {
		p += "/"
	}
	return keyer{prefix: p, pagesAsObjects: cfg.PagesAsObjects}
}

// key returns the key of the public file rel.
func (k keyer) key(rel string) string {
	if k.pagesAsObjects {
		if _, page := site.PageKindOf(rel); page {
			// The page of /vKT301A is the object "vKT301A" itself: S3
			// then serves that URL with no rewrite (see docs/hosting.md).
			return k.prefix + strings.TrimSuffix(rel, "/"+site.PageFile)
		}
	}
	return k.prefix + rel
}

// rel returns the public file whose object is key (a page's, for a page
// stored as the object of its URL), and false for a key outside the
// prefix.
func (k keyer) rel(key string) (string, bool) {
	rel, ok := strings.CutPrefix(key, k.prefix)
	if !ok || rel == "" {
		return "", false
	}
	if k.pagesAsObjects {
		if page := rel + "/" + site.PageFile; k.key(page) == key {
			return page, true
		}
	}
	return rel, true
}

// uploaded returns the public file whose object changes when the file rel
// changes (a document for its compressed sibling), and false for a file
// never uploaded (hidden).
func uploaded(rel string) (string, bool) {
	if site.IsHidden(rel) {
		return "", false
	}
	if doc, _, ok := site.SplitEncoded(rel); ok {
		return doc, true
	}
	return rel, true
}

// local is one object to upload, described from the public tree.
type local struct {
	rel    string // path in the tree
	key    string
	phase  int
	src    string // path in the tree of the file whose bytes are uploaded (a sibling, say)
	data   []byte // the bytes to upload when no file holds them (compressed here)
	digest Digest
	attrs  blob.WriterOptions
}

// describer builds locals from a public tree; it is safe for concurrent
// use.
type describer struct {
	cfg   Config
	keys  keyer
	comp  *write.Compressor
	known KnownDigest // nil: every file is read
}

func newDescriber(cfg Config) *describer {
	return &describer{cfg: cfg, keys: newKeyer(cfg), comp: write.NewCompressor(), known: cfg.KnownDigest}
}

// describe returns the object of the public file rel whose state is info
// (nil: stat it), with its digest: recorded where d.known knows it, else
// read. It returns an error wrapping fs.ErrNotExist when rel is gone.
func (d *describer) describe(rel string, info fs.FileInfo) (*local, error) {
	cfg := d.cfg
	p := filepath.Join(cfg.FromDir, filepath.FromSlash(rel))
	if info == nil {
		fi, err := lstat(cfg.From, p)
		if err != nil {
			return nil, err
		}
		if !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("%s is not a regular file: %w", rel, fs.ErrNotExist)
		}
		info = fi
	}
	o := &local{rel: rel, key: d.keys.key(rel), phase: phaseOf(rel), src: rel}
	o.attrs = blob.WriterOptions{ContentType: site.ContentType(rel), CacheControl: site.EdgeCacheControl(rel, cfg.EdgeTTL)}
	if site.IsDocument(rel) && cfg.Encoding.Name != Identity.Name && cfg.Encoding.Name != "" {
		o.attrs.ContentEncoding = cfg.Encoding.Name
		sib, err := lstat(cfg.From, p+cfg.Encoding.Ext)
		if err == nil && !sib.Mode().IsRegular() {
			return nil, fmt.Errorf("%s is not a regular file", rel+cfg.Encoding.Ext)
		}
		switch {
		case err == nil:
			o.src, info = rel+cfg.Encoding.Ext, sib
		case errors.Is(err, fs.ErrNotExist):
			// The export wrote no such sibling: compress here, with the
			// exporter's settings.
			data, err := afero.ReadFile(cfg.From, p)
			if err != nil {
				return nil, fmt.Errorf("read %s: %w", rel, err)
			}
			if o.data, err = d.comp.Compress(cfg.Encoding, data, false); err != nil {
				return nil, fmt.Errorf("compress %s: %w", rel, err)
			}
			o.digest, _ = bucket.DigestOf(bytes.NewReader(o.data)) // reading memory cannot fail
		default:
			return nil, fmt.Errorf("read %s: %w", rel+cfg.Encoding.Ext, err)
		}
	}
	if o.data == nil {
		dg, ok := Digest{}, false
		if d.known != nil && !cfg.Rehash {
			dg, ok = d.known(o.src, info)
		}
		if !ok {
			var err error
			if dg, err = hashFile(cfg.From, filepath.Join(cfg.FromDir, filepath.FromSlash(o.src))); err != nil {
				return nil, fmt.Errorf("read %s: %w", o.src, err)
			}
		}
		o.digest = dg
	}
	// The surrogate key and the edge TTL as metadata (S3:
	// x-amz-meta-surrogate-key), for a CDN in front that copies them into
	// its headers; the key of a page stored as its URL is that of its file.
	o.attrs.Metadata = site.ObjectMetadata(rel, cfg.EdgeTTL)
	o.attrs.Metadata[MetadataHash] = o.digest.SHA256
	return o, nil
}

// lstat returns the FileInfo of p without following a symbolic link where
// the file system can tell.
func lstat(fsys afero.Fs, p string) (fs.FileInfo, error) {
	if l, ok := fsys.(afero.Lstater); ok {
		fi, _, err := l.LstatIfPossible(p)
		return fi, err
	}
	return fsys.Stat(p)
}

// hashFile returns the digest of the file p, MD5 included.
func hashFile(fsys afero.Fs, p string) (Digest, error) {
	f, err := fsys.Open(p)
	if err != nil {
		return Digest{}, err
	}
	defer f.Close()
	return bucket.DigestOf(f)
}

// remoteObject is what a listing tells of an object.
type remoteObject struct {
	key  string
	size int64
	md5  []byte
}

// sameAsRemote reports whether o's object already holds its bytes. With a
// listed MD5 the bytes are compared (reading the file when its recorded
// digest has none); else the object's attributes are read and its
// MetadataHash, headers and edge metadata (site.ObjectMetadata) compared.
// A missing object is not the same. A listing tells no headers or
// metadata, and reading them would cost a request per object: where it
// gives MD5s, a change of headers alone (a new --edge-ttl, keys on objects
// published before guidepub sent them) needs publish --force.
func (d *describer) sameAsRemote(ctx context.Context, o *local, r *remoteObject) (bool, error) {
	if r != nil && r.md5 != nil {
		if r.size != o.digest.Size {
			return false, nil
		}
		if o.digest.MD5 == nil {
			dg, err := hashFile(d.cfg.From, filepath.Join(d.cfg.FromDir, filepath.FromSlash(o.src)))
			if err != nil {
				return false, fmt.Errorf("read %s: %w", o.src, err)
			}
			if dg.SHA256 != o.digest.SHA256 {
				return false, nil // changed since recorded: upload what is there now
			}
			o.digest.MD5 = dg.MD5
		}
		return string(r.md5) == string(o.digest.MD5), nil
	}
	a, err := d.cfg.Bucket.Attributes(ctx, o.key)
	if err != nil {
		if isNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("attributes of %s: %w", o.key, err)
	}
	return a.Size == o.digest.Size && a.Metadata[MetadataHash] == o.digest.SHA256 && a.ContentType == o.attrs.ContentType &&
		a.ContentEncoding == o.attrs.ContentEncoding && a.CacheControl == o.attrs.CacheControl &&
		a.Metadata[site.SurrogateKeyMetadata] == o.attrs.Metadata[site.SurrogateKeyMetadata] &&
		a.Metadata[site.SurrogateControlMetadata] == o.attrs.Metadata[site.SurrogateControlMetadata], nil
}

// upload writes one object and returns the bytes written. A file whose
// bytes changed since it was described fails the upload with
// errChangedWhileUploading: its metadata would lie.
func upload(ctx context.Context, cfg Config, o *local) (int64, error) {
	opts := o.attrs
	if o.data != nil {
		if err := cfg.Bucket.WriteAll(ctx, o.key, o.data, &opts); err != nil {
			return 0, fmt.Errorf("upload %s: %w", o.key, explainKeyClash(err))
		}
		return int64(len(o.data)), nil
	}
	f, err := cfg.From.Open(filepath.Join(cfg.FromDir, filepath.FromSlash(o.src)))
	if err != nil {
		return 0, fmt.Errorf("open %s: %w", o.src, err)
	}
	defer f.Close()
	n, err := bucket.WriteChecked(ctx, cfg.Bucket, o.key, f, o.digest.SHA256, &opts)
	if errors.Is(err, bucket.ErrChanged) {
		err = fmt.Errorf("%s: %w", o.src, errChangedWhileUploading)
	}
	if err != nil {
		return 0, fmt.Errorf("upload %s: %w", o.key, explainKeyClash(err))
	}
	return n, nil
}

// explainKeyClash adds what to do to the error of a store that keeps keys
// as files (versitygw's POSIX backend, file://) and was asked for a key
// that is also the folder of other keys, or under a key that is a file.
func explainKeyClash(err error) error {
	msg := err.Error()
	if strings.Contains(msg, "ExistingObjectIsDirectory") || strings.Contains(msg, "ObjectParentIsFile") ||
		errors.Is(err, syscall.EISDIR) || errors.Is(err, syscall.ENOTDIR) {
		return fmt.Errorf("%w (this store keeps keys as files and cannot hold a key that is also the prefix of other keys: publish without --pages-as-objects, and delete any object named like a view id left by such a run)", err)
	}
	return err
}

// errChangedWhileUploading: a file was rewritten while it was uploaded.
var errChangedWhileUploading = errors.New("changed while publishing; run publish again")

// syscallNotDir is the error of a path whose parent is a file.
var syscallNotDir = syscall.ENOTDIR

// RecordedDigests returns a KnownDigest that finds a file's digest in the
// exporter's records (records.Records.Lookup; several for a sharded
// export, whose shards record disjoint guides): the recorded hashes of a
// file whose stamp is still the one recorded (ledger.Entry.Holds). A record without an MD5 (written by an
// earlier version) gives a digest without one, so the file is read when a
// listing's MD5 must be compared; a record that cannot be read gives none.
func RecordedDigests(recs ...*records.Records) KnownDigest {
	return func(rel string, info fs.FileInfo) (Digest, bool) {
		for _, r := range recs {
			f, ok, err := r.Lookup(rel)
			if err != nil || !ok {
				continue
			}
			if !f.Holds(info) {
				return Digest{}, false
			}
			dg := Digest{Size: f.Size, SHA256: f.SHA256}
			if m, err := hex.DecodeString(f.MD5); err == nil && len(m) == md5.Size {
				dg.MD5 = m
			}
			return dg, true
		}
		return Digest{}, false
	}
}

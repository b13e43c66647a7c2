// Package bucket opens object stores by URL (gocloud.dev/blob: s3://, gs://,
// azblob://, file://, mem://) for every part of guidepub that reads or
// writes one: publishing the public tree, the private tree kept in a
// bucket, and the sidecar reading it. It is the one home of what a value
// given for a folder or a bucket is (IsURL) and of guidepub's mark on the
// objects it writes (MetadataHash, with the Digest it is part of).
package bucket

import (
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"regexp"

	"gocloud.dev/blob"
	_ "gocloud.dev/blob/azureblob" // azblob:// URLs
	_ "gocloud.dev/blob/fileblob"  // file:// URLs
	_ "gocloud.dev/blob/gcsblob"   // gs:// URLs
	_ "gocloud.dev/blob/memblob"   // mem:// URLs
	_ "gocloud.dev/blob/s3blob"    // s3:// URLs
)

// MetadataHash is the object metadata key holding the hex SHA-256 of the
// uploaded bytes; it tells an unchanged object where the listing has no
// MD5, it gives the sidecar a private document's ETag without reading it,
// and it is guidepub's mark on every object it writes.
const MetadataHash = "guidepub-sha256"

// Digest identifies an object's bytes: their size, their hex SHA-256 (the
// value of MetadataHash) and their MD5 (what an S3 listing gives, as the
// ETag of an object written in one part).
type Digest struct {
	Size   int64
	SHA256 string // hex
	// MD5 may be nil where it is not known (a digest recorded without
	// it): a listing's MD5 is then compared with the bytes read again.
	MD5 []byte
}

// DigestOf reads r to its end and returns the digest of what it read,
// both hashes in the same pass.
func DigestOf(r io.Reader) (Digest, error) {
	m, s := md5.New(), sha256.New()
	n, err := io.Copy(io.MultiWriter(m, s), r)
	if err != nil {
		return Digest{}, err
	}
	return Digest{Size: n, SHA256: hex.EncodeToString(s.Sum(nil)), MD5: m.Sum(nil)}, nil
}

// ErrChanged is the error of WriteChecked when the bytes read were not
// those hashed before.
var ErrChanged = errors.New("changed while it was uploaded")

// WriteChecked writes the object key from r, streaming, and returns the
// bytes written. r's bytes were hashed before (sha, the hex SHA-256 the
// object's metadata says): when what is read now hashes otherwise, the
// write is abandoned (nothing is stored, the object keeps what it held)
// and the error is ErrChanged, so that no object's metadata lies about
// its bytes.
func WriteChecked(ctx context.Context, b *blob.Bucket, key string, r io.Reader, sha string, opts *blob.WriterOptions) (int64, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // an abandoned blob.Writer discards what it wrote
	w, err := b.NewWriter(ctx, key, opts)
	if err != nil {
		return 0, err
	}
	h := sha256.New()
	n, err := io.Copy(w, io.TeeReader(r, h))
	if err == nil && hex.EncodeToString(h.Sum(nil)) != sha {
		err = ErrChanged
	}
	if err != nil {
		cancel()
		w.Close()
		return 0, err
	}
	return n, w.Close()
}

// urlScheme matches the start of a URL: a value with it is never taken
// for a folder (it would make one named "s3:", say, in the working
// directory).
var urlScheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*://`)

// IsURL reports whether value is a URL (scheme://…) rather than a folder.
func IsURL(value string) bool { return urlScheme.MatchString(value) }

// Open opens the bucket URL (s3://, gs://, azblob://, file://, mem://; see
// gocloud.dev/blob). It returns an error for an unknown scheme or bad
// options.
func Open(ctx context.Context, url string) (*blob.Bucket, error) {
	return blob.OpenBucket(ctx, url)
}

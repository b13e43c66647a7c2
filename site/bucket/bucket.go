// Package bucket opens object stores by URL (gocloud.dev/blob: s3://, gs://,
// azblob://, file://, mem://) for every part of guidepub that reads or
// writes one: publishing the public tree, the private tree kept in a
// bucket, and the sidecar reading it. It is the one home of what a value
// given for a folder or a bucket is (IsURL) and of guidepub's mark on the
// objects it writes (MetadataHash).
package bucket

import (
	"context"
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

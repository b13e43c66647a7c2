package privatetree

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/guidepub/guidepub/site/bucket"
)

// inBucket is a Tree in a bucket: a name is the object key.
type inBucket struct {
	b    *blob.Bucket
	name string
}

// Bucket returns the tree in b; name is how logs call it (the URL without
// credentials). A Stat is one HEAD request; an Open adds one ranged GET
// when the file is read, from the offset the reader seeked to, so a Range
// request reads only its range and a HEAD request or a 304 none.
func Bucket(b *blob.Bucket, name string) Tree { return &inBucket{b: b, name: name} }

func (t *inBucket) String() string { return t.name }

// Stat returns the object's version: its ETag (or, where the store gives
// none, its size and time) and the exporter's SHA-256 metadata.
func (t *inBucket) Stat(ctx context.Context, name string) (Info, error) {
	a, err := t.b.Attributes(ctx, name)
	if gcerrors.Code(err) == gcerrors.NotFound {
		return Info{}, notExist(name)
	}
	if err != nil {
		return Info{}, fmt.Errorf("stat %s: %w", name, err)
	}
	info := Info{Size: a.Size, ModTime: a.ModTime, Version: a.ETag, SHA256: a.Metadata[bucket.MetadataHash]}
	if info.Version == "" {
		info.Version = strconv.FormatInt(a.Size, 10) + "-" + strconv.FormatInt(a.ModTime.UnixNano(), 10)
	}
	return info, nil
}

// Open returns a reader of the version Stat finds. Where the store takes
// conditions (S3), the read asks for that version (If-Match): an object
// replaced or removed in between is an error, never other bytes under the
// first version's ETag.
func (t *inBucket) Open(ctx context.Context, name string) (File, Info, error) {
	info, err := t.Stat(ctx, name)
	if err != nil {
		return nil, Info{}, err
	}
	return &objectReader{ctx: ctx, b: t.b, key: name, info: info}, info, nil
}

// objectReader reads one version of an object lazily: nothing is asked of
// the store until the first Read, and a Seek to another offset asks again
// from there.
type objectReader struct {
	ctx  context.Context
	b    *blob.Bucket
	key  string
	info Info
	off  int64
	r    *blob.Reader // open at off, or nil
}

func (o *objectReader) Read(p []byte) (int, error) {
	if o.off >= o.info.Size {
		return 0, io.EOF
	}
	if o.r == nil {
		r, err := o.b.NewRangeReader(o.ctx, o.key, o.off, -1, &blob.ReaderOptions{BeforeRead: o.ifMatch})
		if gcerrors.Code(err) == gcerrors.NotFound || gcerrors.Code(err) == gcerrors.FailedPrecondition {
			return 0, fmt.Errorf("read %s: changed or removed while served: %w", o.key, err)
		}
		if err != nil {
			return 0, fmt.Errorf("read %s: %w", o.key, err)
		}
		o.r = r
	}
	n, err := o.r.Read(p)
	o.off += int64(n)
	return n, err
}

// ifMatch asks S3 for the version Stat found; other stores read what is
// there (their objects are replaced whole, never partly).
func (o *objectReader) ifMatch(as func(any) bool) error {
	var in *s3.GetObjectInput
	if as(&in) && o.info.Version != "" && o.info.Version[0] == '"' {
		in.IfMatch = aws.String(o.info.Version)
	}
	return nil
}

func (o *objectReader) Seek(offset int64, whence int) (int64, error) {
	var abs int64
	switch whence {
	case io.SeekStart:
		abs = offset
	case io.SeekCurrent:
		abs = o.off + offset
	case io.SeekEnd:
		abs = o.info.Size + offset
	default:
		return 0, errors.New("seek: invalid whence")
	}
	if abs < 0 {
		return 0, errors.New("seek: negative offset")
	}
	if abs != o.off && o.r != nil {
		o.r.Close()
		o.r = nil
	}
	o.off = abs
	return abs, nil
}

func (o *objectReader) Close() error {
	if o.r != nil {
		return o.r.Close()
	}
	return nil
}

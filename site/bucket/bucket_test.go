package bucket

import (
	"context"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"gocloud.dev/blob/memblob"
)

func TestDigestOf(t *testing.T) {
	d, err := DigestOf(strings.NewReader("abc"))
	if err != nil {
		t.Fatal(err)
	}
	if d.Size != 3 || d.SHA256 != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" ||
		hex.EncodeToString(d.MD5) != "900150983cd24fb0d6963f7d28e17f72" {
		t.Errorf("DigestOf(abc) = %+v", d)
	}
}

func TestIsURL(t *testing.T) {
	for v, want := range map[string]bool{"s3://b?region=x": true, "file:///tmp/b": true, "gs://b": true,
		"private": false, "/data/private": false, "./s3:x": false, "C:\\data": false} {
		if IsURL(v) != want {
			t.Errorf("IsURL(%q) = %v", v, !want)
		}
	}
}

// TestWriteChecked: bytes that hash as said are written; bytes that do
// not leave the object as it was, with ErrChanged.
func TestWriteChecked(t *testing.T) {
	ctx := context.Background()
	b := memblob.OpenBucket(nil)
	d, _ := DigestOf(strings.NewReader("first"))
	if n, err := WriteChecked(ctx, b, "k", strings.NewReader("first"), d.SHA256, nil); err != nil || n != 5 {
		t.Fatalf("WriteChecked = %d, %v", n, err)
	}
	d2, _ := DigestOf(strings.NewReader("second"))
	if _, err := WriteChecked(ctx, b, "k", strings.NewReader("rewritten"), d2.SHA256, nil); !errors.Is(err, ErrChanged) {
		t.Fatalf("WriteChecked of other bytes = %v, want ErrChanged", err)
	}
	if got, err := b.ReadAll(ctx, "k"); err != nil || string(got) != "first" {
		t.Errorf("the object holds %q (%v), want what it held", got, err)
	}
}

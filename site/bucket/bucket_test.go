package bucket

import (
	"encoding/hex"
	"strings"
	"testing"
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

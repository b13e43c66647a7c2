package publish

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestRedact: no password of a bucket URL survives RedactURL, nor the
// errors of opening it.
func TestRedact(t *testing.T) {
	for _, c := range []struct{ url, want string }{
		{"s3://AKIA:s3cr3t@bucket?region=eu-west-1", "s3://AKIA:xxxxx@bucket?region=eu-west-1"},
		{"s3://bucket?endpoint=http://user:s3cr3t@127.0.0.1:9000&region=us-east-1", "s3://bucket?endpoint=http://user:xxxxx@127.0.0.1:9000&region=us-east-1"},
		{"s3://bucket?endpoint=http%3A%2F%2Fuser%3As3cr3t%40host", "s3://bucket?endpoint=http%3A%2F%2Fuser%3Axxxxx%40host"},
		{"s3://user:s3%2Fcr3t@bucket", "s3://user:xxxxx@bucket"},
		{"://user:s3cr3t@bucket", "://user:xxxxx@bucket"},
		{"gs://bucket", "gs://bucket"},
	} {
		if got := RedactURL(c.url); got != c.want {
			t.Errorf("RedactURL(%q) = %q, want %q", c.url, got, c.want)
		}
	}
	ctx := context.Background()
	for _, u := range []string{
		"bogus://user:s3cr3t@bucket",
		"://user:s3cr3t@bucket",
		"s3://user:s3cr3t@bucket?disable_https=maybe",
		"s3://bucket?endpoint=http://user:s3cr3t@127.0.0.1:1&disable_https=maybe",
		"file:///nonexistent/s3cr3t-less?metadata=bogus&x=http://u:s3cr3t@h",
	} {
		_, err := OpenBucket(ctx, u)
		if err == nil {
			continue
		}
		red := RedactError(err, u)
		if strings.Contains(red.Error(), "s3cr3t") {
			t.Errorf("%q: %v", u, red)
		}
		if !errors.Is(red, err) {
			t.Errorf("%q: the redacted error does not wrap the error", u)
		}
	}
	if RedactError(nil, "s3://a:b@c") != nil {
		t.Error("nil is not nil")
	}
}

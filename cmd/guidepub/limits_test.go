package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestLimitFlags: the bundle limits are flags; a bundle over one is
// rejected with the flag that raises it, and raising it lets it through.
func TestLimitFlags(t *testing.T) {
	src := fixtureSrc(t)
	root := t.TempDir()
	args := []string{"export", "--src", src, "--out", filepath.Join(root, "out"), "--private", filepath.Join(root, "private"), "--jobs", "2"}
	code, _, stderr := runCLI(t, append(args, "--max-rooms", "2")...)
	if code != 1 || !strings.Contains(stderr, "--max-rooms") {
		t.Fatalf("--max-rooms 2: exit %d, want 1 naming the flag\n%s", code, stderr)
	}
	code, _, stderr = runCLI(t, "validate", "--src", src, "--max-image-pixels", "100000")
	if code != 1 || !strings.Contains(stderr, "more than the limit of 0.1 megapixels for one image (raise it with --max-image-pixels)") {
		t.Fatalf("--max-image-pixels 100000: exit %d, want 1 naming the flag\n%s", code, stderr)
	}
	if code, out, stderr := runCLI(t, args...); code != 0 {
		t.Fatalf("default limits: exit %d\n%s%s", code, out, stderr)
	}
	for _, cmd := range [][]string{append(args, "--max-rooms", "0"), {"validate", "--src", src, "--max-photos", "-1"}} {
		if code, _, _ := runCLI(t, cmd...); code != 2 {
			t.Errorf("%v: exit %d, want 2", cmd, code)
		}
	}
}

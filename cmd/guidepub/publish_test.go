package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/guidepub/guidepub/exporter/records"
	"github.com/spf13/afero"
)

// TestPublishPrivate: publish --private trusts the export's records for a
// file rewritten with other bytes of the same size and modification time;
// --rehash, or publishing without --private, reads it and uploads it.
func TestPublishPrivate(t *testing.T) {
	root := t.TempDir()
	out, priv := filepath.Join(root, "public"), filepath.Join(root, "private")
	if code, _, stderr := runCLI(t, "export", "--src", fixtureSrc(t), "--out", out, "--private", priv); code != 0 {
		t.Fatalf("export: %d %s", code, stderr)
	}
	uploaded := regexp.MustCompile(`published: (\d+) uploaded`)
	publish := func(bucket string, args ...string) string {
		t.Helper()
		code, stdout, stderr := runCLI(t, append([]string{"publish", "--from", out, "--to", "file://" + bucket}, args...)...)
		m := uploaded.FindStringSubmatch(stdout)
		if code != 0 || m == nil {
			t.Fatalf("publish %v: exit %d, %q, %q", args, code, stdout, stderr)
		}
		return m[1]
	}
	// Two buckets holding the export.
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	for _, dir := range []string{a, b} {
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if n := publish(dir, "--private", priv); n == "0" {
			t.Fatal("the first publish uploaded nothing")
		}
	}
	if n := publish(a, "--private", priv); n != "0" {
		t.Fatalf("an unchanged tree: %s uploaded", n)
	}

	recs, err := records.OpenRecords(afero.NewOsFs(), priv, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	var victim records.PublicFile
	for f, err := range recs.PublicFiles() {
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(f.Path, "/data/summary") {
			victim = f
			break
		}
	}
	p := filepath.Join(out, filepath.FromSlash(victim.Path))
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(strings.Repeat(" ", int(fi.Size()))), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if n := publish(a, "--private", priv); n != "0" {
		t.Errorf("--private: %s uploaded, want 0 (the record is trusted)", n)
	}
	if n := publish(a, "--private", priv, "--rehash"); n != "1" {
		t.Errorf("--private --rehash: %s uploaded, want 1", n)
	}
	if n := publish(b); n != "1" {
		t.Errorf("without --private: %s uploaded, want 1", n)
	}
	if code, _, _ := runCLI(t, "publish", "--from", out, "--to", "file://"+a, "--private", filepath.Join(root, "absent")); code != exitUsage {
		t.Errorf("--private of a missing folder: exit %d, want %d", code, exitUsage)
	}
}

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/guidepub/guidepub/exporter/ledger"
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
	var victim ledger.Entry
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
	// The rewrite set the file's change time, which the record keeps
	// (where the file system reports one): the record is not trusted.
	if n := publish(a, "--private", priv); n != "1" && ledger.StampOf(fi).ChangeTime != 0 {
		t.Errorf("--private: %s uploaded, want 1 (the file's change time is not the one recorded)", n)
	}
	if n := publish(b, "--private", priv, "--rehash"); n != "1" {
		t.Errorf("--private --rehash: %s uploaded, want 1", n)
	}
	if n := publish(b); n != "0" {
		t.Errorf("without --private, after --rehash: %s uploaded, want 0", n)
	}
	if code, _, _ := runCLI(t, "publish", "--from", out, "--to", "file://"+a, "--private", filepath.Join(root, "absent")); code != exitUsage {
		t.Errorf("--private of a missing folder: exit %d, want %d", code, exitUsage)
	}
}

// TestPublishPrivateWithdrawn: publish --private deletes what the export's
// records say it withdrew (a view's photos, hidden since) whatever
// --max-deletes says; without --private the same deletions count against
// it and are refused.
func TestPublishPrivateWithdrawn(t *testing.T) {
	root := t.TempDir()
	src, out, priv, bucket := fixtureSrc(t), filepath.Join(root, "public"), filepath.Join(root, "private"), filepath.Join(root, "bucket")
	export := func() {
		t.Helper()
		if code, _, stderr := runCLI(t, "export", "--src", src, "--out", out, "--private", priv); code != 0 {
			t.Fatalf("export: %d %s", code, stderr)
		}
	}
	export()
	if err := os.Mkdir(bucket, 0o755); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCLI(t, "publish", "--from", out, "--to", "file://"+bucket, "--private", priv); code != 0 {
		t.Fatalf("publish: %d %s", code, stderr)
	}
	photo := filepath.Join(bucket, "vKT301B", "doc", "photos", "ph-1.jpg")
	if _, err := os.Stat(photo); err != nil {
		t.Fatalf("the view's photo is not in the bucket: %v", err)
	}
	// The second view hides its photos.
	guide := filepath.Join(src, "301-king-st-e", "guide.json")
	data, err := os.ReadFile(guide)
	if err != nil {
		t.Fatal(err)
	}
	hidden := []byte(`"roomDimensions"`)
	if !bytes.Contains(data, hidden) {
		t.Fatalf("%s hides no roomDimensions", guide)
	}
	if err := os.WriteFile(guide, bytes.Replace(data, hidden, []byte(`"roomDimensions", "photos"`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	export()

	code, _, stderr := runCLI(t, "publish", "--from", out, "--to", "file://"+bucket, "--max-deletes", "0")
	if code == 0 || !strings.Contains(stderr, "exceed the limit") {
		t.Fatalf("without --private: exit %d, %q; want the deletions refused", code, stderr)
	}
	if _, err := os.Stat(photo); err != nil {
		t.Fatalf("the refused publish deleted the photo: %v", err)
	}
	code, stdout, stderr := runCLI(t, "publish", "--from", out, "--to", "file://"+bucket, "--max-deletes", "0", "--private", priv)
	if code != 0 || !strings.Contains(stdout, "withdrawn by the records") {
		t.Fatalf("--private: exit %d, %q, %q", code, stdout, stderr)
	}
	if _, err := os.Stat(photo); err == nil {
		t.Error("--private: the hidden photo is still in the bucket")
	}
}

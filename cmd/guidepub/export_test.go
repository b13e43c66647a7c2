package main

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/guidepub/guidepub/fixtures"
	"github.com/guidepub/guidepub/site"
)

// fixtureSrc copies the sample bundles into a temporary folder.
func fixtureSrc(t *testing.T) string {
	t.Helper()
	sub, err := fs.Sub(fixtures.Bundles, "bundles")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "src")
	if err := os.CopyFS(dir, sub); err != nil {
		t.Fatal(err)
	}
	return dir
}

// runCLI runs guidepub with args and returns the exit status, stdout and
// stderr. The Go memory limit the command sets (export's, from
// --max-decode-memory) is taken back after it, so that it does not bind
// the tests that follow in this process.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), append([]string{"guidepub"}, args...), &stdout, &stderr)
	code := exitCode(err, &stderr)
	return code, stdout.String(), stderr.String()
}

func TestExportCommand(t *testing.T) {
	src := fixtureSrc(t)
	root := t.TempDir()
	out, priv := filepath.Join(root, "out"), filepath.Join(root, "private")
	t.Setenv("GUIDEPUB_VIEW_URL", "https://views.example.test")
	args := []string{"export", "--src", src, "--out", out, "--private", priv, "--jobs", "2"}
	code, stdout, stderr := runCLI(t, args...)
	if code != 0 || !strings.Contains(stdout, "exported 4 guides") || strings.Count(stdout, "\n") != 1 {
		t.Fatalf("first export: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	// The URL flags left at their localhost defaults are named.
	if !strings.Contains(stderr, "localhost defaults") || !strings.Contains(stderr, "--unbranded-url --embed-url --base-url") || strings.Contains(stderr, "--view-url") {
		t.Errorf("no warning about the localhost URL flags: %s", stderr)
	}
	autofill, err := os.ReadFile(filepath.Join(out, "vKT301A", "reso", "autofill"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(autofill, []byte("https://views.example.test/vKT301A/doc/")) {
		t.Error("GUIDEPUB_VIEW_URL not used")
	}
	if _, err := os.Stat(filepath.Join(priv, site.EventPath("gKT301KINGE1"))); err != nil {
		t.Errorf("no ready event: %v", err)
	}
	code, stdout, _ = runCLI(t, args...)
	if code != 0 || !strings.Contains(stdout, " 0 files written") {
		t.Fatalf("second export: exit %d, %s", code, stdout)
	}

	// A rejected bundle: exit 1, its problem on stderr, the others exported.
	guide := filepath.Join(src, "301-king-st-e", "guide.json")
	data, err := os.ReadFile(guide)
	if err != nil {
		t.Fatal(err)
	}
	broken := bytes.Replace(data, []byte(`"roomDimensions"`), []byte(`"maps"`), 1)
	if bytes.Equal(broken, data) {
		t.Fatal("fixture changed: cannot break it")
	}
	if err := os.WriteFile(guide, broken, 0o644); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(out, "vKT301B", "data", "status"))
	code, stdout, stderr = runCLI(t, args...)
	if code != exitFailure || !strings.Contains(stderr, "301-king-st-e/guide.json: $.views[1].hidden") || !strings.Contains(stdout, "1 rejected") {
		t.Fatalf("rejected bundle: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	after, _ := os.ReadFile(filepath.Join(out, "vKT301B", "data", "status"))
	if len(before) == 0 || !bytes.Equal(before, after) {
		t.Error("published files of the rejected bundle changed")
	}
}

// TestExportNoURLWarning checks that an export with every URL flag set
// does not warn about localhost.
func TestExportNoURLWarning(t *testing.T) {
	root := t.TempDir()
	code, _, stderr := runCLI(t, "export", "--src", fixtureSrc(t), "--out", filepath.Join(root, "out"), "--private", filepath.Join(root, "private"),
		"--view-url", "https://v.example.test", "--unbranded-url", "https://u.example.test", "--embed-url", "https://v.example.test/embed", "--base-url", "https://v.example.test")
	if code != 0 || strings.Contains(stderr, "localhost") {
		t.Errorf("exit %d, stderr: %s", code, stderr)
	}
}

func TestExportCommandEncodings(t *testing.T) {
	src := fixtureSrc(t)
	root := t.TempDir()
	out := filepath.Join(root, "out")
	code, _, stderr := runCLI(t, "export", "--src", src, "--out", out, "--private", filepath.Join(root, "p"), "--encodings", "gzip")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, ext := range []string{"", ".gz"} {
		if _, err := os.Stat(filepath.Join(out, "vKT301A", "data", "status"+ext)); err != nil {
			t.Error(err)
		}
	}
	for _, ext := range []string{".br", ".zst"} {
		if _, err := os.Stat(filepath.Join(out, "vKT301A", "data", "status"+ext)); err == nil {
			t.Errorf("%s written with --encodings gzip", ext)
		}
	}
}

func TestExportCommandUsage(t *testing.T) {
	src := fixtureSrc(t)
	root := t.TempDir()
	out, priv := filepath.Join(root, "out"), filepath.Join(root, "private")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no private", []string{"export", "--src", src, "--out", out}, "--private is required"},
		{"no src", []string{"export", "--out", out, "--private", priv}, "--src is required"},
		{"missing src", []string{"export", "--src", filepath.Join(root, "nope"), "--out", out, "--private", priv}, "is not a folder"},
		{"bad encoding", []string{"export", "--src", src, "--out", out, "--private", priv, "--encodings", "br,lzma"}, `unknown encoding "lzma"`},
		{"bad jobs", []string{"export", "--src", src, "--out", out, "--private", priv, "--jobs", "0"}, "--jobs: must be at least 1"},
		{"empty view URL", []string{"export", "--src", src, "--out", out, "--private", priv, "--view-url", ""}, "--view-url: is required"},
		{"empty source name", []string{"export", "--src", src, "--out", out, "--private", priv, "--source-name", ""}, "--source-name: is required"},
		{"private inside out", []string{"export", "--src", src, "--out", out, "--private", filepath.Join(out, "p")}, "must not contain"},
		{"out inside src", []string{"export", "--src", src, "--out", filepath.Join(src, "out"), "--private", priv}, "--out and --src"},
		{"src inside private", []string{"export", "--src", src, "--out", out, "--private", filepath.Dir(src)}, "--private and --src"},
		{"private bucket without out", []string{"export", "--src", src, "--private", "s3://priv?endpoint=http://127.0.0.1:1", "--work-dir", filepath.Join(root, "work")}, "--out is required"},
		{"out bucket", []string{"export", "--src", src, "--out", "file:///tmp/site", "--private", priv}, "give a folder here and the bucket to --publish"},
		{"unknown flag", []string{"export", "--bogus"}, "bogus"},
		{"validate without src", []string{"validate"}, "--src is required"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, tc.args...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, exitUsage, tc.want)
			}
		})
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a usage error wrote output")
	}
}

func TestValidateCommand(t *testing.T) {
	src := fixtureSrc(t)
	code, stdout, stderr := runCLI(t, "validate", "--src", src)
	if code != 0 || !strings.Contains(stdout, "4 bundles checked, 0 rejected") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	// Two problems: a bad bundle and a copy claiming a published alias.
	guide := filepath.Join(src, "not-drafted", "guide.json")
	if err := os.WriteFile(guide, []byte(`{"guideId": "x y"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(filepath.Join(src, "zz-copy"), os.DirFS(filepath.Join(src, "301-king-st-e"))); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = runCLI(t, "validate", "--src", src)
	if code != exitFailure || !strings.Contains(stdout, "5 bundles checked, 2 rejected") ||
		!strings.Contains(stderr, "not-drafted/guide.json: $.guideId") || !strings.Contains(stderr, "zz-copy/guide.json: $.guideId") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	entries, err := os.ReadDir(src)
	if err != nil || len(entries) != 5 {
		t.Errorf("validate changed the source folder: %d entries, %v", len(entries), err)
	}
}

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/guidepub/guidepub/fixtures"
)

// TestMakeHelp runs "make help" as a newcomer does: every target is listed
// with its help, and the variables a help names show their values, not
// their names.
func TestMakeHelp(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		fixtures.Missing(t, "make", "apt-get install make")
	}
	cmd := exec.Command("make", "--no-print-directory", "help", "IMAGE=example/guidepub:7")
	cmd.Dir = repoRoot
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make help: %v\n%s", err, out)
	}
	help := string(out)
	for _, target := range []string{"run", "test", "lint", "bench", "fuzz", "build", "image"} {
		if !strings.Contains(help, "make "+target+" ") {
			t.Errorf("make help does not list %s:\n%s", target, help)
		}
	}
	if strings.Contains(help, "$(") {
		t.Errorf("make help prints a variable's name instead of its value:\n%s", help)
	}
	if !strings.Contains(help, "container image example/guidepub:7 ") || !strings.Contains(help, "into bin/guidepub") {
		t.Errorf("make help does not show IMAGE and BIN's values:\n%s", help)
	}
}

// TestMakeRunAddr: make run ADDR=... runs dev on that address, and make
// run without it leaves dev's default (and GUIDEPUB_ADDR) alone.
func TestMakeRunAddr(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		fixtures.Missing(t, "make", "apt-get install make")
	}
	for addr, want := range map[string]string{"127.0.0.1:8090": "bin/guidepub dev --addr 127.0.0.1:8090", "": "bin/guidepub dev"} {
		cmd := exec.Command("make", "--no-print-directory", "-n", "run", "ADDR="+addr)
		cmd.Dir = repoRoot
		out, err := cmd.CombinedOutput()
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if err != nil || lines[len(lines)-1] != want {
			t.Errorf("make -n run ADDR=%s: %v\n%s\nwant the last line %q", addr, err, out, want)
		}
	}
}

// makeLine matches a line of make's own, such as "make[1]: *** [Makefile:33:
// test] Error 1" (under make test, make runs one level down).
var makeLine = regexp.MustCompile(`^make(\[\d+\])?: `)

// TestMakeTestPrintsSkips runs make test on a package with a test that
// fixtures.Missing skips: its reason is printed after go test's lines,
// without -v. With GUIDEPUB_TEST_REQUIRE=1, as in CI, the test fails and
// go test's lines come last, with no list of skips.
func TestMakeTestPrintsSkips(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		fixtures.Missing(t, "make", "apt-get install make")
	}
	skips := filepath.Join(t.TempDir(), "skips.txt")
	makeTest := func(require string) (string, error) {
		cmd := exec.Command("make", "--no-print-directory", "test", "PKGS=./fixtures", "SKIPS="+skips)
		cmd.Dir = repoRoot
		cmd.Env = append(os.Environ(), "GUIDEPUB_TEST_MISSING_DEMO=frobtool", fixtures.RequireEnv+"="+require)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := makeTest("")
	want := "./fixtures TestMissingDemo: frobtool not available, skipping: apt-get install frobtool"
	if err != nil || !strings.Contains(out, want) || strings.Index(out, want) < strings.Index(out, "ok  \tgithub.com/guidepub/guidepub/fixtures") {
		t.Errorf("make test: %v\n%s\nwant the skip's reason after go test's lines: %s", err, out, want)
	}
	out, err = makeTest("1")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for len(lines) > 0 && makeLine.MatchString(lines[len(lines)-1]) { // make's own "Error 1"
		lines = lines[:len(lines)-1]
	}
	if err == nil || strings.Contains(out, "Skipped") || len(lines) < 2 || lines[len(lines)-1] != "FAIL" ||
		!strings.HasPrefix(lines[len(lines)-2], "FAIL\tgithub.com/guidepub/guidepub/fixtures") {
		t.Errorf("make test with %s=1: %v\n%s\nwant a failure, go test's lines last", fixtures.RequireEnv, err, out)
	}
}

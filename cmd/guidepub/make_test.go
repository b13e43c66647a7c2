package main

import (
	"os/exec"
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

package main

import (
	"strings"
	"testing"
)

// TestHelp: the top-level help lists every command, every command's help
// shows examples, and an unknown command is bad usage.
func TestHelp(t *testing.T) {
	code, top, _ := runCLI(t, "--help")
	if code != 0 {
		t.Fatalf("--help: exit %d", code)
	}
	for _, cmd := range newApp(nil, nil).Commands {
		if !strings.Contains(top, cmd.Name) {
			t.Errorf("--help does not list %s", cmd.Name)
		}
		code, help, _ := runCLI(t, cmd.Name, "--help")
		if code != 0 || !strings.Contains(help, "Examples:") {
			t.Errorf("%s --help: exit %d, no examples:\n%s", cmd.Name, code, help)
		}
		for _, sub := range cmd.Subcommands {
			code, help, _ := runCLI(t, cmd.Name, sub.Name, "--help")
			if code != 0 || !strings.Contains(help, "Examples:") {
				t.Errorf("%s %s --help: exit %d, no examples:\n%s", cmd.Name, sub.Name, code, help)
			}
		}
	}
	if code, _, stderr := runCLI(t, "expor"); code != exitUsage || !strings.Contains(stderr, `unknown command "expor"`) {
		t.Errorf("unknown command: exit %d\n%s", code, stderr)
	}
}

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

// TestUnknownSubcommand: an unknown subcommand of a command with
// subcommands is bad usage, as an unknown command is.
func TestUnknownSubcommand(t *testing.T) {
	for _, cmd := range newApp(nil, nil).Commands {
		if len(cmd.Subcommands) == 0 {
			continue
		}
		code, _, stderr := runCLI(t, cmd.Name, "frobnicate")
		if code != exitUsage || !strings.Contains(stderr, `unknown command "`+cmd.Name+` frobnicate"`) {
			t.Errorf("%s frobnicate: exit %d, want %d\n%s", cmd.Name, code, exitUsage, stderr)
		}
		if code, help, _ := runCLI(t, cmd.Name); code != 0 || !strings.Contains(help, cmd.Subcommands[0].Name) {
			t.Errorf("%s alone: exit %d, want its help\n%s", cmd.Name, code, help)
		}
	}
}

// TestHelpCommand: "guidepub help <command>" shows the command's help, as
// "guidepub <command> --help" does.
func TestHelpCommand(t *testing.T) {
	code, help, stderr := runCLI(t, "help", "export")
	_, want, _ := runCLI(t, "export", "--help")
	if code != 0 || help != want {
		t.Errorf("help export: exit %d\n%s%s", code, help, stderr)
	}
	if code, top, _ := runCLI(t, "help"); code != 0 || !strings.Contains(top, "COMMANDS:") {
		t.Errorf("help: exit %d\n%s", code, top)
	}
	if code, _, stderr := runCLI(t, "help", "frob"); code != exitUsage || !strings.Contains(stderr, `unknown command "frob"`) {
		t.Errorf("help frob: exit %d\n%s", code, stderr)
	}
}

// TestVersion: --version prints the module version and the commit it was
// built from, as the Go toolchain stamped them.
func TestVersion(t *testing.T) {
	code, out, stderr := runCLI(t, "--version")
	if code != 0 || !strings.HasPrefix(out, "guidepub version ") || strings.TrimSpace(strings.TrimPrefix(out, "guidepub version ")) == "" {
		t.Errorf("--version: exit %d, %q\n%s", code, out, stderr)
	}
}

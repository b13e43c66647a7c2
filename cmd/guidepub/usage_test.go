package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUnknownFlagIsUsage checks that an unknown flag is bad usage (exit
// status 2) for every command and subcommand, not a failure.
func TestUnknownFlagIsUsage(t *testing.T) {
	for _, args := range [][]string{
		{"--bogus"},
		{"export", "--bogus"},
		{"validate", "--bogus"},
		{"watch", "--bogus"},
		{"serve", "--bogus"},
		{"publish", "--bogus"},
		{"sidecar", "--bogus"},
		{"dev", "--bogus"},
		{"token", "--bogus"},
		{"token", "create", "--bogus"},
		{"token", "list", "--bogus"},
		{"token", "revoke", "--bogus"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			code, out, errs := runCLI(t, args...)
			if code != exitUsage || !strings.Contains(errs, "bogus") {
				t.Fatalf("exit %d, want %d\n%s%s", code, exitUsage, out, errs)
			}
		})
	}
}

// TestTokenRevokeFlagsAfterAppID checks that flags may follow the APPID.
func TestTokenRevokeFlagsAfterAppID(t *testing.T) {
	priv := t.TempDir()
	cred := createToken(t, priv, "alice", "guide.events")
	code, out, errs := runCLI(t, "token", "revoke", cred.AppID, "--private", priv)
	if code != 0 || !strings.Contains(out, "revoked "+cred.AppID) {
		t.Fatalf("revoke with the flag after the APPID: exit %d\n%s%s", code, out, errs)
	}
	code, out, errs = runCLI(t, "token", "list", "--private", priv, "--json")
	if code != 0 || !strings.Contains(out, `"status":"revoked"`) {
		t.Fatalf("list after revoke: exit %d\n%s%s", code, out, errs)
	}
	code, out, errs = runCLI(t, "token", "revoke", "gpa_x", "--private")
	if code != exitUsage {
		t.Fatalf("revoke with a flag missing its value: exit %d, want %d\n%s%s", code, exitUsage, out, errs)
	}
}

// TestTokenReadersNeedAStore checks that the commands that only read or
// change existing credentials say the store does not exist instead of
// creating an empty one.
func TestTokenReadersNeedAStore(t *testing.T) {
	for _, args := range [][]string{
		{"token", "list"},
		{"token", "revoke", "gpa_0123456789abcdef"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			priv := t.TempDir()
			code, out, errs := runCLI(t, append(args, "--private", priv)...)
			if code != exitFailure || !strings.Contains(errs, "does not exist") {
				t.Fatalf("exit %d, want %d and \"does not exist\"\n%s%s", code, exitFailure, out, errs)
			}
			if _, err := os.Stat(filepath.Join(priv, defaultStoreFile)); err == nil {
				t.Fatal("the store was created")
			}
		})
	}
}

// TestDevRefusesWhatSidecarRefuses checks that dev validates the sidecar's
// settings as "sidecar" does, before it listens or writes anything.
func TestDevRefusesWhatSidecarRefuses(t *testing.T) {
	for name, args := range map[string][]string{
		"zero retry-min":        {"--retry-min", "0"},
		"retry max < min":       {"--retry-min", "2m", "--retry-max", "1m"},
		"zero attempts":         {"--max-attempts", "0"},
		"zero workers":          {"--delivery-workers", "0"},
		"bad rate":              {"--rate-limit", "fast"},
		"negative read timeout": {"--read-timeout", "-1s"},
		"negative body limit":   {"--max-body-bytes", "-1"},
		"bad trusted proxy":     {"--trusted-proxies", "proxy.example"},
	} {
		t.Run(name, func(t *testing.T) {
			priv := t.TempDir()
			code, out, errs := runCLI(t, append([]string{"sidecar", "--addr", "127.0.0.1:0", "--private", priv}, args...)...)
			if code != exitUsage {
				t.Fatalf("sidecar: exit %d, want %d\n%s%s", code, exitUsage, out, errs)
			}
			work := filepath.Join(t.TempDir(), "work")
			code, out, errs = runCLI(t, append([]string{"dev", "--addr", "127.0.0.1:0", "--work-dir", work}, args...)...)
			if code != exitUsage {
				t.Fatalf("dev: exit %d, want %d\n%s%s", code, exitUsage, out, errs)
			}
			if _, err := os.Stat(work); err == nil {
				t.Error("dev wrote its work folder before refusing the flags")
			}
		})
	}
}

// TestDevLogFormat: an unknown --log-format is bad usage, refused before
// dev writes its work folder.
func TestDevLogFormat(t *testing.T) {
	work := filepath.Join(t.TempDir(), "work")
	code, out, errs := runCLI(t, "dev", "--addr", "127.0.0.1:0", "--work-dir", work, "--log-format", "xml")
	if code != exitUsage || !strings.Contains(errs, `--log-format "xml": want text or json`) {
		t.Fatalf("exit %d, want %d and the flag named\n%s%s", code, exitUsage, out, errs)
	}
	if _, err := os.Stat(work); err == nil {
		t.Error("dev wrote its work folder before refusing --log-format")
	}
}

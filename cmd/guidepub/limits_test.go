package main

import (
	"encoding/json"
	"os"
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
	// A 16 MiB budget is below what any decode takes (its 16 MiB base
	// plus the image).
	code, _, stderr = runCLI(t, "validate", "--src", src, "--max-decode-memory", "16")
	if code != 1 || !strings.Contains(stderr, "MiB all decodes may take together (raise it with --max-decode-memory)") {
		t.Fatalf("--max-decode-memory 16: exit %d, want 1 naming the flag\n%s", code, stderr)
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

// TestBannerLimitFlags: the banner's lists are bounded by flags of their
// own, which validate, export, watch and dev all take.
func TestBannerLimitFlags(t *testing.T) {
	src := fixtureSrc(t)
	file := filepath.Join(src, "301-king-st-e", "guide.json")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var g map[string]any
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	banner := g["banner"].(map[string]any)
	for _, key := range []string{"phones", "emails", "socialLinks"} {
		l := banner[key].([]any)
		banner[key] = append(l, l[0])
	}
	banner["emails"] = []any{"jane@example.com", "sales@example.com"}
	links := banner["socialLinks"].([]any)
	links[1] = map[string]any{"label": "other", "link": "https://realty.example.com/other"}
	phones := banner["phones"].([]any)
	phones[1] = map[string]any{"label": "office", "number": "+1 519 555 0101"}
	if data, err = json.Marshal(g); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, stderr := runCLI(t, "validate", "--src", src); code != 0 {
		t.Fatalf("default limits: exit %d\n%s%s", code, out, stderr)
	}
	for _, flag := range []string{"--max-phones", "--max-emails", "--max-social-links"} {
		code, _, stderr := runCLI(t, "validate", "--src", src, flag, "1")
		if code != 1 || !strings.Contains(stderr, "raise it with "+flag) {
			t.Errorf("validate %s 1: exit %d, want 1 naming the flag\n%s", flag, code, stderr)
		}
	}
}

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// hookURLs returns the webhook URLs of the guide.json at p.
func hookURLs(t *testing.T, p string) []string {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var g struct{ Webhooks []struct{ URL string } }
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	var urls []string
	for _, h := range g.Webhooks {
		urls = append(urls, h.URL)
	}
	return urls
}

// TestSeedSamplesFollowsAddress: dev run again on another address points
// the samples it copied at its new receiver, so their ready events reach
// it; a sample whose webhooks were changed by hand is left alone, and
// nothing else of a guide.json changes.
func TestSeedSamplesFollowsAddress(t *testing.T) {
	work := t.TempDir()
	const first, second = "http://127.0.0.1:8080" + devReceiverPath, "http://127.0.0.1:8090" + devReceiverPath
	if _, err := seedSamples(work, first); err != nil {
		t.Fatal(err)
	}
	guides, _ := filepath.Glob(filepath.Join(work, "*", "*", "guide.json"))
	if len(guides) < 3 {
		t.Fatalf("seeded %d guides", len(guides))
	}
	mine := guides[0]
	data, err := os.ReadFile(mine)
	if err != nil {
		t.Fatal(err)
	}
	data = bytes.ReplaceAll(data, []byte(first), []byte("https://hooks.example.com/mine"))
	if err := os.WriteFile(mine, data, 0o644); err != nil {
		t.Fatal(err)
	}
	before := map[string][]byte{}
	for _, g := range guides {
		before[g], _ = os.ReadFile(g)
	}
	moved, err := seedSamples(work, second)
	if err != nil {
		t.Fatal(err)
	}
	if moved != len(guides)-1 {
		t.Errorf("seedSamples moved %d samples, want %d", moved, len(guides)-1)
	}
	for _, g := range guides {
		want := second
		if g == mine {
			want = "https://hooks.example.com/mine"
		}
		if urls := hookURLs(t, g); len(urls) != 1 || urls[0] != want {
			t.Errorf("%s: webhooks %q, want %s", g, urls, want)
		}
		after, _ := os.ReadFile(g)
		if !bytes.Equal(after, bytes.ReplaceAll(before[g], []byte(first), []byte(second))) {
			t.Errorf("%s: more than the webhook address changed", g)
		}
	}
	if moved, err := seedSamples(work, second); err != nil || moved != 0 {
		t.Errorf("seedSamples on the same address: %d moved, %v; want none", moved, err)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(work, "*", "*", ".*")); len(leftovers) > 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guidepub/guidepub/exporter/bundleschema"
	"github.com/guidepub/guidepub/site"
)

// TestExportStoreQueuesReadyEvents: export --store queues one delivery per
// webhook of every ready guide, nothing for an unchanged re-export, and
// again only for the guide that changed.
func TestExportStoreQueuesReadyEvents(t *testing.T) {
	src := fixtureSrc(t)
	root := t.TempDir()
	out, priv, db := filepath.Join(root, "out"), filepath.Join(root, "private"), filepath.Join(root, "store.db")
	args := []string{"export", "--src", src, "--out", out, "--private", priv, "--store", db}

	code, stdout, stderr := runCLI(t, args...)
	if code != 0 {
		t.Fatalf("export: exit %d\n%s\n%s", code, stdout, stderr)
	}
	want := map[string]int{} // guide id -> webhooks of a ready guide
	total := 0
	entries, err := os.ReadDir(filepath.Join(priv, site.GuidesDir))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		var rec site.GuideRecord
		data, err := os.ReadFile(filepath.Join(priv, site.RecordPath(e.Name())))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Ready {
			want[rec.GuideID] = len(rec.Webhooks)
			total += len(rec.Webhooks)
		}
	}
	if total == 0 {
		t.Fatal("the fixtures have no ready guide with a webhook: the test cannot fail")
	}
	if !strings.Contains(stdout, itoa(total)+" ready event deliveries queued") {
		t.Errorf("first export: want %d deliveries queued, stdout:\n%s", total, stdout)
	}
	assertDeliveries(t, priv, db, want)

	code, stdout, _ = runCLI(t, args...)
	if code != 0 || !strings.Contains(stdout, "0 ready event deliveries queued") {
		t.Errorf("unchanged re-export: exit %d, stdout:\n%s", code, stdout)
	}
	assertDeliveries(t, priv, db, want)

	// Change one ready guide: only its webhooks get a new delivery.
	guide := filepath.Join(src, "301-king-st-e", "guide.json")
	data, err := os.ReadFile(guide)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(guide, bytes.Replace(data, []byte(`"Living Room"`), []byte(`"Great Room"`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = runCLI(t, args...)
	if code != 0 || !strings.Contains(stdout, itoa(want["gKT301KINGE1"])+" ready event deliveries queued") {
		t.Errorf("export after a change: exit %d\n%s\n%s", code, stdout, stderr)
	}
	want["gKT301KINGE1"] *= 2
	assertDeliveries(t, priv, db, want)
}

// assertDeliveries checks the number of deliveries queued per guide.
func assertDeliveries(t *testing.T, priv, db string, want map[string]int) {
	t.Helper()
	parts, err := openSidecar(context.Background(), newSidecarConfig(priv, db, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer parts.Store.Close()
	for id, n := range want {
		ds, err := parts.Queue.Deliveries(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if len(ds) != n {
			t.Errorf("guide %s: %d deliveries, want %d", id, len(ds), n)
		}
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func TestExportShard(t *testing.T) {
	src := fixtureSrc(t)
	root := t.TempDir()
	for _, bad := range []string{"3/3", "-1/2", "1/0", "x", "1/2/3", "01/2"} {
		code, _, stderr := runCLI(t, "export", "--src", src, "--out", filepath.Join(root, "o"), "--private", filepath.Join(root, "p"), "--shard", bad)
		if code != exitUsage {
			t.Errorf("--shard %q: exit %d, want %d\n%s", bad, code, exitUsage, stderr)
		}
	}
	total := 0
	for _, shard := range []string{"0/2", "1/2"} {
		code, stdout, stderr := runCLI(t, "export", "--src", src, "--out", filepath.Join(root, "out"), "--private", filepath.Join(root, "private"), "--shard", shard)
		if code != 0 {
			t.Fatalf("--shard %s: exit %d\n%s", shard, code, stderr)
		}
		var n int
		if _, err := fmt.Sscanf(stdout, "exported %d guides", &n); err != nil {
			t.Fatalf("--shard %s: summary %q: %v", shard, stdout, err)
		}
		total += n
	}
	if total != 4 {
		t.Errorf("two shards exported %d guides in all, want the 4 fixtures", total)
	}
	for _, m := range []string{"exported-0-of-2", "exported-1-of-2"} {
		if _, err := os.Stat(filepath.Join(root, "private", m)); err != nil {
			t.Error(err)
		}
	}
}

func TestValidateSchema(t *testing.T) {
	code, stdout, _ := runCLI(t, "validate", "--print-schema")
	if code != 0 || stdout != string(bundleschema.Schema()) {
		t.Errorf("--print-schema: exit %d, %d bytes, want the schema", code, len(stdout))
	}
	src := fixtureSrc(t)
	if code, stdout, stderr := runCLI(t, "validate", "--src", src, "--schema"); code != 0 {
		t.Fatalf("fixtures with --schema: exit %d\n%s\n%s", code, stdout, stderr)
	}
	guide := filepath.Join(src, "not-drafted", "guide.json")
	data, err := os.ReadFile(guide)
	if err != nil {
		t.Fatal(err)
	}
	data = bytes.Replace(data, []byte(`"workOrderId"`), []byte(`"workOrderID"`), 1)
	if err := os.WriteFile(guide, data, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "validate", "--src", src, "--schema")
	if code != exitFailure || !strings.Contains(stderr, "not-drafted/guide.json: $.workOrderI") {
		t.Errorf("broken bundle with --schema: exit %d\n%s", code, stderr)
	}
}

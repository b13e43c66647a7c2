package publish

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/afero"
	"gocloud.dev/blob"
)

// foreignObjects are what a site owner puts in the bucket by hand beside
// guidepub's objects.
var foreignObjects = []string{"index.html", "assets/app.js", "robots.txt", "v1/doc/notes.txt"}

// putForeign writes foreignObjects to b under prefix, as another tool
// would: no guidepub metadata.
func putForeign(t *testing.T, b *blob.Bucket, prefix string) {
	t.Helper()
	for _, k := range foreignObjects {
		if err := b.WriteAll(context.Background(), prefix+k, []byte("by hand: "+k), &blob.WriterOptions{ContentType: "text/plain"}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPublishKeepsForeign: a stale object guidepub wrote is deleted, one
// it never wrote (no guidepub-sha256 metadata) stays, whatever its key.
func TestPublishKeepsForeign(t *testing.T) {
	endpoint := versitygw(t)
	b := newBucket(t, endpoint, "foreign")
	ctx := context.Background()
	tr := newTree()
	src := t.TempDir()
	tr.write(t, src)
	cfg := DefaultConfig()
	cfg.From, cfg.FromDir, cfg.Bucket, cfg.Prefix = afero.NewOsFs(), src, b, "site"
	if _, err := Publish(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	putForeign(t, b, "site/")
	// v2 goes away: its objects, written by guidepub, are stale.
	if err := os.RemoveAll(filepath.Join(src, "v2")); err != nil {
		t.Fatal(err)
	}
	rep, err := Publish(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	all := keys(t, b)
	for _, k := range foreignObjects {
		if !slices.Contains(all, "site/"+k) {
			t.Errorf("site/%s, not written by guidepub, was deleted", k)
		}
	}
	for _, k := range []string{"site/v2/data/status", "site/v2/data/summary"} {
		if slices.Contains(all, k) {
			t.Errorf("%s, stale and guidepub's, is still there", k)
		}
	}
	if rep.Deleted != 2 {
		t.Errorf("%d deleted, want 2", rep.Deleted)
	}
}

// TestPublishDeleteForeign: a dry run names the objects it keeps, the
// summary counts them, and DeleteForeign deletes them too.
func TestPublishDeleteForeign(t *testing.T) {
	endpoint := versitygw(t)
	b := newBucket(t, endpoint, "delete-foreign")
	ctx := context.Background()
	tr := newTree()
	src := t.TempDir()
	tr.write(t, src)
	cfg := DefaultConfig()
	cfg.From, cfg.FromDir, cfg.Bucket = afero.NewOsFs(), src, b
	if _, err := Publish(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	putForeign(t, b, "")

	var plan bytes.Buffer
	dry := cfg
	dry.DryRun, dry.Plan = true, &plan
	rep, err := Publish(ctx, dry)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range foreignObjects {
		if !strings.Contains(plan.String(), "keep "+k+" (foreign)\n") {
			t.Errorf("the dry run does not say it keeps %s:\n%s", k, plan.String())
		}
	}
	if rep.Foreign != len(foreignObjects) || rep.ToDelete != 0 || len(rep.Planned) != 0 {
		t.Errorf("dry run: %d foreign, %d to delete, planned %v", rep.Foreign, rep.ToDelete, rep.Planned)
	}
	if s := rep.Summary(); !strings.Contains(s, "4 not written by guidepub kept") {
		t.Errorf("summary %q", s)
	}

	cfg.DeleteForeign = true
	rep, err = Publish(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Deleted != len(foreignObjects) || rep.Foreign != 0 {
		t.Errorf("with DeleteForeign: %d deleted, %d kept", rep.Deleted, rep.Foreign)
	}
	for _, k := range keys(t, b) {
		if slices.Contains(foreignObjects, k) {
			t.Errorf("%s kept with DeleteForeign", k)
		}
	}
}

func TestOwned(t *testing.T) {
	sum := strings.Repeat("ab", 32)
	for _, c := range []struct {
		md   map[string]string
		want bool
	}{
		{map[string]string{MetadataHash: sum}, true},
		{nil, false},
		{map[string]string{"other": sum}, false},
		{map[string]string{MetadataHash: "yes"}, false},
		{map[string]string{MetadataHash: strings.Repeat("zz", 32)}, false},
	} {
		if got := Owned(c.md); got != c.want {
			t.Errorf("Owned(%v) = %v", c.md, got)
		}
	}
}

package publish

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/site"
)

// TestPublishSurrogateMetadata publishes to a real S3-compatible server
// and reads each object's headers back (HeadObject): a file of a public
// id carries its key in x-amz-meta-surrogate-key, and
// with an edge TTL its Cache-Control has s-maxage (the browser's max-age
// unchanged) and x-amz-meta-surrogate-control the edge's max-age; the
// stylesheet carries neither. A second run with the same TTL uploads
// nothing; with another one, the listing's MD5s say the bytes are the
// same, and only --force (Config.Force) rewrites the headers.
func TestPublishSurrogateMetadata(t *testing.T) {
	store := startStore(t)
	tr := newTree()
	tr.docs[site.AssetsDir+"/view.0123456789abcdef.css"] = []byte("body{}")
	src := t.TempDir()
	tr.write(t, src)
	b := newBucket(t, store.Endpoint, "edge")
	ctx := context.Background()
	cfg := Config{From: afero.NewOsFs(), FromDir: src, Bucket: b, Jobs: 4, MaxDeletes: DefaultMaxDeletes, EdgeTTL: 6 * time.Hour}
	rep, err := Publish(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := len(tr.docs) + len(tr.media)
	if rep.Uploaded != want {
		t.Fatalf("first run: %+v", rep)
	}
	check := func(rel, key, edge string) {
		t.Helper()
		_, a := readObject(t, b, rel)
		cc := site.CacheControl(rel)
		if edge != "" {
			cc += ", s-maxage=21600"
		}
		if a.CacheControl != cc || a.Metadata[site.SurrogateKeyMetadata] != key || a.Metadata[site.SurrogateControlMetadata] != edge {
			t.Errorf("%s: Cache-Control %q, metadata %q; want %q, key %q, edge %q", rel, a.CacheControl, a.Metadata, cc, key, edge)
		}
	}
	for rel := range tr.docs {
		key, ok := site.SurrogateKeyOf(rel)
		edge := "max-age=21600"
		if !ok {
			edge = ""
		}
		check(rel, key, edge)
	}
	check("v1/doc/plan.pdf", "guidepub-v1", "max-age=21600")

	if rep, err := Publish(ctx, cfg); err != nil || rep.Uploaded != 0 {
		t.Fatalf("second run: %+v, %v", rep, err)
	}
	cfg.EdgeTTL = 0
	if rep, err := Publish(ctx, cfg); err != nil || rep.Uploaded != 0 {
		t.Fatalf("another edge TTL, same bytes: %+v, %v", rep, err)
	}
	cfg.Force = true
	if rep, err := Publish(ctx, cfg); err != nil || rep.Uploaded != want {
		t.Fatalf("forced: %+v, %v", rep, err)
	}
	_, a := readObject(t, b, "v1/data/status")
	if strings.Contains(a.CacheControl, "s-maxage") || a.Metadata[site.SurrogateControlMetadata] != "" || a.Metadata[site.SurrogateKeyMetadata] != "guidepub-v1" {
		t.Errorf("after --force without an edge TTL: Cache-Control %q, metadata %q", a.CacheControl, a.Metadata)
	}
}

// TestPublishWithoutMD5EdgeTTL: where a listing gives no MD5, the
// objects' attributes are compared, so a new edge TTL uploads again the
// objects whose headers it changes.
func TestPublishWithoutMD5EdgeTTL(t *testing.T) {
	ctx := context.Background()
	mem := afero.NewMemMapFs()
	for name, body := range map[string]string{"v1/data/status": `{"status":"ready"}`, "v1/doc/a.pdf": "PDF"} {
		if err := afero.WriteFile(mem, "/out/"+name, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := OpenBucket(ctx, "mem://?nomd5")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	cfg := Config{From: mem, FromDir: "/out", Bucket: b, MaxDeletes: DefaultMaxDeletes, Jobs: DefaultJobs}
	if rep, err := Publish(ctx, cfg); err != nil || rep.Uploaded != 2 {
		t.Fatalf("first run: %+v, %v", rep, err)
	}
	cfg.EdgeTTL = time.Minute
	if rep, err := Publish(ctx, cfg); err != nil || rep.Uploaded != 2 {
		t.Fatalf("with an edge TTL: %+v, %v", rep, err)
	}
	if _, a := readObject(t, b, "v1/doc/a.pdf"); a.Metadata[site.SurrogateControlMetadata] != "max-age=60" {
		t.Errorf("metadata %q", a.Metadata)
	}
	if rep, err := Publish(ctx, cfg); err != nil || rep.Uploaded != 0 {
		t.Fatalf("again: %+v, %v", rep, err)
	}
}

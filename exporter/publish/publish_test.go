package publish

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/spf13/afero"
	"gocloud.dev/blob"

	"github.com/guidepub/guidepub/exporter/publish/publishtest"
	"github.com/guidepub/guidepub/exporter/write"
	"github.com/guidepub/guidepub/site"
)

// versitygw runs an S3-compatible server and returns its endpoint.
func versitygw(t testing.TB) string { return publishtest.StartStore(t).Endpoint }

// startStore runs versitygw for the test.
func startStore(t testing.TB) *publishtest.Store { return publishtest.StartStore(t) }

// newBucket creates bucket name on the server and opens it.
func newBucket(t testing.TB, endpoint, name string) *blob.Bucket {
	return publishtest.NewBucket(t, endpoint, name)
}

// tree is a small exported tree: two views with documents and siblings,
// media, and files that are never uploaded.
type tree struct {
	docs  map[string][]byte
	media map[string][]byte
}

func newTree() tree {
	return tree{
		docs: map[string][]byte{
			"v1/data/status":     []byte(`{"status":"ready"}`),
			"v1/data/summary":    []byte(`{"status":"ready","summary":{"measurementStandard":"ansi","buildings":[]}}`),
			"v1/reso/autofill":   []byte(`{"@reso.context":"urn:reso:metadata:1.7:resource:property","value":[{"City":"Toronto"}]}`),
			"v2/data/status":     []byte(`{"status":"locked"}`),
			"v2/data/summary":    []byte(`{"status":"locked"}`),
			"alias1/data/status": []byte(`{"status":"ready"}`),
		},
		media: map[string][]byte{
			"v1/doc/plan.pdf":  bytes.Repeat([]byte("%PDF-1.7 plan "), 500),
			"v1/doc/photo.jpg": bytes.Repeat([]byte{0xff, 0xd8, 0x01, 0x02}, 40000),
		},
	}
}

// write writes the tree to dir with .br/.gz siblings made by the exporter's
// compressor (none for v2/data/summary, so publish compresses it itself),
// plus a temp file and a dot-file.
func (tr tree) write(t *testing.T, dir string) {
	t.Helper()
	comp := write.NewCompressor()
	put := func(rel string, data []byte) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for rel, data := range tr.docs {
		put(rel, data)
		if rel == "v2/data/summary" {
			continue
		}
		for _, enc := range site.Encodings {
			c, err := comp.Compress(enc, data, false)
			if err != nil {
				t.Fatal(err)
			}
			put(rel+enc.Ext, c)
		}
	}
	for rel, data := range tr.media {
		put(rel, data)
	}
	put("v1/data/.tmp-status", []byte("half"))
	put(".hidden", []byte("x"))
}

// readObject returns an object's bytes and attributes.
func readObject(t *testing.T, b *blob.Bucket, key string) ([]byte, *blob.Attributes) {
	t.Helper()
	ctx := context.Background()
	data, err := b.ReadAll(ctx, key)
	if err != nil {
		t.Fatalf("read %s: %v", key, err)
	}
	a, err := b.Attributes(ctx, key)
	if err != nil {
		t.Fatalf("attributes of %s: %v", key, err)
	}
	return data, a
}

// keys lists every key in the bucket.
func keys(t testing.TB, b *blob.Bucket) []string {
	t.Helper()
	var out []string
	it := b.List(nil)
	for {
		obj, err := it.Next(context.Background())
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, obj.Key)
	}
}

func decode(t *testing.T, enc string, data []byte) []byte {
	t.Helper()
	var r io.Reader
	switch enc {
	case "":
		return data
	case "gzip":
		g, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		r = g
	case "br":
		r = brotli.NewReader(bytes.NewReader(data))
	default:
		t.Fatalf("Content-Encoding %q", enc)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestPublishS3(t *testing.T) {
	endpoint := versitygw(t)
	tr := newTree()
	src := t.TempDir()
	tr.write(t, src)
	osfs := afero.NewOsFs()

	for i, enc := range []site.Encoding{Identity, site.Gzip, site.Brotli} {
		t.Run(enc.Name, func(t *testing.T) {
			b := newBucket(t, endpoint, fmt.Sprintf("bucket-%d", i))
			ctx := context.Background()
			// A stranger's object outside the prefix is never touched.
			if err := b.WriteAll(ctx, "other/keep.txt", []byte("keep"), nil); err != nil {
				t.Fatal(err)
			}
			cfg := Config{From: osfs, FromDir: src, Bucket: b, Prefix: "site", Encoding: enc, Jobs: 4, MaxDeletes: DefaultMaxDeletes}

			// Dry run on an empty prefix: plans every upload, changes nothing.
			var plan bytes.Buffer
			dry := cfg
			dry.DryRun, dry.Plan = true, &plan
			rep, err := Publish(ctx, dry)
			if err != nil {
				t.Fatal(err)
			}
			want := len(tr.docs) + len(tr.media)
			if len(rep.Planned) != want || strings.Count(plan.String(), "\n") != want {
				t.Fatalf("dry run planned %d changes, want %d:\n%s", len(rep.Planned), want, plan.String())
			}
			if got := keys(t, b); !slices.Equal(got, []string{"other/keep.txt"}) {
				t.Fatalf("dry run changed the bucket: %v", got)
			}

			rep, err = Publish(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Uploaded != want || rep.Unchanged != 0 || rep.Deleted != 0 {
				t.Fatalf("first run: %+v", rep)
			}
			// Phases: every media upload before any document, statuses last.
			var seenPhase int
			for _, c := range rep.Planned {
				o := phaseOf(strings.TrimPrefix(c.Key, "site/"))
				if o < seenPhase {
					t.Errorf("%s planned after a later phase", c.Key)
				}
				seenPhase = o
			}

			for rel, identity := range tr.docs {
				data, a := readObject(t, b, "site/"+rel)
				wantEnc := enc.Name
				if enc == Identity {
					wantEnc = ""
				}
				if a.ContentType != "application/json" || a.CacheControl != site.DocumentCacheControl || a.ContentEncoding != wantEnc {
					t.Errorf("%s: Content-Type %q, Cache-Control %q, Content-Encoding %q", rel, a.ContentType, a.CacheControl, a.ContentEncoding)
				}
				if got := decode(t, a.ContentEncoding, data); !bytes.Equal(got, identity) {
					t.Errorf("%s: object decodes to %q", rel, got)
				}
				if a.Metadata[MetadataHash] == "" {
					t.Errorf("%s: no %s metadata", rel, MetadataHash)
				}
			}
			for rel, content := range tr.media {
				data, a := readObject(t, b, "site/"+rel)
				if !bytes.Equal(data, content) || a.ContentType != site.ContentType(rel) || a.CacheControl != site.MediaCacheControl || a.ContentEncoding != "" {
					t.Errorf("%s: %d bytes, Content-Type %q, Cache-Control %q, Content-Encoding %q", rel, len(data), a.ContentType, a.CacheControl, a.ContentEncoding)
				}
			}
			for _, k := range keys(t, b) {
				if strings.Contains(k, ".tmp") || strings.Contains(k, ".hidden") || strings.HasSuffix(k, ".br") || strings.HasSuffix(k, ".gz") || strings.HasSuffix(k, ".zst") {
					t.Errorf("uploaded %s", k)
				}
			}

			// Second run: nothing changed, nothing uploaded.
			rep, err = Publish(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Uploaded != 0 || rep.Unchanged != want || rep.Deleted != 0 {
				t.Fatalf("second run: %+v", rep)
			}
		})
	}
}

func TestPublishStaleAndInterrupted(t *testing.T) {
	endpoint := versitygw(t)
	b := newBucket(t, endpoint, "stale")
	ctx := context.Background()
	osfs := afero.NewOsFs()
	tr := newTree()
	src := t.TempDir()
	tr.write(t, src)
	cfg := Config{From: osfs, FromDir: src, Bucket: b, Encoding: site.Gzip, Jobs: 2, MaxDeletes: DefaultMaxDeletes}
	if _, err := Publish(ctx, cfg); err != nil {
		t.Fatal(err)
	}

	// v2 goes away and v1's status changes.
	if err := os.RemoveAll(filepath.Join(src, "v2")); err != nil {
		t.Fatal(err)
	}
	locked := []byte(`{"status":"locked"}`)
	if err := os.WriteFile(filepath.Join(src, "v1/data/status"), locked, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(src, "v1/data/status.gz")); err != nil {
		t.Fatal(err)
	}
	before := keys(t, b)

	t.Run("max-deletes refuses and changes nothing", func(t *testing.T) {
		c := cfg
		c.MaxDeletes = 1
		_, err := Publish(ctx, c)
		if err == nil || !strings.Contains(err.Error(), "exceed the limit") {
			t.Fatalf("err = %v, want a refusal", err)
		}
		if got := keys(t, b); !slices.Equal(got, before) {
			t.Fatalf("keys changed: %v", got)
		}
		data, a := readObject(t, b, "v1/data/status")
		if got := decode(t, a.ContentEncoding, data); string(got) != `{"status":"ready"}` {
			t.Fatalf("status uploaded despite the refusal: %q", got)
		}
		c.MaxDeletes = 0
		if _, err := Publish(ctx, c); err == nil {
			t.Fatal("no deletion allowed, yet no error")
		}
	})

	t.Run("dry run", func(t *testing.T) {
		var plan bytes.Buffer
		c := cfg
		c.DryRun, c.Plan = true, &plan
		rep, err := Publish(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		wantPlan := "upload v1/data/status (changed)\ndelete v2/data/status (stale)\ndelete v2/data/summary (stale)\n"
		if plan.String() != wantPlan {
			t.Errorf("plan:\n%s\nwant:\n%s", plan.String(), wantPlan)
		}
		if rep.Unchanged != len(tr.docs)+len(tr.media)-3 {
			t.Errorf("unchanged %d", rep.Unchanged)
		}
		if got := keys(t, b); !slices.Equal(got, before) {
			t.Fatalf("dry run changed keys: %v", got)
		}
	})

	t.Run("stale deleted after uploads", func(t *testing.T) {
		var order []string
		var mu sync.Mutex
		c := cfg
		c.OnUpload = func(key string) {
			mu.Lock()
			order = append(order, key)
			mu.Unlock()
			// When the new status is up, the stale objects are still there.
			if _, err := b.Attributes(ctx, "v2/data/status"); err != nil {
				t.Errorf("stale object deleted before the uploads finished: %v", err)
			}
		}
		rep, err := Publish(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Uploaded != 1 || rep.Deleted != 2 || !slices.Equal(order, []string{"v1/data/status"}) {
			t.Fatalf("report %+v, uploads %v", rep, order)
		}
		data, a := readObject(t, b, "v1/data/status")
		if got := decode(t, a.ContentEncoding, data); !bytes.Equal(got, locked) {
			t.Fatalf("status %q (compressed by publish itself)", got)
		}
		for _, k := range keys(t, b) {
			if strings.HasPrefix(k, "v2/") {
				t.Errorf("stale %s kept", k)
			}
		}
	})

	t.Run("interrupted then retried", func(t *testing.T) {
		b := newBucket(t, endpoint, "interrupted")
		c := cfg
		c.Bucket = b
		c.Jobs = 1
		ictx, cancel := context.WithCancel(ctx)
		var n int
		c.OnUpload = func(string) {
			if n++; n == 2 {
				cancel()
			}
		}
		_, err := Publish(ictx, c)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		partial := keys(t, b)
		if len(partial) < 2 || len(partial) >= len(tr.media)+len(tr.docs)-2 {
			t.Fatalf("after the interruption: %v", partial)
		}
		for _, k := range partial {
			if site.IsDocument(k) {
				t.Errorf("document %s uploaded while media were still going up", k)
			}
		}
		c.OnUpload = nil
		rep, err := Publish(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		total := len(tr.media) + len(tr.docs) - 2 // v2 is gone
		if rep.Unchanged != len(partial) || rep.Uploaded != total-len(partial) {
			t.Fatalf("retry: %+v after %d objects", rep, len(partial))
		}
		if got := len(keys(t, b)); got != total {
			t.Fatalf("%d objects after the retry, want %d", got, total)
		}
	})
}

func TestPublishFileBucket(t *testing.T) {
	// A local folder as the bucket (file://): the same skip-unchanged rule.
	ctx := context.Background()
	src := t.TempDir()
	newTree().write(t, src)
	dst := t.TempDir()
	b, err := OpenBucket(ctx, "file://"+dst)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	cfg := Config{From: afero.NewOsFs(), FromDir: src, Bucket: b, Encoding: site.Brotli, MaxDeletes: DefaultMaxDeletes, Jobs: DefaultJobs}
	if _, err := Publish(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	rep, err := Publish(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Uploaded != 0 {
		t.Fatalf("second run uploaded %d objects", rep.Uploaded)
	}
	a, err := b.Attributes(ctx, "v1/data/summary")
	if err != nil || a.ContentEncoding != "br" || a.ContentType != "application/json" {
		t.Fatalf("attributes %+v, %v", a, err)
	}
}

// TestPublishStylesheet: the pages' stylesheet is uploaded as CSS, cached
// for good, in the chosen encoding, and before every page.
func TestPublishStylesheet(t *testing.T) {
	ctx := context.Background()
	tr := newTree()
	sheet := site.AssetsDir + "/view.0123456789abcdef.css"
	tr.docs[sheet] = []byte("body{margin:0}")
	tr.docs["v1/index.html"] = []byte("<!DOCTYPE html><title>v1</title>")
	src := t.TempDir()
	tr.write(t, src)
	b, err := OpenBucket(ctx, "file://"+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	rep, err := Publish(ctx, Config{From: afero.NewOsFs(), FromDir: src, Bucket: b, Encoding: site.Brotli, MaxDeletes: DefaultMaxDeletes, Jobs: 1})
	if err != nil {
		t.Fatal(err)
	}
	data, a := readObject(t, b, sheet)
	if a.ContentType != site.StylesheetType || a.CacheControl != site.ImmutableCacheControl || a.ContentEncoding != "br" {
		t.Errorf("Content-Type %q, Cache-Control %q, Content-Encoding %q", a.ContentType, a.CacheControl, a.ContentEncoding)
	}
	if got := decode(t, a.ContentEncoding, data); !bytes.Equal(got, tr.docs[sheet]) {
		t.Errorf("object decodes to %q", got)
	}
	keys := make([]string, len(rep.Planned))
	for i, c := range rep.Planned {
		keys[i] = c.Key
	}
	if i, j := slices.Index(keys, sheet), slices.Index(keys, "v1/index.html"); i < 0 || j < 0 || i > j {
		t.Errorf("upload order %v: the stylesheet not before the page", keys)
	}
}

func TestParseEncoding(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
		ok   bool
	}{{"identity", "identity", true}, {"", "identity", true}, {"gzip", "gzip", true}, {"br", "br", true}, {"zstd", "", false}, {"GZIP", "", false}} {
		got, err := ParseEncoding(tc.in)
		if (err == nil) != tc.ok || got.Name != tc.want {
			t.Errorf("ParseEncoding(%q) = %v, %v", tc.in, got, err)
		}
	}
}

func TestPublishMemory(t *testing.T) {
	// The source on a memory file system, the bucket in memory: the same
	// rules without any external part.
	ctx := context.Background()
	mem := afero.NewMemMapFs()
	files := map[string]string{
		"v1/data/status":    `{"status":"ready"}`,
		"v1/data/status.gz": "not really gzip: must not be uploaded",
		"v1/data/summary":   `{"status":"ready","summary":{"measurementStandard":"rms","buildings":[]}}`,
		"v1/doc/a.png":      "PNG",
		"v1/doc/.tmp-b.png": "half",
	}
	for name, body := range files {
		if err := afero.WriteFile(mem, "/out/"+name, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := OpenBucket(ctx, "mem://")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	cfg := Config{From: mem, FromDir: "/out", Bucket: b, Prefix: "p", MaxDeletes: DefaultMaxDeletes, Jobs: DefaultJobs}
	rep, err := Publish(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := keys(t, b); !slices.Equal(got, []string{"p/v1/data/status", "p/v1/data/summary", "p/v1/doc/a.png"}) || rep.Uploaded != 3 {
		t.Fatalf("keys %v, report %+v", got, rep)
	}
	wantOrder := []string{"p/v1/doc/a.png", "p/v1/data/summary", "p/v1/data/status"}
	for i, c := range rep.Planned {
		if c.Key != wantOrder[i] || c.Op != "upload" || c.Reason != "new" {
			t.Errorf("planned[%d] = %v, want upload %s (new)", i, c, wantOrder[i])
		}
	}
	data, a := readObject(t, b, "p/v1/data/status")
	if string(data) != files["v1/data/status"] || a.ContentEncoding != "" || a.ContentType != "application/json" {
		t.Errorf("status object %q %+v", data, a)
	}
	// A changed Cache-Control is invisible to the MD5 comparison; --force
	// uploads everything again.
	cfg.Force = true
	if rep, err = Publish(ctx, cfg); err != nil || rep.Uploaded != 3 {
		t.Fatalf("forced run: %+v, %v", rep, err)
	}
	if rep.Planned[0].Reason != "forced" {
		t.Errorf("reason %q", rep.Planned[0].Reason)
	}
}

func TestPublishWithoutMD5(t *testing.T) {
	// A listing without MD5 (mem://?nomd5, like S3 multipart uploads or
	// some servers): unchanged objects are found by their guidepub-sha256
	// metadata and headers.
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
	if rep, err := Publish(ctx, cfg); err != nil || rep.Uploaded != 0 || rep.Unchanged != 2 {
		t.Fatalf("second run: %+v, %v", rep, err)
	}
	// Same bytes, wrong headers (uploaded by something else): uploaded again.
	if err := b.WriteAll(ctx, "v1/doc/a.pdf", []byte("PDF"), &blob.WriterOptions{ContentType: "text/plain"}); err != nil {
		t.Fatal(err)
	}
	rep, err := Publish(ctx, cfg)
	if err != nil || rep.Uploaded != 1 || rep.Planned[0] != (Change{"upload", "v1/doc/a.pdf", "changed"}) {
		t.Fatalf("after a foreign overwrite: %+v, %v", rep, err)
	}
	if _, a := readObject(t, b, "v1/doc/a.pdf"); a.ContentType != "application/pdf" {
		t.Errorf("Content-Type %q", a.ContentType)
	}
}

func TestPublishSymlinks(t *testing.T) {
	// A symbolic link is never followed: a linked media file is left out,
	// and a linked sibling stops the run before anything is uploaded.
	ctx := context.Background()
	dir := t.TempDir()
	src := filepath.Join(dir, "public")
	outside := filepath.Join(dir, "outside.jpg")
	if err := os.WriteFile(outside, []byte("private"), 0o644); err != nil {
		t.Fatal(err)
	}
	for rel, body := range map[string]string{"v1/data/status": `{"status":"ready"}`, "v1/doc/a.jpg": "JPEG"} {
		p := filepath.Join(src, filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(src, "v1/doc/link.jpg")); err != nil {
		t.Fatal(err)
	}
	b, err := OpenBucket(ctx, "mem://")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	cfg := Config{From: afero.NewOsFs(), FromDir: src, Bucket: b, MaxDeletes: DefaultMaxDeletes, Jobs: DefaultJobs}
	if _, err := Publish(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	if got := keys(t, b); !slices.Equal(got, []string{"v1/data/status", "v1/doc/a.jpg"}) {
		t.Fatalf("keys %v", got)
	}
	if err := os.Symlink(outside, filepath.Join(src, "v1/data/status.gz")); err != nil {
		t.Fatal(err)
	}
	cfg.Encoding = site.Gzip
	if _, err := Publish(ctx, cfg); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("linked sibling: err = %v", err)
	}
	data, a := readObject(t, b, "v1/data/status")
	if string(data) != `{"status":"ready"}` || a.ContentEncoding != "" {
		t.Fatalf("status changed by a refused run: %q %q", data, a.ContentEncoding)
	}
}

// TestPublishPages: by default a view page keeps its index.html key, so
// that no key is both an object and the prefix of others; with
// PagesAsObjects it is uploaded as the object of its URL (<id>, u/<id>,
// embed/<id>) for S3 to serve /<id> with no rewrite.
func TestPublishPages(t *testing.T) {
	ctx := context.Background()
	mem := afero.NewMemMapFs()
	for _, name := range []string{"v1/index.html", "u/v1/index.html", "embed/v1/index.html", "v1/data/status", "v1-2/data/status", "v1-2/index.html", "u/v1-2/index.html", "uu/data/status", "uu/index.html"} {
		if err := afero.WriteFile(mem, "/out/"+name, []byte("<!DOCTYPE html>"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := OpenBucket(ctx, "mem://")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	cfg := Config{From: mem, FromDir: "/out", Bucket: b, MaxDeletes: DefaultMaxDeletes, Jobs: DefaultJobs}
	if _, err := Publish(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	want := []string{"embed/v1/index.html", "u/v1-2/index.html", "u/v1/index.html", "uu/data/status", "uu/index.html", "v1-2/data/status", "v1-2/index.html", "v1/data/status", "v1/index.html"}
	if got := keys(t, b); !slices.Equal(got, want) {
		t.Fatalf("keys %v", got)
	}

	// Pages as objects, in the same bucket: the index keys become stale
	// and are deleted, the page objects uploaded, and a second run finds
	// nothing to do (the merge saw every key in order).
	cfg.PagesAsObjects = true
	rep, err := Publish(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	want = []string{"embed/v1", "u/v1", "u/v1-2", "uu", "uu/data/status", "v1", "v1-2", "v1-2/data/status", "v1/data/status"}
	if got := keys(t, b); !slices.Equal(got, want) {
		t.Fatalf("keys with PagesAsObjects %v", got)
	}
	if rep.Uploaded != 6 || rep.Deleted != 6 || rep.Unchanged != 3 {
		t.Fatalf("switching layout: %+v", rep)
	}
	a, err := b.Attributes(ctx, "u/v1")
	if err != nil || a.ContentType != site.PageType {
		t.Fatalf("u/v1: %+v, %v; want Content-Type %s", a, err, site.PageType)
	}
	if rep, err = Publish(ctx, cfg); err != nil || rep.Uploaded != 0 || rep.Deleted != 0 || rep.Unchanged != 9 {
		t.Fatalf("second run: %+v, %v", rep, err)
	}
}

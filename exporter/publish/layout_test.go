package publish

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/spf13/afero"
	"gocloud.dev/blob"

	"github.com/guidepub/guidepub/exporter"
	"github.com/guidepub/guidepub/fixtures"
	"github.com/guidepub/guidepub/site"
)

// exportFixtures exports the sample bundles (views, aliases, pages,
// media) into a new public tree and returns its folder.
func exportFixtures(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	cfg := exporter.DefaultConfig()
	osfs := afero.NewOsFs()
	cfg.Src, cfg.SrcDir = osfs, fixtures.BundlesDir()
	cfg.Out, cfg.OutDir = osfs, filepath.Join(dir, "public")
	cfg.Private, cfg.PrivateDir = osfs, filepath.Join(dir, "private")
	ex, err := exporter.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := ex.ExportAll(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Written == 0 {
		t.Fatal("the export wrote nothing")
	}
	return cfg.OutDir
}

// TestPublishTreeWithPages: an exported tree, pages included, goes to the
// stores that keep keys as files (versitygw's POSIX backend, file://)
// with the default layout, and a second run uploads nothing.
func TestPublishTreeWithPages(t *testing.T) {
	ctx := context.Background()
	src := exportFixtures(t)
	pages := 0
	site.WalkFiles(afero.NewOsFs(), src, func(rel string, _ fs.FileInfo) error {
		if _, ok := site.PageKindOf(rel); ok {
			pages++
		}
		return nil
	})
	if pages == 0 {
		t.Fatal("the exported tree has no pages")
	}
	endpoint := versitygw(t)
	fileDst := t.TempDir()
	fb, err := OpenBucket(ctx, "file://"+fileDst)
	if err != nil {
		t.Fatal(err)
	}
	defer fb.Close()
	for name, b := range map[string]*blob.Bucket{"versitygw posix": newBucket(t, endpoint, "pages"), "file": fb} {
		t.Run(name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.From, cfg.FromDir, cfg.Bucket, cfg.Encoding = afero.NewOsFs(), src, b, site.Brotli
			rep, err := Publish(ctx, cfg)
			if err != nil {
				t.Fatalf("first publish: %v", err)
			}
			if rep.Uploaded == 0 {
				t.Fatal("nothing uploaded")
			}
			got := keys(t, b)
			for _, k := range got {
				if _, isPage := site.PageKindOf(k + "/" + site.PageFile); isPage {
					t.Errorf("page uploaded as object %s", k)
				}
			}
			if !slices.Contains(got, "u/vKT301A/index.html") {
				t.Errorf("no u/vKT301A/index.html among %d keys", len(got))
			}
			rep, err = Publish(ctx, cfg)
			if err != nil || rep.Uploaded != 0 || rep.Deleted != 0 {
				t.Fatalf("second publish: %+v, %v", rep, err)
			}
		})
	}
}

// TestPublishPagesAsObjectsOnFiles: the object-and-prefix layout on a store
// that keeps keys as files fails with an error that says what to do.
func TestPublishPagesAsObjectsOnFiles(t *testing.T) {
	ctx := context.Background()
	src := exportFixtures(t)
	b := newBucket(t, versitygw(t), "objects")
	cfg := DefaultConfig()
	cfg.From, cfg.FromDir, cfg.Bucket, cfg.PagesAsObjects = afero.NewOsFs(), src, b, true
	_, err := Publish(ctx, cfg)
	if err == nil {
		t.Fatal("object-and-prefix keys accepted by a POSIX store")
	}
	if !strings.Contains(err.Error(), "--pages-as-objects") {
		t.Fatalf("the error does not say what to do: %v", err)
	}
}

// TestPublishUnorderedListing: file:// lists "king/…" before "king-2/…"
// (not in key order); the merge still uploads nothing on a second run and
// deletes only what is stale.
func TestPublishUnorderedListing(t *testing.T) {
	ctx := context.Background()
	src := t.TempDir()
	for _, rel := range []string{"king/data/status", "king/doc/a.jpg", "king-2/data/status", "king.b/data/status", "kinga/data/status"} {
		p := filepath.Join(src, filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(rel), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := OpenBucket(ctx, "file://"+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	cfg := DefaultConfig()
	cfg.From, cfg.FromDir, cfg.Bucket = afero.NewOsFs(), src, b
	if rep, err := Publish(ctx, cfg); err != nil || rep.Uploaded != 5 {
		t.Fatalf("first: %+v, %v", rep, err)
	}
	os.RemoveAll(filepath.Join(src, "king.b"))
	rep, err := Publish(ctx, cfg)
	if err != nil || rep.Uploaded != 0 || rep.Deleted != 1 || rep.Unchanged != 4 {
		t.Fatalf("second: %+v, %v", rep, err)
	}
}

// TestKnownDigest: a file whose digest is recorded is not read again
// (unless Rehash), and a wrong record is caught by the upload's own hash.
func TestKnownDigest(t *testing.T) {
	ctx := context.Background()
	mem := afero.NewMemMapFs()
	afero.WriteFile(mem, "/out/v1/data/status", []byte(`{"status":"ready"}`), 0o644)
	afero.WriteFile(mem, "/out/v1/doc/a.jpg", []byte("JPEG"), 0o644)
	b, err := OpenBucket(ctx, "mem://?nomd5")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	cfg := DefaultConfig()
	cfg.From, cfg.FromDir, cfg.Bucket = mem, "/out", b
	if _, err := Publish(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	// Recorded digests: the right one for the status, none for the photo.
	status, _ := hashFile(mem, "/out/v1/data/status")
	var asked atomic.Int32
	cfg.KnownDigest = func(rel string, info fs.FileInfo) (Digest, bool) {
		asked.Add(1)
		if rel == "v1/data/status" && info.Size() == status.Size {
			return status, true
		}
		return Digest{}, false
	}
	rep, err := Publish(ctx, cfg)
	if err != nil || rep.Unchanged != 2 || asked.Load() != 2 {
		t.Fatalf("with recorded digests: %+v, %v, asked %d", rep, err, asked.Load())
	}
	cfg.Rehash = true
	asked.Store(0)
	if rep, err := Publish(ctx, cfg); err != nil || rep.Unchanged != 2 || asked.Load() != 0 {
		t.Fatalf("--rehash: %+v, %v, asked %d", rep, err, asked.Load())
	}
}

// TestLocalFilesKeyOrder: the walk yields keys in bytewise order, pages
// as objects included, whatever the folder names.
func TestLocalFilesKeyOrder(t *testing.T) {
	mem := afero.NewMemMapFs()
	for _, rel := range []string{"a/data/status", "a/index.html", "a-b/data/status", "a-b/index.html", "a.c/x.jpg", "a0/index.html",
		"u/a/index.html", "u/a-b/index.html", "u-x/y.jpg", "embed/a/index.html", "a/data/status.br", ".hidden/x"} {
		afero.WriteFile(mem, "/out/"+rel, []byte("x"), 0o644)
	}
	for _, objects := range []bool{false, true} {
		var got []string
		for lf, err := range localFiles(mem, "/out", keyer{pagesAsObjects: objects}) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, lf.key)
		}
		if !slices.IsSorted(got) || len(got) != 10 {
			t.Errorf("pagesAsObjects=%v: %v", objects, got)
		}
	}
}

// TestPhaseOfReadsHideTable: every kind of the hide table goes up in the
// phase its group calls for, statuses last.
func TestPhaseOfReadsHideTable(t *testing.T) {
	for p, want := range map[string]int{
		"v1/data/status": phaseStatus, "v1/data/summary": phaseContent, "v1/reso/autofill": phaseContent,
		"v1/index.html": phaseContent, "u/v1/fr/index.html": phaseContent, "embed/v1/index.html": phaseContent,
		"v1/doc/photos/ph-1.jpg": phaseMedia, "v1/doc/photos/ph-1.w480.jpg": phaseMedia, "v1/doc/en/embedImage.png": phaseMedia,
		"v1/doc/en/jpgMetric-1.jpg": phaseMedia, "v1/doc/fr/pdfMetric.pdf": phaseMedia,
		// The stylesheet goes up with the media, before the pages that link it.
		site.AssetsDir + "/view.0123456789abcdef.css": phaseMedia,
	} {
		f, _, ok := site.PublicFileOf(p)
		if !ok {
			t.Fatalf("%s has no row", p)
		}
		if got := phaseOf(p); got != want {
			t.Errorf("phaseOf(%s) (%s) = %d, want %d", p, f.Kind, got, want)
		}
	}
}

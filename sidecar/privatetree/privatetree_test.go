package privatetree

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/afero"
	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"

	"github.com/guidepub/guidepub/site/bucket"
)

// TestFolder: regular files are read; a symlink anywhere on the path, a
// folder and a missing file are fs.ErrNotExist; the version changes with
// the file.
func TestFolder(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "guides", "g1"), 0o700))
	must(os.WriteFile(filepath.Join(dir, "guides", "g1", "record.json"), []byte("{}"), 0o600))
	must(os.WriteFile(filepath.Join(outside, "secret"), []byte("no"), 0o600))
	// Both links exist and lead to a readable file: only the refusal of
	// links can make them not found.
	must(os.Symlink(filepath.Join(outside, "secret"), filepath.Join(dir, "guides", "g1", "link")))
	must(os.Symlink(outside, filepath.Join(dir, "guides", "g2")))
	if _, err := os.ReadFile(filepath.Join(dir, "guides", "g2", "secret")); err != nil {
		t.Fatal(err)
	}
	tr := Folder(afero.NewOsFs(), dir)
	ctx := context.Background()
	info, err := tr.Stat(ctx, "guides/g1/record.json")
	if err != nil || info.Size != 2 {
		t.Fatalf("Stat: %+v %v", info, err)
	}
	for _, name := range []string{"guides/g1/link", "guides/g2/secret", "guides/g1", "guides/g1/nope"} {
		if _, _, err := tr.Open(ctx, name); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Open(%s): %v, want not found", name, err)
		}
	}
	must(os.WriteFile(filepath.Join(dir, "guides", "g1", "record.json"), []byte(`{"a":1}`), 0o600))
	again, err := tr.Stat(ctx, "guides/g1/record.json")
	if err != nil {
		t.Fatal(err)
	}
	if again.Version == info.Version {
		t.Error("the version did not change with the file")
	}
}

// TestBucket: Stat gives the exporter's hash; Open reads from any offset
// the reader seeks to; a missing object is fs.ErrNotExist; ReadAll
// refuses what no record is.
func TestBucket(t *testing.T) {
	ctx := context.Background()
	b := memblob.OpenBucket(nil)
	for key, data := range map[string]string{"guides/g1/doc/a.zip": "0123456789", "guides/g1/record.json": "{}"} {
		if err := b.WriteAll(ctx, key, []byte(data), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.WriteAll(ctx, "guides/g1/event.json", []byte("{}"), &blob.WriterOptions{Metadata: map[string]string{bucket.MetadataHash: "abc"}}); err != nil {
		t.Fatal(err)
	}
	tr := Bucket(b, "mem")
	info, err := tr.Stat(ctx, "guides/g1/event.json")
	if err != nil || info.SHA256 != "abc" || info.Version == "" {
		t.Fatalf("Stat: %+v %v", info, err)
	}
	f, info, err := tr.Open(ctx, "guides/g1/doc/a.zip")
	if err != nil || info.Size != 10 {
		t.Fatalf("Open: %+v %v", info, err)
	}
	defer f.Close()
	if end, _ := f.Seek(0, io.SeekEnd); end != 10 {
		t.Errorf("Seek to the end: %d", end)
	}
	f.Seek(4, io.SeekStart)
	buf := make([]byte, 3)
	if _, err := io.ReadFull(f, buf); err != nil || string(buf) != "456" {
		t.Errorf("read at 4: %q %v", buf, err)
	}
	f.Seek(-2, io.SeekEnd)
	if rest, _ := io.ReadAll(f); string(rest) != "89" {
		t.Errorf("read of the last 2: %q", rest)
	}
	if _, err := tr.Stat(ctx, "guides/g1/nope"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing object: %v", err)
	}
	if data, _, err := ReadAll(ctx, tr, "guides/g1/record.json"); err != nil || string(data) != "{}" {
		t.Errorf("ReadAll: %q %v", data, err)
	}
}

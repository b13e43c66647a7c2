package write

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/exporter/ledger"
	"github.com/guidepub/guidepub/site"
)

// TestIntactAndSealed: a guide whose files all show the stamps its ledger
// recorded is intact, from the ledger (Intact, a record without a seal)
// and from the seal alone (Sealed); a file deleted, touched, or rewritten
// with its size and modification time put back is not, either way. A
// private file the ledger does not list (a record of version 2) need
// only exist.
func TestIntactAndSealed(t *testing.T) {
	root := t.TempDir()
	osfs := afero.NewOsFs()
	w := New(Config{Public: Tree{FS: osfs, Root: filepath.Join(root, "pub"), Perm: 0o644},
		Private: Tree{FS: osfs, Root: filepath.Join(root, "priv"), Perm: 0o600}, Jobs: 1, Marker: ".writing"})
	files := map[string]string{"pub/v1/data/status": `{"status":"ready"}`, "pub/v1/doc/a.pdf": "%PDF-1.7", "priv/guides/g/record.json": "{}"}
	for rel, data := range files {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	entry := func(tree, p string) ledger.Entry {
		fi, err := os.Stat(filepath.Join(root, tree, p))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256([]byte(files[tree+"/"+p]))
		return ledger.Entry{Path: p, SHA256: hex.EncodeToString(sum[:]), Stamp: ledger.StampOf(fi)}
	}
	mg := &site.ManifestGuide{Files: []string{"v1/data/status", "v1/doc/a.pdf"}, Private: []string{"guides/g/record.json"}}
	l := ledger.Guide{Public: ledger.Ledger{entry("pub", mg.Files[0]), entry("pub", mg.Files[1])},
		Private: ledger.Ledger{entry("priv", mg.Private[0])}}
	mg.Seal = l.Seal()
	check := func(when string, want bool) {
		t.Helper()
		if got := w.Intact(mg, l); got != want {
			t.Errorf("%s: Intact = %v, want %v", when, got, want)
		}
		if got := w.Sealed(mg); got != want {
			t.Errorf("%s: Sealed = %v, want %v", when, got, want)
		}
	}
	check("as written", true)
	if !w.Intact(mg, ledger.Guide{Public: l.Public}) {
		t.Error("a private file the ledger does not list, and which exists, makes the guide not intact")
	}

	pdf := filepath.Join(root, "pub/v1/doc/a.pdf")
	fi, err := os.Stat(pdf)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
	if err := os.WriteFile(pdf, []byte("%PDF-1.4"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(pdf, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if now, _ := os.Stat(pdf); ledger.StampOf(now).ChangeTime != 0 {
		check("a file rewritten with its size and modification time put back", false)
	}
	if err := os.Chtimes(pdf, time.Now(), time.Now()); err != nil {
		t.Fatal(err)
	}
	check("a file touched", false)
	if err := os.Remove(pdf); err != nil {
		t.Fatal(err)
	}
	check("a file deleted", false)
}

package bundle_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/fixtures"
)

// fixtureFolders returns the folder names of the sample bundles.
func fixtureFolders(t testing.TB) []string {
	t.Helper()
	entries, err := fs.ReadDir(fixtures.Bundles, "bundles")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	if len(names) == 0 {
		t.Fatal("no fixture bundles")
	}
	return names
}

// TestFixturesLoad loads every sample bundle from the embedded copy, from
// the files on disk, and from a copy in a memory file system.
func TestFixturesLoad(t *testing.T) {
	mem := afero.NewMemMapFs()
	if err := copyTree(afero.FromIOFS{FS: fixtures.Bundles}, "bundles", mem, "/src"); err != nil {
		t.Fatal(err)
	}
	sources := []struct {
		name string
		fsys afero.Fs
		dir  string
	}{
		{"embedded", afero.FromIOFS{FS: fixtures.Bundles}, "bundles"},
		{"os", afero.NewOsFs(), fixtures.BundlesDir()},
		{"basepath", afero.NewBasePathFs(afero.NewOsFs(), fixtures.BundlesDir()), "/"},
		{"mem", mem, "/src"},
	}
	for _, src := range sources {
		for _, folder := range fixtureFolders(t) {
			t.Run(src.name+"/"+folder, func(t *testing.T) {
				b, err := bundle.Load(src.fsys, filepath.Join(src.dir, folder))
				if err != nil {
					t.Fatalf("Load: %v", err)
				}
				if b.Folder != folder {
					t.Errorf("Folder = %q, want %q", b.Folder, folder)
				}
				want, err := os.ReadFile(filepath.Join(fixtures.BundlesDir(), folder, bundle.FileName))
				if err != nil {
					t.Fatal(err)
				}
				if string(b.Raw) != string(want) {
					t.Errorf("Raw differs from guide.json on disk")
				}
				if b.Guide.DefaultView() == nil {
					t.Errorf("no default view")
				}
			})
		}
	}
}

// copyTree copies the folder from of src into the folder to of dst.
func copyTree(src afero.Fs, from string, dst afero.Fs, to string) error {
	return afero.Walk(src, from, func(p string, info fs.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, p)
		if err != nil {
			return err
		}
		target := filepath.Join(to, rel)
		if info.IsDir() {
			return dst.MkdirAll(target, 0o755)
		}
		data, err := afero.ReadFile(src, p)
		if err != nil {
			return err
		}
		return afero.WriteFile(dst, target, data, 0o644)
	})
}

// TestFixturesCoverage keeps the sample bundles covering what the
// exporter's golden tests rely on: both standards, every hidden feature,
// locked, expired and far-future views, both unit rules, non-ASCII names,
// not-drafted guides, and the optional parts of rooms and photos.
func TestFixturesCoverage(t *testing.T) {
	have := map[string]bool{}
	for _, folder := range fixtureFolders(t) {
		b, err := bundle.Load(afero.FromIOFS{FS: fixtures.Bundles}, filepath.Join("bundles", folder))
		if err != nil {
			t.Fatal(err)
		}
		g := &b.Guide
		if g.Alias != "" {
			have["alias"] = true
		}
		if g.Summary == nil {
			have["not drafted"] = true
		} else {
			have["standard "+g.Summary.MeasurementStandard] = true
			if len(g.Summary.Buildings) > 1 {
				have["several buildings"] = true
			}
			for _, bl := range g.Summary.Buildings {
				if bl.FinishedAreaBelowGrade != nil && bl.UnfinishedAreaAboveGrade != nil {
					have["ansi finished/unfinished above/below grade"] = true
				}
				if nonASCII(bl.Name) {
					have["non-ASCII building"] = true
				}
				for _, f := range bl.Floors {
					if f.IsBelowGrade {
						have["below grade"] = true
					}
					if nonASCII(f.Name) {
						have["non-ASCII floor"] = true
					}
					for _, r := range f.Rooms {
						if len(r.Dims) == 0 {
							have["empty dims"] = true
						}
						if r.Perimeter == nil && r.Volume == nil && r.WallSegments == nil {
							have["room without optional fields"] = true
						}
						if len(r.WallSegments) > 0 {
							have["wall segments"] = true
						}
						if nonASCII(r.Name) {
							have["non-ASCII room"] = true
						}
					}
				}
			}
		}
		if nonASCII(g.Property.FullAddress) {
			have["non-ASCII address"] = true
		}
		if len(g.Media.Documents) > 1 {
			have["several languages"] = true
		}
		preferred := 0
		for _, p := range g.Media.Photos {
			have[fmt.Sprintf("photo small %v", p.Small != nil)] = true
			if p.Preferred {
				preferred++
			}
		}
		if len(g.Media.Photos) > 0 && preferred != 1 {
			t.Errorf("%s: %d preferred photos, want exactly 1", folder, preferred)
		}
		for _, v := range g.Views {
			for _, h := range v.Hidden {
				have["hidden "+h] = true
			}
			if v.Locked {
				have["locked"] = true
			}
			if v.ExpiresAt != nil && v.ExpiresAt.Year() < 2026 {
				have["expired"] = true
			}
			if v.ExpiresAt != nil && v.ExpiresAt.Year() >= 2099 {
				have["expires 2099"] = true
			}
			have["units "+v.Units+" "+g.Property.Country] = true
		}
	}
	wanted := []string{
		"alias", "not drafted", "standard rms", "standard ansi", "several buildings",
		"ansi finished/unfinished above/below grade", "below grade", "empty dims",
		"room without optional fields", "wall segments", "non-ASCII building", "non-ASCII floor",
		"non-ASCII room", "non-ASCII address", "several languages", "photo small true",
		"photo small false", "locked", "expired", "expires 2099",
		"units imperial CA", "units metric US", "units  US", "units  CA",
	}
	for _, h := range bundle.HiddenFeatures {
		wanted = append(wanted, "hidden "+h)
	}
	for _, w := range wanted {
		if !have[w] {
			t.Errorf("no sample bundle has %s", w)
		}
	}
}

func nonASCII(s string) bool {
	for _, r := range s {
		if r > 0x7f {
			return true
		}
	}
	return false
}

// TestLoadConcurrently loads the sample bundles from several goroutines at
// once, as the exporter does (run with -race).
func TestLoadConcurrently(t *testing.T) {
	fsys := afero.FromIOFS{FS: fixtures.Bundles}
	folders := fixtureFolders(t)
	errs := make(chan error, 4*len(folders))
	for range 4 {
		for _, folder := range folders {
			go func() {
				_, err := bundle.Load(fsys, filepath.Join("bundles", folder))
				errs <- err
			}()
		}
	}
	for range 4 * len(folders) {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

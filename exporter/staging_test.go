package exporter

import (
	"path/filepath"
	"slices"
	"testing"
)

// TestStagingFoldersNotExported renames sample bundles to staging names
// (an upload being copied before it is renamed into place) and checks that
// a full export neither lists nor publishes them.
func TestStagingFoldersNotExported(t *testing.T) {
	for _, suffix := range []string{".partial", ".part", ".tmp", ".uploading", ".incomplete"} {
		ev := newEnv(t, fsKinds[0])
		t.Run(suffix, func(t *testing.T) {
			if err := ev.src.Rename(filepath.Join(ev.srcDir, "rue-saint-denis"), filepath.Join(ev.srcDir, "rue-saint-denis"+suffix)); err != nil {
				t.Fatal(err)
			}
			folders, err := ev.exporter().Folders()
			if err != nil {
				t.Fatal(err)
			}
			if slices.Contains(folders, "rue-saint-denis"+suffix) || slices.Contains(folders, "rue-saint-denis") {
				t.Errorf("Folders() = %v lists the staging folder", folders)
			}
			ev.exportAll()
			for id, mg := range ev.exporter().Manifest().Guides {
				if mg.Folder == "rue-saint-denis"+suffix {
					t.Errorf("guide %s published from the staging folder", id)
				}
			}
		})
	}
}

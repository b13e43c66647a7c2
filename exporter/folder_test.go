package exporter

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guidepub/guidepub/exporter/bundle"
)

// TestSymlinkFolderReported checks that ExportAll reports a bundle folder
// that is a symbolic link instead of skipping it silently.
func TestSymlinkFolderReported(t *testing.T) {
	ev := osEnv(t)
	if err := os.Rename(filepath.Join(ev.srcDir, kingFolder), filepath.Join(filepath.Dir(ev.srcDir), "elsewhere")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(filepath.Dir(ev.srcDir), "elsewhere"), filepath.Join(ev.srcDir, kingFolder)); err != nil {
		t.Fatal(err)
	}
	rep := ev.exportAll()
	r := resultFor(t, rep, kingFolder)
	var be *bundle.Error
	if !errors.As(r.Err, &be) || !strings.Contains(r.Err.Error(), kingFolder+": "+bundle.MsgFolderSymlink) {
		t.Fatalf("result of the linked folder: %v, want a rejection naming it", r.Err)
	}
	if rep.Rejected != 1 {
		t.Errorf("%d bundles rejected, want 1", rep.Rejected)
	}
}

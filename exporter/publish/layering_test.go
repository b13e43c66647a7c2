package publish

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestImportsNoExporterRoot: publishing comes after the export and reads
// what it changed as plain data (GuideChanges), so this package and the
// edge's depend on no part of the exporter's orchestration: `go list`
// finds no exporter root among their dependencies.
func TestImportsNoExporterRoot(t *testing.T) {
	for _, pkg := range []string{".", "../edge"} {
		out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", pkg).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", pkg, err)
		}
		if deps := strings.Fields(string(out)); slices.Contains(deps, "github.com/guidepub/guidepub/exporter") {
			t.Errorf("%s depends on the exporter root", pkg)
		}
	}
}

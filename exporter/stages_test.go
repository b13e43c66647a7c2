package exporter

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestStagesImportOnlyEarlierOnes: each stage of the export imports only
// the stages before it (doc.go): bundle, claims, render, write, records,
// as `go list` finds their dependencies.
func TestStagesImportOnlyEarlierOnes(t *testing.T) {
	stages := []string{"bundle", "claims", "render", "write", "records"}
	for i, stage := range stages {
		out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "./"+stage).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", stage, err)
		}
		deps := strings.Fields(string(out))
		for _, later := range stages[i+1:] {
			if slices.Contains(deps, "github.com/guidepub/guidepub/exporter/"+later) {
				t.Errorf("stage %s imports the later stage %s", stage, later)
			}
		}
	}
}

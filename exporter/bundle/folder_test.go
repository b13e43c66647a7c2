package bundle

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/fixtures"
)

// TestGuideWithBOM checks that a guide.json starting with a UTF-8 byte
// order mark loads as the same guide without it.
func TestGuideWithBOM(t *testing.T) {
	data, err := fixtures.Bundles.ReadFile("bundles/301-king-st-e/guide.json")
	if err != nil {
		t.Fatal(err)
	}
	plain, problems := Parse(data)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	withBOM, problems := Parse(append([]byte("\uFEFF"), data...))
	if len(problems) > 0 {
		t.Fatalf("guide.json with a byte order mark: %v", problems)
	}
	if !reflect.DeepEqual(plain, withBOM) {
		t.Error("a byte order mark changed the guide")
	}
	// Only at the start.
	if _, problems := Parse(append([]byte(" \uFEFF"), data...)); len(problems) == 0 {
		t.Error("a byte order mark after a space was accepted")
	}
}

func TestBundleFolderSymlink(t *testing.T) {
	root := t.TempDir()
	fsys := afero.NewOsFs()
	king, err := fs.Sub(fixtures.Bundles, "bundles/301-king-st-e")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(filepath.Join(root, "real"), king); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "real"), filepath.Join(root, "linked")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "file"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		folder, want string
	}{
		{"real", ""},
		{"linked", "linked: " + MsgFolderSymlink},
		{"file", "file: not a folder"},
	}
	for _, tt := range tests {
		t.Run(tt.folder, func(t *testing.T) {
			_, err := Load(fsys, filepath.Join(root, tt.folder))
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var be *Error
			if !errors.As(err, &be) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Load: %v, want %q", err, tt.want)
			}
		})
	}
}

package fswatch

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkRenew measures Tree.Renew of one bundle folder (as after a
// staged upload is renamed into place) in a tree of 1,000 and 10,000
// watched bundle folders, each with one sub-folder. The folders are empty:
// what Renew costs depends on how many folders are watched, not on the
// files in them.
func BenchmarkRenew(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("folders=%d", n), func(b *testing.B) {
			root := b.TempDir()
			for i := range n {
				if err := os.MkdirAll(filepath.Join(root, fmt.Sprintf("g%05d", i), "photos"), 0o755); err != nil {
					b.Fatal(err)
				}
			}
			tree, err := Watch(Config{Dir: root})
			if err != nil {
				b.Fatalf("fsnotify: %v", err)
			}
			defer tree.Close()
			b.ResetTimer()
			for i := range b.N {
				if err := tree.Renew([]string{fmt.Sprintf("g%05d", i%n)}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

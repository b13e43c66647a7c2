//go:build !linux

package serve

import "os"

// openOSSource returns a source for the OS directory dir through os.Root.
func openOSSource(dir string) (source, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &rootSource{root: r}, nil
}

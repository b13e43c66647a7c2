// Package recordstest holds an exporter's read of its records at start,
// for tests of what runs before that read ends.
package recordstest

import (
	"sync"

	"github.com/spf13/afero"
)

// HeldOpen is a file system whose first Open of one folder waits until
// Release is called: given the records folder (records.RecordsDir under
// the private tree), it holds the records' load, the first to open it;
// later Opens of it (a folder flushed after a record is written) pass.
type HeldOpen struct {
	afero.Fs
	name             string
	reached, release chan struct{}
	first, released  sync.Once
}

// Hold returns fsys with the first Open of folder name held.
func Hold(fsys afero.Fs, name string) *HeldOpen {
	return &HeldOpen{Fs: fsys, name: name, reached: make(chan struct{}), release: make(chan struct{})}
}

// Reached is closed once the held Open has started waiting.
func (h *HeldOpen) Reached() <-chan struct{} { return h.reached }

// Release lets the held Open go on; calling it again does nothing.
func (h *HeldOpen) Release() { h.released.Do(func() { close(h.release) }) }

// Open opens name, waiting for Release first when it is the held
// folder's first Open.
func (h *HeldOpen) Open(name string) (afero.File, error) {
	if name == h.name {
		first := false
		h.first.Do(func() { first = true }) // a later Open does not wait for this one
		if first {
			close(h.reached)
			<-h.release
		}
	}
	return h.Fs.Open(name)
}

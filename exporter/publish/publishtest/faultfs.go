package publishtest

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/spf13/afero"
)

// FaultFs wraps a file system and makes chosen writes fail, as a full
// disk or a failing device would: give it as publish.LiveConfig.OutboxFs
// to make outbox writes fail. Writes are the opening of a file for
// writing, Rename, Remove, RemoveAll, Mkdir and MkdirAll; reads always go
// through. It is safe for concurrent use.
//
//	faults := publishtest.NewFaultFs(afero.NewOsFs())
//	cfg.OutboxFs = faults
//	faults.Fail(1, publishtest.Entries) // the next entry write fails with ENOSPC
type FaultFs struct {
	afero.Fs
	mu     sync.Mutex
	left   int
	match  func(op, name string) bool
	err    error
	failed int
}

// NewFaultFs returns a FaultFs over fs that fails nothing until told.
func NewFaultFs(fs afero.Fs) *FaultFs { return &FaultFs{Fs: fs} }

// Fail makes the next n writes that match (nil: any write) fail with
// ENOSPC ("no space left on device"). It replaces what an earlier call
// asked.
func (f *FaultFs) Fail(n int, match func(op, name string) bool) {
	f.FailWith(n, match, &os.PathError{Op: "write", Err: syscall.ENOSPC})
}

// FailWith is Fail with the error err.
func (f *FaultFs) FailWith(n int, match func(op, name string) bool, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.left, f.match, f.err = n, match, err
}

// Failed returns how many writes failed so far.
func (f *FaultFs) Failed() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.failed
}

// Entries matches the writes of an outbox entry (a guide's pending
// files: a temporary file renamed to <guideId>.json), not those of
// intents (exporting-…) or of the lock.
func Entries(op, name string) bool {
	base := filepath.Base(name)
	return op == "rename" && strings.HasSuffix(base, ".json") && !strings.HasPrefix(base, "exporting-")
}

// Intents matches the writes of an export's intent (exporting-…).
func Intents(op, name string) bool {
	return op == "rename" && strings.HasPrefix(filepath.Base(name), "exporting-")
}

// fault returns the error the write op of name must fail with, or nil.
func (f *FaultFs) fault(op, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.left == 0 || (f.match != nil && !f.match(op, name)) {
		return nil
	}
	f.left--
	f.failed++
	return f.err
}

// OpenFile opens name, failing as told when it is opened for writing.
func (f *FaultFs) OpenFile(name string, flag int, perm os.FileMode) (afero.File, error) {
	if flag&(os.O_WRONLY|os.O_RDWR|os.O_CREATE|os.O_TRUNC|os.O_APPEND) != 0 {
		if err := f.fault("open", name); err != nil {
			return nil, err
		}
	}
	return f.Fs.OpenFile(name, flag, perm)
}

// Create creates name, failing as told.
func (f *FaultFs) Create(name string) (afero.File, error) {
	return f.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o666)
}

// Rename renames, failing as told.
func (f *FaultFs) Rename(oldname, newname string) error {
	if err := f.fault("rename", newname); err != nil {
		return err
	}
	return f.Fs.Rename(oldname, newname)
}

// Remove removes name, failing as told.
func (f *FaultFs) Remove(name string) error {
	if err := f.fault("remove", name); err != nil {
		return err
	}
	return f.Fs.Remove(name)
}

// RemoveAll removes path, failing as told.
func (f *FaultFs) RemoveAll(path string) error {
	if err := f.fault("remove", path); err != nil {
		return err
	}
	return f.Fs.RemoveAll(path)
}

// Mkdir creates name, failing as told.
func (f *FaultFs) Mkdir(name string, perm os.FileMode) error {
	if err := f.fault("mkdir", name); err != nil {
		return err
	}
	return f.Fs.Mkdir(name, perm)
}

// MkdirAll creates path, failing as told.
func (f *FaultFs) MkdirAll(path string, perm os.FileMode) error {
	if err := f.fault("mkdir", path); err != nil {
		return err
	}
	return f.Fs.MkdirAll(path, perm)
}

// Name names the file system.
func (f *FaultFs) Name() string { return "FaultFs(" + f.Fs.Name() + ")" }

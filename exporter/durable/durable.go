// Package durable keeps small files that must survive a crash or a power
// loss: a folder whose files are each written atomically and durably
// (a temporary file, flushed, renamed into place, the folder flushed), so
// that a crash leaves the old or the new version of a file, never a part,
// and a name written or removed stays so; and the lock that lets one
// process at a time use such a folder. The live publisher's outbox and the
// edge's purge queue are such folders.
package durable

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/gofrs/flock"
	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/site"
)

// Dir is a folder of durable files on Fs (nil: the operating system's).
type Dir struct {
	Fs   afero.Fs
	Path string
}

func (d Dir) fs() afero.Fs {
	if d.Fs == nil {
		return afero.NewOsFs()
	}
	return d.Fs
}

// Write writes the file name atomically and durably. It returns an error
// when any step fails; the temporary file is then removed.
func (d Dir) Write(name string, data []byte) error {
	var rnd [8]byte
	rand.Read(rnd[:])
	fsys := d.fs()
	tmp := filepath.Join(d.Path, site.TempPrefix+name+"-"+hex.EncodeToString(rnd[:]))
	f, err := fsys.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = fsys.Rename(tmp, filepath.Join(d.Path, name))
	}
	if err != nil {
		fsys.Remove(tmp)
		return err
	}
	return d.Sync()
}

// Remove removes the file name durably; a missing file is fine.
func (d Dir) Remove(name string) error {
	if err := d.fs().Remove(filepath.Join(d.Path, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return d.Sync()
}

// Sync flushes the folder, so that the names written or removed in it
// survive a power loss. A file system that cannot flush a folder (EINVAL)
// is not an error.
func (d Dir) Sync() error {
	f, err := d.fs().Open(d.Path)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil && !errors.Is(err, syscall.EINVAL) {
		return fmt.Errorf("sync %s: %w", d.Path, err)
	}
	return nil
}

// IsTemp reports whether name is a temporary file Write left when a crash
// stopped it (the holder of the folder's lock removes them).
func IsTemp(name string) bool { return strings.HasPrefix(name, site.TempPrefix) }

// LockFile is the name of the lock file Lock takes in a folder.
const LockFile = ".lock"

// Lock takes the lock of the folder dir (a file lock on its LockFile,
// which the operating system releases when the process ends, however it
// ends), so that one process at a time uses it. While another process
// holds it, it logs once who does (what says what the folder is for,
// "publishes from this private tree") and waits, trying again every poll,
// until the lock is free or ctx ends. It returns the lock to release, or
// an error when ctx ended or the lock file cannot be opened.
func Lock(ctx context.Context, dir string, poll time.Duration, log *slog.Logger, what string) (*flock.Flock, error) {
	path := filepath.Join(dir, LockFile)
	lk := flock.New(path, flock.SetPermissions(0o600))
	ok, err := lk.TryLock()
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if !ok {
		holder, _ := os.ReadFile(path)
		log.Warn("another guidepub process "+what+": waiting for it to stop",
			"kind", "conflict", "holder", strings.TrimSpace(string(holder)), "folder", dir,
			"what to do", "run one watch or export with --publish or --purge per private tree; this one goes on once the other stops")
		if ok, err = lk.TryLockContext(ctx, poll); err != nil || !ok {
			if err == nil {
				err = ctx.Err()
			}
			return nil, fmt.Errorf("waiting for %s: %w", path, err)
		}
		log.Info("the other process stopped: going on", "folder", dir)
	}
	// Who holds it, for the message of a process that waits.
	host, _ := os.Hostname()
	os.WriteFile(path, fmt.Appendf(nil, "pid %d on %s\n", os.Getpid(), host), 0o600)
	return lk, nil
}

package publish

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/gofrs/flock"
	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/site"
)

// The outbox is a folder (in the private tree) with one JSON file per
// guide whose changed files are not all in the bucket yet, and one intent
// file per export under way. Each file is written atomically (temporary
// file, fsync, rename, folder fsync), so a crash leaves the old or the new
// version of it, never a part. One process at a time uses an outbox: it
// holds the lock on its lockFile while it runs (see lockOutbox).
const (
	outboxSuffix = ".json"
	intentPrefix = "exporting-"
	lockFile     = ".lock"
)

// outboxEntry is one guide's pending uploads as stored.
type outboxEntry struct {
	Name  string    `json:"name"` // guide id, or "folder:<name>" when none is known
	Since time.Time `json:"since"`
	Files []string  `json:"files"` // public files (documents, not their siblings), sorted
}

// outboxFile returns the file name of the entry called name: the name
// itself when it is a plain id, else a hash of it.
func outboxFile(name string) string {
	if site.ValidID.MatchString(name) {
		return name + outboxSuffix
	}
	sum := sha256.Sum256([]byte(name))
	return "h-" + hex.EncodeToString(sum[:12]) + outboxSuffix
}

// outbox reads and writes the files of one outbox folder on fsys.
type outbox struct {
	fs  afero.Fs
	dir string
}

// writeEntry stores e atomically.
func (o outbox) writeEntry(e *outboxEntry) error {
	data, err := json.Marshal(e)
	if err != nil {
		return err
	}
	return o.write(outboxFile(e.Name), data)
}

// write writes name atomically and durably: a temporary file, flushed,
// renamed into place, then the folder flushed.
func (o outbox) write(name string, data []byte) error {
	var rnd [8]byte
	rand.Read(rnd[:])
	tmp := filepath.Join(o.dir, site.TempPrefix+name+"-"+hex.EncodeToString(rnd[:]))
	f, err := o.fs.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("outbox: %w", err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = o.fs.Rename(tmp, filepath.Join(o.dir, name))
	}
	if err != nil {
		o.fs.Remove(tmp)
		return fmt.Errorf("outbox: %w", err)
	}
	return o.syncDir()
}

// remove removes name durably; a missing file is fine.
func (o outbox) remove(name string) error {
	if err := o.fs.Remove(filepath.Join(o.dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("outbox: %w", err)
	}
	return o.syncDir()
}

// syncDir flushes the outbox folder, so that the names written or removed
// in it survive a power loss. A file system that cannot flush a folder
// (EINVAL) is not an error.
func (o outbox) syncDir() error {
	d, err := o.fs.Open(o.dir)
	if err != nil {
		return fmt.Errorf("outbox: %w", err)
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil && !errors.Is(err, syscall.EINVAL) {
		return fmt.Errorf("outbox: sync %s: %w", o.dir, err)
	}
	return nil
}

// read returns the entries stored in the outbox, oldest first, and the
// intent files that say an export was under way when the last process
// stopped. Temporary files a crash left are removed (the caller holds the
// outbox's lock: nobody else writes there). A file that does not parse
// is an error naming it.
func (o outbox) read() (entries []*outboxEntry, intents []string, err error) {
	des, err := afero.ReadDir(o.fs, o.dir)
	if err != nil {
		return nil, nil, fmt.Errorf("outbox: %w", err)
	}
	for _, de := range des {
		name := de.Name()
		switch {
		case strings.HasPrefix(name, site.TempPrefix):
			o.fs.Remove(filepath.Join(o.dir, name))
		case strings.HasPrefix(name, intentPrefix):
			intents = append(intents, name)
		case strings.HasSuffix(name, outboxSuffix) && !strings.HasPrefix(name, "."):
			data, err := afero.ReadFile(o.fs, filepath.Join(o.dir, name))
			if err != nil {
				return nil, nil, fmt.Errorf("outbox: %w", err)
			}
			var e outboxEntry
			if err := json.Unmarshal(data, &e); err != nil || e.Name == "" {
				return nil, nil, fmt.Errorf("outbox: %s is not an outbox entry (%v): move it away and run \"guidepub publish\" once", filepath.Join(o.dir, name), err)
			}
			entries = append(entries, &e)
		}
	}
	slices.SortFunc(entries, func(a, b *outboxEntry) int { return a.Since.Compare(b.Since) })
	return entries, intents, nil
}

// lockOutbox takes the lock of the outbox folder dir (a file lock on its
// lockFile, which the operating system releases when the process ends,
// however it ends), so that one process at a time uses an outbox. While
// another process holds it, it logs once who does and waits, trying again
// every poll, until the lock is free or ctx ends. It returns the lock to
// release, or an error when ctx ended or the lock file cannot be opened.
func lockOutbox(ctx context.Context, dir string, poll time.Duration, log *slog.Logger) (*flock.Flock, error) {
	path := filepath.Join(dir, lockFile)
	lk := flock.New(path, flock.SetPermissions(0o600))
	ok, err := lk.TryLock()
	if err != nil {
		return nil, fmt.Errorf("outbox: lock %s: %w", path, err)
	}
	if !ok {
		holder, _ := os.ReadFile(path)
		log.Warn("another guidepub process publishes from this private tree: waiting for it to stop",
			"kind", "conflict", "holder", strings.TrimSpace(string(holder)), "outbox", dir,
			"what to do", "run one watch or export with --publish per private tree; this one goes on once the other stops")
		if ok, err = lk.TryLockContext(ctx, poll); err != nil || !ok {
			if err == nil {
				err = ctx.Err()
			}
			return nil, fmt.Errorf("outbox: waiting for %s: %w", path, err)
		}
		log.Info("the other process stopped: publishing from this private tree", "outbox", dir)
	}
	// Who holds it, for the message of a process that waits.
	host, _ := os.Hostname()
	os.WriteFile(path, fmt.Appendf(nil, "pid %d on %s\n", os.Getpid(), host), 0o600)
	return lk, nil
}

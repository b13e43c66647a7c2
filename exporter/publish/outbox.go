package publish

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gofrs/flock"
	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/exporter/durable"
	"github.com/guidepub/guidepub/site"
)

// The outbox is a folder (in the private tree) with one JSON file per
// guide whose changed files are not all in the bucket yet, and one intent
// file per export under way. Each file is written atomically (temporary
// file, fsync, rename, folder fsync: package durable), so a crash leaves
// the old or the new version of it, never a part. One process at a time
// uses an outbox: it holds the lock on its folder while it runs (see
// lockOutbox).
const (
	outboxSuffix = ".json"
	intentPrefix = "exporting-"
	lockFile     = durable.LockFile
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
	fs   afero.Fs
	path string
}

// writeEntry stores e atomically.
func (o outbox) writeEntry(e *outboxEntry) error {
	data, err := json.Marshal(e)
	if err != nil {
		return err
	}
	return o.write(outboxFile(e.Name), data)
}

// write writes name atomically and durably (durable.Dir.Write).
func (o outbox) write(name string, data []byte) error {
	if err := o.dir().Write(name, data); err != nil {
		return fmt.Errorf("outbox: %w", err)
	}
	return nil
}

// remove removes name durably; a missing file is fine.
func (o outbox) remove(name string) error {
	if err := o.dir().Remove(name); err != nil {
		return fmt.Errorf("outbox: %w", err)
	}
	return nil
}

func (o outbox) dir() durable.Dir { return durable.Dir{Fs: o.fs, Path: o.path} }

// read returns the entries stored in the outbox, oldest first, and the
// intent files that say an export was under way when the last process
// stopped. Temporary files a crash left are removed (the caller holds the
// outbox's lock: nobody else writes there). A file that does not parse
// is an error naming it.
func (o outbox) read() (entries []*outboxEntry, intents []string, err error) {
	des, err := afero.ReadDir(o.fs, o.path)
	if err != nil {
		return nil, nil, fmt.Errorf("outbox: %w", err)
	}
	for _, de := range des {
		name := de.Name()
		switch {
		case durable.IsTemp(name):
			o.fs.Remove(filepath.Join(o.path, name))
		case strings.HasPrefix(name, intentPrefix):
			intents = append(intents, name)
		case strings.HasSuffix(name, outboxSuffix) && !strings.HasPrefix(name, "."):
			data, err := afero.ReadFile(o.fs, filepath.Join(o.path, name))
			if err != nil {
				return nil, nil, fmt.Errorf("outbox: %w", err)
			}
			var e outboxEntry
			if err := json.Unmarshal(data, &e); err != nil || e.Name == "" {
				return nil, nil, fmt.Errorf("outbox: %s is not an outbox entry (%v): move it away and run \"guidepub publish\" once", filepath.Join(o.path, name), err)
			}
			entries = append(entries, &e)
		}
	}
	slices.SortFunc(entries, func(a, b *outboxEntry) int { return a.Since.Compare(b.Since) })
	return entries, intents, nil
}

// lockOutbox takes the lock of the outbox folder dir (durable.Lock), so
// that one process at a time uses an outbox.
func lockOutbox(ctx context.Context, dir string, poll time.Duration, log *slog.Logger) (*flock.Flock, error) {
	lk, err := durable.Lock(ctx, dir, poll, log, "publishes from this private tree")
	if err != nil {
		return nil, fmt.Errorf("outbox: %w", err)
	}
	return lk, nil
}

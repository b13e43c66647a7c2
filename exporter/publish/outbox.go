package publish

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/google/renameio/v2"

	"github.com/guidepub/guidepub/site"
)

// The outbox is a folder (in the private tree) with one JSON file per
// guide whose changed files are not all in the bucket yet, and one intent
// file per export under way. Each file is written atomically (temporary
// file, fsync, rename, folder fsync), so a crash leaves the old or the new
// version of it, never a part.
const (
	outboxSuffix = ".json"
	intentPrefix = "exporting-"
)

// outboxEntry is one guide's pending uploads as stored.
type outboxEntry struct {
	Name    string    `json:"name"` // guide id, or "folder:<name>" when none is known
	Since   time.Time `json:"since"`
	Files   []string  `json:"files"` // public files (documents, not their siblings), sorted
	Removed bool      `json:"-"`
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

// writeEntry stores e in dir atomically.
func writeEntry(dir string, e *outboxEntry) error {
	data, err := json.Marshal(e)
	if err != nil {
		return err
	}
	return writeSynced(dir, outboxFile(e.Name), data)
}

// writeSynced writes name in dir atomically and durably.
func writeSynced(dir, name string, data []byte) error {
	if err := renameio.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
		return fmt.Errorf("outbox: %w", err)
	}
	return syncDir(dir)
}

// removeSynced removes name from dir durably; a missing file is fine.
func removeSynced(dir, name string) error {
	if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("outbox: %w", err)
	}
	return syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("outbox: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("outbox: sync %s: %w", dir, err)
	}
	return nil
}

// readOutbox returns the entries stored in dir, oldest first, and the
// intent files that say an export was under way when the last process
// stopped. A file that does not parse is an error naming it.
func readOutbox(dir string) (entries []*outboxEntry, intents []string, err error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("outbox: %w", err)
	}
	for _, de := range des {
		name := de.Name()
		switch {
		case strings.HasPrefix(name, intentPrefix):
			intents = append(intents, name)
		case strings.HasSuffix(name, outboxSuffix) && !strings.HasPrefix(name, "."):
			data, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				return nil, nil, fmt.Errorf("outbox: %w", err)
			}
			var e outboxEntry
			if err := json.Unmarshal(data, &e); err != nil || e.Name == "" {
				return nil, nil, fmt.Errorf("outbox: %s is not an outbox entry (%v): move it away and run \"guidepub publish\" once", filepath.Join(dir, name), err)
			}
			entries = append(entries, &e)
		}
	}
	slices.SortFunc(entries, func(a, b *outboxEntry) int { return a.Since.Compare(b.Since) })
	return entries, intents, nil
}

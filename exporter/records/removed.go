package records

import (
	"errors"
	"fmt"
	"io/fs"
	"path"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/site"
)

// The removed marks keep what the records alone would forget: the public
// ids (view ids and aliases) this exporter stopped publishing, a guide
// removed or a view dropped from guide.json. Once a guide's record is
// deleted or no longer lists an id, nothing else says that the objects a
// bucket still holds under it were withdrawn rather than only missing
// from a tree; a publisher reconciling after a crash asks (Withdrawn), so
// that their deletion is recorded intent, not bounded by its limit of
// deletions. A mark is a small file removed/<public id> in the records
// folder naming the guide that dropped the id, written and flushed before
// the record stops listing it; it goes when a guide's record lists the id
// again (link), which then decides.
const RemovedDir = "removed"

// removedFile returns the private-tree path of the removed mark of pid.
func (r *Records) removedFile(pid string) string { return r.dir + "/" + RemovedDir + "/" + pid }

// markRemoved writes the removed marks of the public ids pids, naming
// guide id, and flushes their folder: before the record that listed them
// stops listing them.
func (r *Records) markRemoved(id string, pids []string) error {
	if len(pids) == 0 {
		return nil
	}
	dir := r.t.Abs(r.dir + "/" + RemovedDir)
	if err := r.t.FS.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("mark the ids of %s removed: %w", id, err)
	}
	for _, pid := range pids {
		tmp := path.Join(dir, site.TempPrefix+pid)
		if err := afero.WriteFile(r.t.FS, tmp, []byte(id+"\n"), r.t.Perm); err != nil {
			return fmt.Errorf("mark the ids of %s removed: %w", id, err)
		}
		if err := r.t.FS.Rename(tmp, r.t.Abs(r.removedFile(pid))); err != nil {
			_ = r.t.FS.Remove(tmp)
			return fmt.Errorf("mark the ids of %s removed: %w", id, err)
		}
	}
	if err := r.t.SyncDir(r.dir + "/" + RemovedDir); err != nil {
		return fmt.Errorf("mark the ids of %s removed: %w", id, err)
	}
	return nil
}

// unmarkRemoved deletes the removed mark of pid, if any: a record is about
// to list it again. It does its best: a mark left behind says nothing
// while a record holds the id.
func (r *Records) unmarkRemoved(pid string) {
	_ = r.t.FS.Remove(r.t.Abs(r.removedFile(pid)))
}

// wasRemoved reports whether this exporter stopped publishing the public
// id pid (its removed mark exists). It returns an error when the mark
// cannot be examined.
func (r *Records) wasRemoved(pid string) (bool, error) {
	if !site.ValidID.MatchString(pid) {
		return false, nil
	}
	_, err := r.t.FS.Stat(r.t.Abs(r.removedFile(pid)))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	}
	return false, fmt.Errorf("exporter: removed mark of %s: %w", pid, err)
}

package records

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/site"
)

// The ids index lets a claim be checked before every record is read (see
// docs/robustness.md#the-ids-index): for each public id (view id or alias) a
// record lists, a small file ids/<public id> in the records folder names
// the guide id of a record that lists it. It promises one thing: a public
// id whose file is missing is listed by no record. So a claim looks up
// its ids in one read each, and reads the record the file names:
//
//   - no file: the id is free (as far as records go);
//   - a file naming a guide whose record lists the id: that guide holds it;
//   - anything else (a file naming a guide whose record no longer lists
//     it, an unreadable file): not known, the claim waits for every record.
//
// Files are written before the record that lists their id, their folder
// flushed in between (a name that could be lost on power loss is never
// the only trace of a record's id), and deleted after it, only when they
// still name that guide. A stale file (left by a crash between the two)
// costs a wait, never a wrong answer.
//
// The index is complete once idsMarker exists: a records folder written by
// an earlier version has none, and its first load (by an exporter,
// StartRecords) writes the files of every record, then the marker. The
// marker is a file versions without the index refuse to read as a
// record, so that one of them cannot go on publishing without keeping the
// index up to date (docs/robustness.md#going-back-to-an-earlier-version).
const (
	idsDir    = "ids"
	idsMarker = "ids.index.json"
)

// IDsMarker is the name, in a records folder, of the marker of a complete
// ids index: without it the index is rebuilt from the records.
const IDsMarker = idsMarker

// idsMarkerContent is what idsMarker holds.
const idsMarkerContent = `{"version":3,"index":"ids","note":"every public id a record of this folder lists has a file in ids/"}` + "\n"

// errUnknown is what an index look-up returns when the index cannot tell.
var errUnknown = errors.New("not known before every record is read")

// idFile returns the private-tree path of the index file of public id pid.
func (r *Records) idFile(pid string) string { return r.dir + "/" + idsDir + "/" + pid }

// indexedOwner returns the guide id the index file of pid names, "" when
// there is none (pid is listed by no record), or errUnknown when the file
// cannot be read or names no valid guide id.
func (r *Records) indexedOwner(pid string) (string, error) {
	data, err := r.t.Read(r.idFile(pid))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	gid := strings.TrimSpace(string(data))
	if err != nil || !site.ValidID.MatchString(gid) {
		return "", errUnknown
	}
	return gid, nil
}

// link makes the index files of the public ids pids name guide id, then
// flushes their folder when one was written: before the record listing
// them is written.
func (r *Records) link(id string, pids []string) error {
	wrote := false
	for _, pid := range pids {
		if gid, err := r.indexedOwner(pid); err == nil && gid == id {
			continue
		}
		if err := r.writeIndexFile(pid, id, true); err != nil {
			return fmt.Errorf("index the ids of %s: %w", id, err)
		}
		r.unmarkRemoved(pid) // a record lists it again (removed.go)
		wrote = true
	}
	if !wrote {
		return nil
	}
	if err := r.t.SyncDir(r.dir + "/" + idsDir); err != nil {
		return fmt.Errorf("index the ids of %s: %w", id, err)
	}
	return nil
}

// unlink deletes the index files of the public ids pids that still name
// guide id: after its record stopped listing them. It does its best: a
// file it cannot delete is a stale one, which costs a claim a wait, and
// the record's change it follows is done.
func (r *Records) unlink(id string, pids []string) {
	for _, pid := range pids {
		if gid, err := r.indexedOwner(pid); err == nil && gid == id {
			_ = r.t.FS.Remove(r.t.Abs(r.idFile(pid)))
		}
	}
}

// writeIndexFile writes the index file of pid naming guide id. With
// replace, it replaces the file there atomically (a new name, renamed);
// without, it leaves an existing file as it is. The bytes are not flushed:
// a file emptied by a power loss is unreadable, which costs a wait only.
func (r *Records) writeIndexFile(pid, id string, replace bool) error {
	dst := r.t.Abs(r.idFile(pid))
	if err := r.t.FS.MkdirAll(path.Dir(dst), 0o755); err != nil {
		return err
	}
	if !replace {
		f, err := r.t.FS.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, r.t.Perm)
		if errors.Is(err, fs.ErrExist) {
			return nil
		}
		if err != nil {
			return err
		}
		_, err = f.WriteString(id + "\n")
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}
	tmp := path.Join(path.Dir(dst), site.TempPrefix+pid)
	if err := afero.WriteFile(r.t.FS, tmp, []byte(id+"\n"), r.t.Perm); err != nil {
		return err
	}
	if err := r.t.FS.Rename(tmp, dst); err != nil {
		_ = r.t.FS.Remove(tmp)
		return err
	}
	return nil
}

// indexComplete reports whether the marker of a complete index exists.
func (r *Records) indexComplete() bool {
	_, err := r.t.FS.Stat(r.t.Abs(r.dir + "/" + idsMarker))
	return err == nil
}

// buildIndex writes the index files the records read by load lack (those
// there are kept: they were written for a record since), flushes them,
// then writes the marker: the first load of a records folder written by
// an earlier version.
func (r *Records) buildIndex() error {
	r.mu.Lock()
	owners := make(map[string]string, len(r.owners))
	for pid, gid := range r.owners {
		owners[pid] = gid
	}
	r.mu.Unlock()
	if err := r.t.FS.MkdirAll(r.t.Abs(r.dir+"/"+idsDir), 0o755); err != nil {
		return fmt.Errorf("exporter: index the records' ids: %w", err)
	}
	for pid, gid := range owners {
		if err := r.writeIndexFile(pid, gid, false); err != nil {
			return fmt.Errorf("exporter: index the records' ids: %w", err)
		}
	}
	if err := r.t.SyncDir(r.dir + "/" + idsDir); err != nil {
		return fmt.Errorf("exporter: index the records' ids: %w", err)
	}
	if err := r.t.WriteSynced(r.dir+"/"+idsMarker, []byte(idsMarkerContent)); err != nil {
		return fmt.Errorf("exporter: index the records' ids: %w", err)
	}
	return nil
}

package exporter

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/site"
)

// rereadFs is a file system that notes the files renamed into place (the
// exporter's writes end so, on a file system other than the OS's) and,
// once the file mark is renamed into place, counts the openings for
// reading of the files written before.
type rereadFs struct {
	afero.Fs
	mark      string
	mu        sync.Mutex
	written   map[string]bool
	recording bool
	reread    map[string]int
}

func newRereadFs(fsys afero.Fs, mark string) *rereadFs {
	c := &rereadFs{Fs: fsys, mark: mark}
	c.reset()
	return c
}

func (c *rereadFs) read(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.recording && c.written[name] {
		c.reread[name]++
	}
}

func (c *rereadFs) Open(name string) (afero.File, error) {
	c.read(name)
	return c.Fs.Open(name)
}

func (c *rereadFs) OpenFile(name string, flag int, perm os.FileMode) (afero.File, error) {
	if flag&(os.O_WRONLY|os.O_RDWR|os.O_CREATE|os.O_TRUNC|os.O_APPEND) == 0 {
		c.read(name)
	}
	return c.Fs.OpenFile(name, flag, perm)
}

func (c *rereadFs) Rename(oldname, newname string) error {
	err := c.Fs.Rename(oldname, newname)
	if err == nil {
		c.mu.Lock()
		c.written[newname] = true
		c.recording = c.recording || newname == c.mark
		c.mu.Unlock()
	}
	return err
}

// reset forgets what was written and read, and waits for the mark again.
func (c *rereadFs) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.written, c.recording, c.reread = map[string]bool{}, false, map[string]int{}
}

// TestRecordsHashWhatWasWritten checks that the hashes of a guide's record
// are taken as its files are written: once the guide's files are written
// (its private site.RecordPath is the last), no file the export wrote is
// read again to make the exporter's record, on a first export and on an
// export of a changed guide, and the records still hold both hashes of
// every file (TestRecordsOnePerGuide compares them with the files).
func TestRecordsHashWhatWasWritten(t *testing.T) {
	ev := newEnv(t, fsKinds[0])
	counting := newRereadFs(ev.out, filepath.Join(ev.privDir, filepath.FromSlash(site.RecordPath(kingGuide))))
	ev.cfg.Out, ev.cfg.Private = counting, counting
	e := ev.exporter()
	check := func(when string, written int) {
		t.Helper()
		counting.mu.Lock()
		defer counting.mu.Unlock()
		if written == 0 || !counting.recording {
			t.Fatalf("%s: %d files written, guide record written: %v", when, written, counting.recording)
		}
		for name, n := range counting.reread {
			t.Errorf("%s: %s opened %d times for reading after it was written", when, name, n)
		}
	}
	if r, err := e.ExportBundle(context.Background(), kingFolder); err != nil {
		t.Fatal(err)
	} else {
		check("first export", r.Written)
	}
	counting.reset()
	ev.editGuide(kingFolder, func(g map[string]any) {
		g["property"].(map[string]any)["city"] = "Waterloo"
	})
	if r, err := e.ExportBundle(context.Background(), kingFolder); err != nil || !r.Changed || r.Unchanged == 0 {
		t.Fatalf("ExportBundle after an edit: %+v, %v", r, err)
	} else {
		check("export of a changed guide", r.Written)
	}
	for f, err := range e.Records().PublicFiles() {
		if err != nil {
			t.Fatal(err)
		}
		if len(f.SHA256) != 64 || len(f.MD5) != 32 {
			t.Errorf("record of %s is %+v: a hash is missing", f.Path, f)
		}
	}
}

package serve

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/guidepub/guidepub/site/fswatch"
)

// watcher reports the changes of the tree to the server's cache. Every
// folder is watched (fswatch.Tree), new folders as they appear. A changed
// file is reported at once. Creations, renames and removals, which may be
// of folders, are gathered and reported as folders once the tree has been
// quiet for the debounce time (at the latest maxWait after the first
// event of a burst), after the watches of folders that may have been
// renamed are renewed.
type watcher struct {
	tree     *fswatch.Tree
	dir      string
	debounce time.Duration
	maxWait  time.Duration
	changes  changeSink
	logger   *slog.Logger
	cancel   context.CancelFunc
	wg       sync.WaitGroup
}

// newEvents replaces fsnotify.NewWatcher in tests (to see the polling
// fallback); it is the same hook as the exporter's watcher has.
var newEvents = fsnotify.NewWatcher

// hidden reports whether a file or folder is one the watcher ignores:
// temp files are hidden until renamed into place.
func hidden(name string) bool { return strings.HasPrefix(name, ".") }

// changeSink receives the changes a watcher sees; *Server is one.
type changeSink interface {
	changedFile(p string)
	changedUnder(dirs []string)
}

// startWatcher starts watching every folder under dir. It returns an
// error when the watch cannot be set up (the Server checks cached files
// by age instead).
func startWatcher(dir string, debounce time.Duration, changes changeSink, logger *slog.Logger) (*watcher, error) {
	tree, err := fswatch.Watch(fswatch.Config{Dir: dir, Skip: hidden, NewEvents: newEvents})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := &watcher{
		tree:     tree,
		dir:      dir,
		debounce: debounce,
		maxWait:  10 * debounce,
		changes:  changes,
		logger:   logger,
		cancel:   cancel,
	}
	w.wg.Add(1)
	go w.run(ctx)
	return w, nil
}

// burstKey is the debouncer's one key: the whole tree.
const burstKey = ""

func (w *watcher) run(ctx context.Context) {
	defer w.wg.Done()
	changes := make(chan fswatch.Change)
	errs := make(chan error)
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		w.tree.Run(ctx, func(c fswatch.Change) {
			select {
			case changes <- c:
			case <-ctx.Done():
			}
		}, func(err error) {
			select {
			case errs <- err:
			case <-ctx.Done():
			}
		})
	}()
	deb := fswatch.NewDebouncer(w.debounce, w.maxWait)
	moved := map[string]bool{} // paths created, renamed or removed in this burst
	var (
		timer  *time.Timer
		timerC <-chan time.Time
	)
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	arm := func() {
		if timer != nil {
			timer.Stop()
		}
		timer, timerC = nil, nil
		if next, ok := deb.Next(); ok {
			timer = time.NewTimer(max(time.Until(next), 0))
			timerC = timer.C
		}
	}
	for {
		select {
		case <-ctx.Done():
			return
		case c := <-changes:
			w.changes.changedFile(c.Path)
			if !c.Moved {
				continue
			}
			moved[c.Path] = true
			deb.Touch(burstKey, time.Now())
			arm()
		case <-timerC:
			timer, timerC = nil, nil
			if len(deb.Due(time.Now())) == 0 {
				arm()
				continue
			}
			w.settle(moved)
		case err := <-errs:
			if errors.Is(err, fswatch.ErrCannotWatch) {
				w.logger.Warn("serve: watch new folder", "err", err)
				continue
			}
			// An overflow loses events: check everything to be sure.
			w.logger.Warn("serve: watch", "err", err)
			w.changes.changedUnder([]string{""})
		}
	}
}

// settle reports the paths moved (created, renamed or removed) in a
// burst as changed folders, then forgets them. When one of them is or was
// a folder, the watches of its top-level folder are renewed first, and
// since events can be lost while they are, everything cached under that
// folder is reported as changed after.
func (w *watcher) settle(moved map[string]bool) {
	paths := make([]string, 0, len(moved))
	tops := map[string]bool{}
	for p := range moved {
		paths = append(paths, p)
		if fi, err := os.Lstat(filepath.Join(w.dir, filepath.FromSlash(p))); err == nil && fi.Mode().IsRegular() {
			continue // a file renamed into place: no watch moved
		}
		top, _, _ := strings.Cut(p, "/")
		tops[top] = true
	}
	clear(moved)
	if len(tops) > 0 {
		folders := make([]string, 0, len(tops))
		for top := range tops {
			folders = append(folders, top)
		}
		if err := w.tree.Renew(folders); err != nil {
			w.logger.Warn("serve: watch renamed folders", "err", err)
		}
		paths = append(paths, folders...)
	}
	w.changes.changedUnder(paths)
}

// close stops the watcher and waits for its goroutines to finish.
func (w *watcher) close() error {
	w.cancel()
	err := w.tree.Close()
	w.wg.Wait()
	return err
}

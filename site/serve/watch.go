package serve

import (
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// watcher calls reload shortly after the tree changes. fsnotify is not
// recursive, so every folder is watched and new folders are added as they
// appear. Events are debounced: reload runs once the tree has been quiet
// for the debounce time, and at the latest maxWait after the first event
// of a burst, so a steady stream of writes still shows up.
type watcher struct {
	fsw      *fsnotify.Watcher
	debounce time.Duration
	maxWait  time.Duration
	reload   func()
	logger   *slog.Logger
	done     chan struct{}
	wg       sync.WaitGroup
}

// newWatcher starts watching every folder under dir. It returns an error
// when the watch cannot be set up.
func newWatcher(dir string, debounce time.Duration, reload func(), logger *slog.Logger) (*watcher, error) {
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	w := &watcher{
		fsw:      fsw,
		debounce: debounce,
		maxWait:  10 * debounce,
		reload:   reload,
		logger:   logger,
		done:     make(chan struct{}),
	}
	if err := w.addTree(dir); err != nil {
		fsw.Close()
		return nil, err
	}
	w.wg.Add(1)
	go w.run()
	return w, nil
}

// addTree watches dir and every folder below it, skipping hidden ones.
func (w *watcher) addTree(dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p != dir {
				return nil
			}
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if p != dir && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		return w.fsw.Add(p)
	})
}

func (w *watcher) run() {
	defer w.wg.Done()
	var (
		timer   *time.Timer
		timerC  <-chan time.Time
		burstAt time.Time
	)
	for {
		select {
		case <-w.done:
			if timer != nil {
				timer.Stop()
			}
			return
		case ev, ok := <-w.fsw.Events:
			if !ok {
				return
			}
			if ev.Op == fsnotify.Chmod || strings.HasPrefix(filepath.Base(ev.Name), ".") {
				continue // temp files are invisible until renamed into place
			}
			if ev.Op.Has(fsnotify.Create) {
				if info, err := os.Lstat(ev.Name); err == nil && info.IsDir() {
					if err := w.addTree(ev.Name); err != nil {
						w.logger.Warn("serve: watch new folder", "dir", ev.Name, "err", err)
					}
				}
			}
			now := time.Now()
			if timer == nil {
				burstAt = now
				timer = time.NewTimer(w.debounce)
				timerC = timer.C
				continue
			}
			wait := w.debounce
			if rest := w.maxWait - now.Sub(burstAt); rest < wait {
				wait = max(rest, 0)
			}
			timer.Reset(wait)
		case <-timerC:
			timer, timerC = nil, nil
			w.reload()
		case err, ok := <-w.fsw.Errors:
			if !ok {
				return
			}
			// An overflow loses events: reload to be sure nothing is missed.
			w.logger.Warn("serve: watch", "err", err)
			w.reload()
		}
	}
}

// close stops the watcher and waits for a running reload to finish.
func (w *watcher) close() error {
	close(w.done)
	err := w.fsw.Close()
	w.wg.Wait()
	return err
}

// startWatcher is newWatcher; tests replace it to see the polling fallback.
var startWatcher = newWatcher

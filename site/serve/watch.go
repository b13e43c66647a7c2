package serve

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/guidepub/guidepub/site/fswatch"
)

// watcher calls reload shortly after the tree changes. Every folder is
// watched (fswatch.Tree), new folders as they appear. Events are
// debounced: reload runs once the tree has been quiet for the debounce
// time, and at the latest maxWait after the first event of a burst, so a
// steady stream of writes still shows up. The watches of folders that may
// have been renamed are renewed before the reload.
type watcher struct {
	tree     *fswatch.Tree
	debounce time.Duration
	maxWait  time.Duration
	reload   func()
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

// startWatcher starts watching every folder under dir. It returns an
// error when the watch cannot be set up (Server.New polls instead).
func startWatcher(dir string, debounce time.Duration, reload func(), logger *slog.Logger) (*watcher, error) {
	tree, err := fswatch.Watch(fswatch.Config{Dir: dir, Skip: hidden, NewEvents: newEvents})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := &watcher{
		tree:     tree,
		debounce: debounce,
		maxWait:  10 * debounce,
		reload:   reload,
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
	moved := map[string]bool{} // top-level folders whose watches to renew
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
			deb.Touch(burstKey, time.Now())
			if c.Moved {
				top, _, _ := strings.Cut(c.Path, "/")
				moved[top] = true
			}
			arm()
		case <-timerC:
			timer, timerC = nil, nil
			if len(deb.Due(time.Now())) == 0 {
				arm()
				continue
			}
			if len(moved) > 0 {
				folders := make([]string, 0, len(moved))
				for f := range moved {
					folders = append(folders, f)
				}
				clear(moved)
				if err := w.tree.Renew(folders); err != nil {
					w.logger.Warn("serve: watch renamed folders", "err", err)
				}
			}
			w.reload()
		case err := <-errs:
			if errors.Is(err, fswatch.ErrCannotWatch) {
				w.logger.Warn("serve: watch new folder", "err", err)
				continue
			}
			// An overflow loses events: reload to be sure nothing is missed.
			w.logger.Warn("serve: watch", "err", err)
			w.reload()
		}
	}
}

// close stops the watcher and waits for a running reload to finish.
func (w *watcher) close() error {
	w.cancel()
	err := w.tree.Close()
	w.wg.Wait()
	return err
}

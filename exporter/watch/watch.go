package watch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/site/clock"
	"github.com/guidepub/guidepub/site/fswatch"
)

// Handler is told which bundle folder to re-export or unpublish. Calls for
// one folder never overlap; calls for different folders may run at the same
// time (Config.Jobs).
type Handler interface {
	// Changed re-exports folder. next is when to call Changed again for it
	// (a view expires then), zero for never. An error (an incomplete or
	// invalid upload, a file that cannot be written) is reported by the
	// Watcher once per distinct message; the next change of the folder
	// tries again, and so does next when it is not zero (an I/O error is
	// worth trying again; an invalid bundle is not).
	Changed(ctx context.Context, folder string) (next time.Time, err error)
	// Removed unpublishes what folder published: the folder is gone.
	Removed(ctx context.Context, folder string) error
}

// Defaults of Config.
const (
	DefaultDebounce = 150 * time.Millisecond
	DefaultMaxWait  = 2 * time.Second
	DefaultPoll     = 2 * time.Second
)

// Modes in which a Watcher sees changes (Watcher.Mode).
const (
	ModeEvents = "events" // file system events (fsnotify)
	ModePoll   = "poll"   // periodic scans
)

// Watcher watches a source folder of bundles and calls its Handler. Create
// it with New, then call Run once.
type Watcher struct {
	cfg   Config
	root  string
	log   *slog.Logger
	clock clock.Clock

	in      chan input    // everything the loop reacts to
	stopped chan struct{} // closed when the loop ends
	watched chan struct{} // closed once watchExisting returns (tests)

	mu       sync.Mutex
	mode     string
	events   *fswatch.Tree    // nil while polling
	snap     fswatch.Snapshot // baseline of the poller (ModePoll)
	schedule map[string]time.Time
	known    []string  // bundle folders present when New ran
	since    time.Time // a little before the root was watched (ModeEvents)
	running  bool
}

// input is one thing for the loop to do.
type input struct {
	kind    inputKind
	folders []string      // inTouch
	rewatch bool          // inTouch: the folders' watches must be checked
	done    bool          // inTouch: an upload completed by a rename: no quiet period
	res     result        // inDone
	err     error         // inFallback
	fn      func(*state)  // inInspect
	ack     chan struct{} // inInspect: closed once fn ran
}

type inputKind int

const (
	inTouch    inputKind = iota // folders changed now
	inWake                      // a timer fired: look at what is due
	inDone                      // a handler call finished
	inFallback                  // file system events failed: poll instead
	inRescan                    // events were lost: touch everything
	inSchedule                  // Schedule was called
	inInspect                   // tests: run fn in the loop
)

// result is the outcome of one handler call.
type result struct {
	folder  string
	next    time.Time
	removed bool // the folder was gone: Removed was called (or nothing to do)
	called  bool // a handler method was called
	err     error
}

// New checks cfg and starts watching cfg.Dir: changes made after New
// returns are seen by Run, even if Run starts later (the caller typically
// exports everything in between). It tries file system events first and
// falls back to polling, with one warning, when they cannot be set up. It
// uses cfg as given (start from DefaultConfig) and returns an error when
// cfg.Validate refuses cfg or Dir cannot be read.
func New(cfg Config) (*Watcher, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("watch: %w", err)
	}
	// Zero means zero: the defaults are DefaultConfig's. Only a nil Logger
	// is given its documented meaning.
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	root, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", cfg.Dir, err)
	}
	w := &Watcher{
		cfg:      cfg,
		root:     root,
		log:      cfg.Logger,
		clock:    cfg.Clock,
		in:       make(chan input, 64),
		stopped:  make(chan struct{}),
		watched:  make(chan struct{}),
		schedule: make(map[string]time.Time),
	}
	if cfg.Poll > 0 {
		if err := w.startPolling(); err != nil {
			return nil, err
		}
	} else if err := w.startEvents(); err != nil {
		w.log.Warn("file system events unavailable: polling for changes instead",
			"dir", root, "interval", cfg.FallbackPoll.String(), "error", err.Error())
		if err := w.startPolling(); err != nil {
			return nil, err
		}
	}
	// Listed once the root is watched, so that no folder falls between the
	// list and the root's events.
	w.known, err = fswatch.Folders(root, Ignored)
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("watch %s: %w", cfg.Dir, err)
	}
	return w, nil
}

// Mode returns ModeEvents or ModePoll: how changes are currently seen.
func (w *Watcher) Mode() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.mode
}

// Schedule asks for Changed(folder) at time at (an expiry the caller learnt
// from its own export). A later Schedule or a Changed result for the same
// folder replaces it; a zero at cancels it.
func (w *Watcher) Schedule(folder string, at time.Time) {
	w.mu.Lock()
	w.schedule[folder] = at
	w.mu.Unlock()
	select {
	case w.in <- input{kind: inSchedule}:
	default: // the loop will find it with the next input, or at start
	}
}

// Close releases what New set up, for a Watcher whose Run will not be
// called; Run releases it itself. It returns the error of closing the file
// system events.
func (w *Watcher) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.running || w.events == nil {
		return nil
	}
	err := w.events.Close()
	w.events = nil
	return err
}

// stampSlack is how far before watching the root a change of a bundle
// folder may be stamped: file system timestamps come from a coarse clock
// that lags the one time.Now reads by up to a scheduler tick.
const stampSlack = 50 * time.Millisecond

// startEvents sets up file system events on the root of the tree only, so
// that an upload is seen at once at any corpus size; Run adds the watches
// of the bundle folders already there in the background (watchExisting).
func (w *Watcher) startEvents() error {
	since := time.Now()
	if s := w.cfg.Since; !s.IsZero() && s.Before(since) {
		since = s
	}
	since = since.Add(-stampSlack)
	ev, err := fswatch.Watch(fswatch.Config{Dir: w.root, Skip: Ignored, NewEvents: w.cfg.newEvents, RootOnly: true})
	if err != nil {
		return err
	}
	w.mu.Lock()
	w.events, w.mode, w.since = ev, ModeEvents, since
	w.mu.Unlock()
	return nil
}

// watchExisting adds the watches of the bundle folders present when New
// ran, one at a time, while the loop already reacts to changes seen by the
// root's watch. A folder changed before its watch was in place is found
// by its stamps (fswatch.Tree.AddExisting) and marked as changed. The
// folders whose own stamps say they changed since the start (an upload
// renamed into place as the watcher started, say) go first: they are
// uploads, and wait neither for the watches of the others nor for the
// caller's catch-up.
func (w *Watcher) watchExisting(ctx context.Context, ev *fswatch.Tree) {
	defer close(w.watched)
	w.mu.Lock()
	since := w.since
	w.mu.Unlock()
	changed := func(folder string) { w.send(input{kind: inTouch, folders: []string{folder}}) }
	recent := fswatch.Recent(w.root, w.known, since)
	err := ev.AddExisting(ctx, recent, since, changed)
	if err == nil {
		if w.cfg.beforeWatches != nil {
			w.cfg.beforeWatches(ctx)
		}
		if w.cfg.Hold != nil {
			select {
			case <-w.cfg.Hold:
			case <-ctx.Done():
				return
			}
		}
		rest := w.known
		if len(recent) > 0 {
			first := make(map[string]bool, len(recent))
			for _, f := range recent {
				first[f] = true
			}
			rest = slices.DeleteFunc(slices.Clone(w.known), func(f string) bool { return first[f] })
		}
		err = ev.AddExisting(ctx, rest, since, changed)
	}
	if err != nil && ctx.Err() == nil {
		w.send(input{kind: inFallback, err: err})
	}
}

// startPolling takes the poller's baseline.
func (w *Watcher) startPolling() error {
	snap, err := fswatch.Scan(w.root, Ignored)
	if err != nil {
		return fmt.Errorf("watch %s: %w", w.root, err)
	}
	w.mu.Lock()
	w.snap, w.mode = snap, ModePoll
	w.mu.Unlock()
	return nil
}

// Run calls the Handler for the changes it sees until ctx is done, then
// waits for the handler calls in progress to finish (they are not
// cancelled) and returns nil. It returns an
// error only when called twice.
func (w *Watcher) Run(ctx context.Context) error {
	w.mu.Lock()
	if w.running {
		w.mu.Unlock()
		return errors.New("watch: Run called twice")
	}
	w.running = true
	ev, mode := w.events, w.mode
	w.mu.Unlock()

	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
		w.mu.Lock()
		if w.events != nil {
			w.events.Close()
			w.events = nil
		}
		w.mu.Unlock()
	}()
	if mode == ModeEvents {
		wg.Add(2)
		go func() { defer wg.Done(); w.readEvents(ctx, ev) }()
		go func() { defer wg.Done(); w.watchExisting(ctx, ev) }()
	} else {
		w.goPoll(ctx, &wg, w.cfg.Poll)
	}

	work := make(chan string)
	for range w.cfg.Jobs {
		wg.Add(1)
		go func() { defer wg.Done(); w.work(ctx, work) }()
	}
	st := newState(w)
	st.run(ctx, work, &wg)
	return nil
}

// goPoll starts the poller with interval every (the fallback interval when
// zero).
func (w *Watcher) goPoll(ctx context.Context, wg *sync.WaitGroup, every time.Duration) {
	if every <= 0 {
		every = w.cfg.FallbackPoll
	}
	w.mu.Lock()
	snap := w.snap
	w.mu.Unlock()
	wg.Add(1)
	go func() { defer wg.Done(); w.poll(ctx, snap, every) }()
}

// send hands in to the loop; it gives up once the loop has ended.
func (w *Watcher) send(in input) {
	select {
	case w.in <- in:
	case <-w.stopped:
	}
}

// readEvents turns file system events into marks of bundle folders.
func (w *Watcher) readEvents(ctx context.Context, ev *fswatch.Tree) {
	ev.Run(ctx, func(c fswatch.Change) {
		folder, _, _ := strings.Cut(c.Path, "/")
		w.send(input{kind: inTouch, folders: []string{folder}, rewatch: c.Moved, done: uploadDone(folder, c)})
	}, func(err error) {
		switch {
		case errors.Is(err, fswatch.ErrOverflow):
			w.log.Warn("file system events were lost: checking every bundle", "dir", w.root)
			w.send(input{kind: inRescan})
		case errors.Is(err, fswatch.ErrCannotWatch):
			w.send(input{kind: inFallback, err: err})
		default:
			w.log.Warn("file system events", "dir", w.root, "error", err.Error())
		}
	})
}

// uploadDone reports whether c completes an upload of the bundle in
// folder: the bundle folder renamed into place from a name never watched
// (a staging folder), or its guide.json renamed into place. Either was
// complete before it got its name, so the bundle needs no quiet period.
// A folder renamed from a watched name is a move (its watches are renewed
// after the quiet period); other files renamed into place, and files
// written or created in place, may be followed by more.
func uploadDone(folder string, c fswatch.Change) bool {
	return c.Renamed && !c.Moved && (c.Path == folder || c.Path == folder+"/"+bundle.FileName)
}

// poll scans the tree every interval and marks the bundles that changed.
func (w *Watcher) poll(ctx context.Context, snap fswatch.Snapshot, every time.Duration) {
	var lastErr string
	for {
		wake := make(chan struct{})
		stop := w.clock.AfterFunc(every, func() { close(wake) })
		select {
		case <-ctx.Done():
			stop()
			return
		case <-wake:
		}
		cur, err := fswatch.Scan(w.root, Ignored)
		if err != nil {
			if msg := err.Error(); msg != lastErr {
				w.log.Error("cannot scan the source folder; bundles are left as published", "dir", w.root, "error", msg)
				lastErr = msg
			}
			continue
		}
		lastErr = ""
		if changed := fswatch.Changed(snap, cur); len(changed) > 0 {
			w.send(input{kind: inTouch, folders: changed})
		}
		snap = cur
	}
}

// work runs handler calls for the folders the loop hands out. A call in
// progress when ctx ends runs to its end: an export is not cut short.
func (w *Watcher) work(ctx context.Context, work <-chan string) {
	callCtx := context.WithoutCancel(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case folder := <-work:
			w.send(input{kind: inDone, res: w.call(callCtx, folder)})
		}
	}
}

// call re-exports folder, or unpublishes it when it is gone.
func (w *Watcher) call(ctx context.Context, folder string) (res result) {
	res.folder = folder
	defer func() {
		// A bundle must not take the watcher down with it.
		if p := recover(); p != nil {
			w.log.Error("handler panicked", "folder", folder, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			res.err = fmt.Errorf("watch %s: internal error: %v", folder, p)
		}
	}()
	fi, err := os.Lstat(filepath.Join(w.root, folder))
	switch {
	case err == nil && fi.IsDir():
		res.called = true
		res.next, res.err = w.cfg.Handler.Changed(ctx, folder)
	case err == nil || errors.Is(err, fs.ErrNotExist):
		res.removed = true
	default:
		res.err = fmt.Errorf("watch %s: %w", folder, err)
	}
	return res
}

// removed calls Handler.Removed, turning a panic into an error.
func (w *Watcher) removed(ctx context.Context, folder string) (err error) {
	defer func() {
		if p := recover(); p != nil {
			w.log.Error("handler panicked", "folder", folder, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			err = fmt.Errorf("watch %s: internal error: %v", folder, p)
		}
	}()
	return w.cfg.Handler.Removed(ctx, folder)
}

// state is the loop's: owned by the goroutine running state.run.
type state struct {
	w        *Watcher
	deb      *fswatch.Debouncer
	expiry   map[string]time.Time
	queue    []string
	queued   map[string]bool
	running  map[string]bool
	rerun    map[string]bool
	known    map[string]bool      // folders that may have published something
	rewatch  map[string]bool      // folders whose watches must be checked when due
	gone     map[string]time.Time // folders found gone, to unpublish once settled
	lastErr  map[string]string
	timerAt  time.Time
	stopTime func() bool
	calls    int // handler calls finished, for tests
}

func newState(w *Watcher) *state {
	st := &state{
		w:       w,
		deb:     fswatch.NewDebouncer(w.cfg.Debounce, w.cfg.MaxWait),
		expiry:  make(map[string]time.Time),
		queued:  make(map[string]bool),
		running: make(map[string]bool),
		rerun:   make(map[string]bool),
		known:   make(map[string]bool),
		rewatch: make(map[string]bool),
		gone:    make(map[string]time.Time),
		lastErr: make(map[string]string),
	}
	for _, f := range w.known {
		st.known[f] = true
	}
	return st
}

// run is the loop: it reacts to inputs one at a time until ctx is done.
func (st *state) run(ctx context.Context, work chan<- string, wg *sync.WaitGroup) {
	w := st.w
	defer func() {
		close(w.stopped)
		if st.stopTime != nil {
			st.stopTime()
		}
	}()
	st.takeSchedule()
	st.after()
	for {
		var out chan<- string
		var head string
		if len(st.queue) > 0 {
			out, head = work, st.queue[0]
		}
		select {
		case <-ctx.Done():
			return
		case out <- head:
			st.queue = st.queue[1:]
			delete(st.queued, head)
			st.running[head] = true
			if fi, err := os.Lstat(filepath.Join(w.root, head)); err == nil && fi.IsDir() {
				st.known[head] = true
			}
		case in := <-w.in:
			st.handle(ctx, in, wg)
		}
		st.after()
	}
}

// handle reacts to one input.
func (st *state) handle(ctx context.Context, in input, wg *sync.WaitGroup) {
	now := st.w.clock.Now()
	switch in.kind {
	case inTouch:
		for _, f := range in.folders {
			if in.done {
				st.uploaded(f)
				continue
			}
			st.deb.Touch(f, now)
			if in.rewatch {
				st.rewatch[f] = true
			}
		}
	case inWake:
	case inSchedule:
		st.takeSchedule()
	case inDone:
		st.done(ctx, in.res)
	case inFallback:
		st.fallback(ctx, in.err, wg)
	case inRescan:
		st.rescan(now)
	case inInspect:
		in.fn(st)
		close(in.ack)
	}
}

// uploaded queues folder, whose upload a rename just completed, without
// waiting for a quiet period. The events before the rename have all been
// read (one watcher's events come in order), so the changes pending for
// folder are part of that upload: the export reads them all, and so are
// the watches to renew, renewed first. Changes after the rename start a
// new burst, exported after the quiet period.
func (st *state) uploaded(folder string) {
	if st.rewatch[folder] {
		delete(st.rewatch, folder)
		st.w.rewatch([]string{folder})
	}
	st.deb.Forget(folder)
	st.enqueue(folder)
}

// after queues what is due and sets the timer for what is due next.
func (st *state) after() {
	now := st.w.clock.Now()
	dueNow := st.deb.Due(now)
	var moved []string
	for _, f := range dueNow {
		if st.rewatch[f] {
			moved = append(moved, f)
			delete(st.rewatch, f)
		}
	}
	if len(moved) > 0 {
		st.w.rewatch(moved)
	}
	for _, f := range dueNow {
		st.enqueue(f)
	}
	st.flushGone(now)
	var due []string
	for f, t := range st.expiry {
		if !t.After(now) {
			due = append(due, f)
			delete(st.expiry, f)
		}
	}
	sort.Strings(due)
	for _, f := range due {
		st.enqueue(f)
	}
	next, ok := st.deb.Next()
	for _, t := range st.expiry {
		if !ok || t.Before(next) {
			next, ok = t, true
		}
	}
	if ok && next.Equal(st.timerAt) {
		return
	}
	if st.stopTime != nil {
		st.stopTime()
		st.stopTime = nil
	}
	st.timerAt = time.Time{}
	if !ok {
		return
	}
	st.timerAt = next
	w := st.w
	st.stopTime = w.clock.AfterFunc(next.Sub(now), func() { w.send(input{kind: inWake}) })
}

// enqueue hands folder to a worker soon; if it is being exported now, once
// more when that call ends.
func (st *state) enqueue(folder string) {
	switch {
	case st.running[folder]:
		st.rerun[folder] = true
	case !st.queued[folder]:
		st.queued[folder] = true
		st.queue = append(st.queue, folder)
	}
}

// done records the result of a handler call.
func (st *state) done(ctx context.Context, res result) {
	w, f := st.w, res.folder
	delete(st.running, f)
	st.calls++
	if res.removed && st.known[f] && ctx.Err() == nil {
		// The folder may have been renamed: unpublishing waits until the
		// other changes are exported (see flushGone).
		if _, ok := st.gone[f]; !ok {
			st.gone[f] = w.clock.Now()
		}
	}
	if res.err != nil {
		if ctx.Err() != nil {
			return // shutting down: the call was cut short
		}
		if msg := res.err.Error(); st.lastErr[f] != msg {
			st.lastErr[f] = msg
			attrs := []any{"folder", f}
			if res.called && !res.next.IsZero() {
				attrs = append(attrs, "retry_in", res.next.Sub(w.clock.Now()).Round(time.Second).String())
			}
			// An export that changed what the views show withdrew what it
			// did not reach (docs/robustness.md#the-bucket-after-a-fault).
			w.log.Warn("bundle not exported; the guide stays as it was published, less any file withdrawn because the export changed what its views show",
				append(attrs, bundle.LogAttrs(res.err)...)...)
		}
		if res.called && !res.next.IsZero() {
			st.setExpiry(f, res.next) // tried again then
		}
	} else {
		if _, had := st.lastErr[f]; had {
			w.log.Info("bundle accepted again", "folder", f)
		}
		delete(st.lastErr, f)
		if res.called {
			st.setExpiry(f, res.next)
		}
	}
	if st.rerun[f] {
		delete(st.rerun, f)
		st.enqueue(f)
	}
}

// setExpiry schedules the next call for folder at next (zero: none). A time
// not after now is moved a quiet period ahead, so a clock disagreement
// between the handler and the Watcher cannot spin.
func (st *state) setExpiry(folder string, next time.Time) {
	if next.IsZero() {
		delete(st.expiry, folder)
		return
	}
	if now := st.w.clock.Now(); !next.After(now) {
		next = now.Add(st.w.cfg.Debounce)
	}
	st.expiry[folder] = next
}

// takeSchedule moves what Schedule recorded into the loop.
func (st *state) takeSchedule() {
	w := st.w
	w.mu.Lock()
	sched := w.schedule
	w.schedule = make(map[string]time.Time)
	w.mu.Unlock()
	for f, t := range sched {
		st.setExpiry(f, t)
	}
}

// fallback switches from file system events to polling, once.
func (st *state) fallback(ctx context.Context, cause error, wg *sync.WaitGroup) {
	w := st.w
	w.mu.Lock()
	ev := w.events
	if w.mode != ModeEvents {
		w.mu.Unlock()
		return
	}
	w.events = nil
	w.mu.Unlock()
	w.log.Warn("file system events unavailable: polling for changes instead",
		"dir", w.root, "interval", w.cfg.FallbackPoll.String(), "error", cause.Error())
	ev.Close()
	if err := w.startPolling(); err != nil {
		w.log.Error("cannot scan the source folder", "dir", w.root, "error", err.Error())
		w.mu.Lock()
		w.snap, w.mode = fswatch.Snapshot{}, ModePoll
		w.mu.Unlock()
	}
	// Changes between the failure and the baseline would be missed:
	// check every bundle once.
	st.rescan(w.clock.Now())
	w.goPoll(ctx, wg, 0)
}

// rescan marks every bundle folder, present or known, as changed.
func (st *state) rescan(now time.Time) {
	w := st.w
	folders, err := fswatch.Folders(w.root, Ignored)
	if err != nil {
		w.log.Error("cannot read the source folder", "dir", w.root, "error", err.Error())
		return
	}
	w.mu.Lock()
	ev := w.events
	w.mu.Unlock()
	if ev != nil {
		if err := ev.RenewAll(folders); err != nil {
			w.log.Warn("cannot watch every folder", "dir", w.root, "error", err.Error())
		}
	}
	for _, f := range folders {
		st.deb.Touch(f, now)
	}
	for f := range st.known {
		st.deb.Touch(f, now)
	}
}

// flushGone unpublishes the folders found gone once nothing else is being
// exported or queued and no other change is pending (or the oldest has
// waited MaxWait). A renamed bundle folder is exported under its new name
// first, which takes its guide over, so that unpublishing the old name
// finds nothing left to remove: the guide stays published throughout a
// move. Unpublishing runs in the loop, not in a worker, so it never
// overlaps an export. A folder that came back is exported instead.
func (st *state) flushGone(now time.Time) {
	if len(st.gone) == 0 || len(st.running) > 0 || len(st.queue) > 0 {
		return
	}
	if st.deb.Len() > 0 {
		waited := false
		for _, t := range st.gone {
			if now.Sub(t) >= st.w.cfg.MaxWait {
				waited = true
			}
		}
		if !waited {
			return
		}
	}
	w := st.w
	folders := make([]string, 0, len(st.gone))
	for f := range st.gone {
		folders = append(folders, f)
	}
	sort.Strings(folders)
	ctx := context.Background()
	for _, f := range folders {
		delete(st.gone, f)
		if fi, err := os.Lstat(filepath.Join(w.root, f)); err == nil && fi.IsDir() {
			st.enqueue(f)
			continue
		}
		if err := w.removed(ctx, f); err != nil {
			if msg := err.Error(); st.lastErr[f] != msg {
				st.lastErr[f] = msg
				w.log.Warn("bundle not unpublished; what was published stays as it was", "folder", f, "error", msg)
			}
			continue
		}
		delete(st.lastErr, f)
		delete(st.known, f)
		delete(st.expiry, f)
		w.log.Info("bundle removed: its views are unpublished", "folder", f)
	}
}

// rewatch renews the watches of the bundle folders named, after a burst
// that may have renamed them (see fswatch.Tree.Renew), and falls back to
// polling when a folder cannot be watched.
func (w *Watcher) rewatch(folders []string) {
	w.mu.Lock()
	ev := w.events
	w.mu.Unlock()
	if ev == nil {
		return
	}
	if err := ev.Renew(folders); err != nil {
		go w.send(input{kind: inFallback, err: err})
	}
}

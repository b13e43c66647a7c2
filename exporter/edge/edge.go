package edge

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofrs/flock"
	"github.com/spf13/afero"
	"golang.org/x/time/rate"

	"github.com/guidepub/guidepub/exporter/durable"
	"github.com/guidepub/guidepub/site/clock"
)

// Defaults of Config.
const (
	DefaultRetryMin = time.Second
	DefaultRetryMax = time.Minute
	// settledPoll is how often entries waiting for their upload are
	// looked at again.
	settledPoll = 50 * time.Millisecond
)

// Config configures an Edge. Dir and Purger are required; every other
// field has a default.
type Config struct {
	// Dir is the queue's folder, in the private tree (created if
	// missing).
	Dir string
	// Fs is the file system Dir is written through: nil for the
	// operating system's (the folder's lock is taken through it).
	Fs     afero.Fs
	Purger Purger
	// Settled reports whether the public files a guide's export changed
	// are where the CDN reads them: in the bucket, with live publishing
	// (a purge sent before the upload would let the edge cache the old
	// object again). guideID and folder both empty ask whether everything
	// is. nil: always (the CDN reads the tree).
	Settled func(guideID, folder string) bool
	// Delay is how long a purge waits after its change was saved: the
	// time the origin may take to serve the change (guidepub serve sees a
	// renamed file up to 300 ms later; a purge before then would let the
	// edge cache the old file again). 0: none.
	Delay time.Duration
	// RetryMin and RetryMax bound the wait before a purge that failed is
	// sent again: it doubles from RetryMin (1 s) to RetryMax (1 min), or
	// is what the CDN asked for when longer.
	RetryMin, RetryMax time.Duration
	Clock              clock.Clock  // nil: clock.System()
	Logger             *slog.Logger // nil: discard
}

// Change is what one export changed that the edge may hold: the public
// ids under which it wrote or removed a file.
type Change struct {
	GuideID, Folder string
	IDs             []string
}

// entry is one purge owed, as stored in the queue's folder.
type entry struct {
	name    string
	At      time.Time `json:"at"`
	GuideID string    `json:"guide,omitempty"`
	Folder  string    `json:"folder,omitempty"`
	IDs     []string  `json:"ids,omitempty"`
	All     bool      `json:"all,omitempty"`
}

// Edge is the queue of purges owed to one CDN, and what sends them. It is
// safe for concurrent use.
type Edge struct {
	cfg     Config
	dir     durable.Dir
	lock    *flock.Flock
	clock   clock.Clock
	log     *slog.Logger
	limiter *rate.Limiter
	proc    string
	seq     atomic.Int64
	wake    chan struct{}

	mu      sync.Mutex
	idle    *sync.Cond
	entries []*entry
	busy    bool      // a purge is being sent
	next    time.Time // no purge before (the backoff)
	tries   int
	sent    int
}

// The queue folder's files: an owed file per export under way, an entry
// per purge owed.
const (
	owedPrefix  = "owed-"
	entryPrefix = "purge-"
	entrySuffix = ".json"
)

// Open takes the queue folder cfg.Dir (waiting while another process
// holds it, until ctx ends) and reads the purges a previous process left:
// its entries are sent again, and an owed file, an export that stopped
// before saying what it changed, becomes a purge of everything. It
// returns an error when the folder cannot be made, locked or read, or
// cfg lacks Dir or Purger.
func Open(ctx context.Context, cfg Config) (*Edge, error) {
	if cfg.Dir == "" || cfg.Purger == nil {
		return nil, errors.New("edge: Dir and Purger are required")
	}
	if cfg.RetryMin <= 0 {
		cfg.RetryMin = DefaultRetryMin
	}
	if cfg.RetryMax < cfg.RetryMin {
		cfg.RetryMax = max(DefaultRetryMax, cfg.RetryMin)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Fs == nil {
		cfg.Fs = afero.NewOsFs()
	}
	if err := cfg.Fs.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("edge: %w", err)
	}
	lk, err := durable.Lock(ctx, cfg.Dir, time.Second, cfg.Logger, "purges from this private tree")
	if err != nil {
		return nil, fmt.Errorf("edge: %w", err)
	}
	var rnd [4]byte
	rand.Read(rnd[:])
	l := cfg.Purger.Limits()
	e := &Edge{cfg: cfg, dir: durable.Dir{Fs: cfg.Fs, Path: cfg.Dir}, lock: lk, clock: clock.Or(cfg.Clock),
		log: cfg.Logger, limiter: rate.NewLimiter(l.Rate, max(1, l.Burst)), proc: hex.EncodeToString(rnd[:]),
		wake: make(chan struct{}, 1)}
	e.idle = sync.NewCond(&e.mu)
	if err := e.load(); err != nil {
		lk.Unlock()
		return nil, err
	}
	return e, nil
}

// Close releases the queue folder's lock.
func (e *Edge) Close() error { return e.lock.Unlock() }

// load reads the queue folder (load holds the lock: nothing else writes
// there).
func (e *Edge) load() error {
	des, err := afero.ReadDir(e.cfg.Fs, e.cfg.Dir)
	if err != nil {
		return fmt.Errorf("edge: %w", err)
	}
	var owed []string
	for _, de := range des {
		name := de.Name()
		switch {
		case durable.IsTemp(name):
			e.cfg.Fs.Remove(filepath.Join(e.cfg.Dir, name))
		case strings.HasPrefix(name, owedPrefix):
			owed = append(owed, name)
		case strings.HasPrefix(name, entryPrefix) && strings.HasSuffix(name, entrySuffix):
			data, err := afero.ReadFile(e.cfg.Fs, filepath.Join(e.cfg.Dir, name))
			if err != nil {
				return fmt.Errorf("edge: %w", err)
			}
			en := &entry{name: name}
			if err := json.Unmarshal(data, en); err != nil || !en.All && len(en.IDs) == 0 {
				return fmt.Errorf("edge: %s is not a purge (%v): move it away, then purge the CDN by hand once", filepath.Join(e.cfg.Dir, name), err)
			}
			e.entries = append(e.entries, en)
		}
	}
	if len(owed) > 0 {
		e.log.Warn("an export was cut short before it said what it changed: purging everything at the edge", "cdn", e.cfg.Purger.String())
		if err := e.save(&entry{All: true}); err != nil {
			return err
		}
		for _, name := range owed {
			if err := e.dir.Remove(name); err != nil {
				return fmt.Errorf("edge: %w", err)
			}
		}
	}
	return nil
}

// save writes en under a new name, after the entries there are, and
// appends it to the queue. An entry that cannot be written is queued all
// the same (without a name: sent from memory) and the error returned.
func (e *Edge) save(en *entry) error {
	en.At = e.clock.Now()
	name := fmt.Sprintf("%s%020d-%s-%06d%s", entryPrefix, en.At.UnixNano(), e.proc, e.seq.Add(1), entrySuffix)
	data, err := json.Marshal(en)
	if err == nil {
		err = e.dir.Write(name, data)
	}
	if err == nil {
		en.name = name
	}
	e.mu.Lock()
	e.entries = append(e.entries, en)
	e.mu.Unlock()
	e.signal()
	if err != nil {
		return fmt.Errorf("edge: %w", err)
	}
	return nil
}

// Owed is a purge owed for an export under way: its record stays in the
// queue folder until Release, so that a process that dies before it makes
// the next one purge everything.
type Owed struct {
	e      *Edge
	name   string
	failed atomic.Bool
}

// Owe records, before an export touches the tree, that a purge of what
// it changes is owed. It returns an error when the record cannot be
// written (the export must not start then).
func (e *Edge) Owe() (*Owed, error) {
	name := fmt.Sprintf("%s%s-%06d", owedPrefix, e.proc, e.seq.Add(1))
	if err := e.dir.Write(name, nil); err != nil {
		return nil, fmt.Errorf("edge: %w", err)
	}
	return &Owed{e: e, name: name}, nil
}

// Record saves the purge of what one guide's export changed, split into
// entries the CDN takes in one request each. A purge that cannot be saved
// is sent from memory all the same, returned as an error, and the record
// then stays at Release (a crash before it is sent purges everything).
func (o *Owed) Record(c Change) error {
	ids := slices.Compact(slices.Sorted(slices.Values(c.IDs)))
	for chunk := range slices.Chunk(ids, max(1, o.e.cfg.Purger.Limits().IDs)) {
		if err := o.e.save(&entry{GuideID: c.GuideID, Folder: c.Folder, IDs: chunk}); err != nil {
			o.failed.Store(true)
			return err
		}
	}
	return nil
}

// Release removes the record once the export is done and every Record
// saved its purge; else it stays, and the next start purges everything.
func (o *Owed) Release() error {
	if o.failed.Load() {
		return nil
	}
	if err := o.e.dir.Remove(o.name); err != nil {
		return fmt.Errorf("edge: %w", err)
	}
	return nil
}

// PurgeAll queues a purge of everything (after a full publish).
func (e *Edge) PurgeAll() error { return e.save(&entry{All: true}) }

func (e *Edge) signal() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// batch is the entries one request purges.
type batch struct {
	entries []*entry
	purge   Purge
}

// nextBatch returns the entries to purge now, or nil and how long to
// wait (0: until something is queued).
func (e *Edge) nextBatch() (*batch, time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.entries) == 0 {
		e.idle.Broadcast()
		return nil, 0
	}
	if now := e.clock.Now(); now.Before(e.next) {
		return nil, e.next.Sub(now)
	}
	limit := max(1, e.cfg.Purger.Limits().IDs)
	b := &batch{}
	seen := map[string]bool{}
	for _, en := range e.entries {
		if !e.settled(en) {
			continue
		}
		if en.All {
			if len(b.entries) == 0 {
				b.entries, b.purge = []*entry{en}, Purge{All: true}
			}
			break
		}
		var fresh []string
		for _, id := range en.IDs {
			if !seen[id] {
				fresh = append(fresh, id)
			}
		}
		if len(b.purge.IDs)+len(fresh) > limit && len(b.entries) > 0 {
			break
		}
		b.entries = append(b.entries, en)
		for _, id := range fresh {
			seen[id] = true
			b.purge.IDs = append(b.purge.IDs, id)
		}
	}
	if len(b.entries) == 0 {
		return nil, settledPoll
	}
	e.busy = true
	h := sha256.New()
	for _, en := range b.entries {
		if en.name != "" {
			fmt.Fprintln(h, en.name)
		} else {
			fmt.Fprintf(h, "%p\n", en) // unsaved: this process's alone
		}
	}
	b.purge.Ref = hex.EncodeToString(h.Sum(nil)[:16])
	return b, 0
}

// settled reports whether en's files are where the CDN reads them; e.mu
// is held.
func (e *Edge) settled(en *entry) bool {
	if e.clock.Now().Before(en.At.Add(e.cfg.Delay)) {
		return false
	}
	if e.cfg.Settled == nil {
		return true
	}
	if en.All {
		return e.cfg.Settled("", "")
	}
	return e.cfg.Settled(en.GuideID, en.Folder)
}

// Run sends the queued purges until ctx ends, and returns nil then.
func (e *Edge) Run(ctx context.Context) error {
	for {
		b, wait := e.nextBatch()
		if b == nil {
			if !e.sleep(ctx, wait) {
				return nil
			}
			continue
		}
		if err := e.limiter.Wait(ctx); err != nil {
			e.finish(b, ctx.Err())
			return nil
		}
		e.finish(b, e.cfg.Purger.Purge(ctx, b.purge))
		if ctx.Err() != nil {
			return nil
		}
	}
}

// finish removes b's entries when its purge succeeded, or sets the
// backoff when it failed.
func (e *Edge) finish(b *batch, err error) {
	if err == nil {
		for _, en := range b.entries {
			if en.name == "" {
				continue // sent from memory: it was never written
			}
			if rerr := e.dir.Remove(en.name); rerr != nil {
				e.log.Warn("purge done but its entry not removed: it is sent again at the next start", "error", rerr.Error())
			}
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	defer e.idle.Broadcast()
	e.busy = false
	if err == nil {
		e.entries = slices.DeleteFunc(e.entries, func(en *entry) bool { return slices.Contains(b.entries, en) })
		e.tries, e.next = 0, time.Time{}
		e.sent++
		e.log.Debug("purged", "cdn", e.cfg.Purger.String(), "ids", len(b.purge.IDs), "all", b.purge.All)
		return
	}
	if errors.Is(err, context.Canceled) {
		return
	}
	e.tries++
	wait := min(e.cfg.RetryMin<<min(e.tries-1, 20), e.cfg.RetryMax)
	var re *RetryError
	if errors.As(err, &re) {
		wait = max(wait, re.After)
		e.log.Warn("purge not taken; trying again", "cdn", e.cfg.Purger.String(), "in", wait.String(), "error", err.Error())
	} else {
		wait = e.cfg.RetryMax
		e.log.Error("purge refused; trying again", "cdn", e.cfg.Purger.String(), "in", wait.String(), "error", err.Error(),
			"what to do", "check the --purge URL and the CDN's credentials: until a purge goes through, the edge may serve what a view now hides")
	}
	e.next = e.clock.Now().Add(wait)
}

// sleep waits for d (0: until woken), a new entry, or ctx; false when ctx
// ended.
func (e *Edge) sleep(ctx context.Context, d time.Duration) bool {
	var timer <-chan struct{}
	if d > 0 {
		ch := make(chan struct{})
		stop := e.clock.AfterFunc(d, func() { close(ch) })
		defer stop()
		timer = ch
	}
	select {
	case <-ctx.Done():
		return false
	case <-e.wake:
	case <-timer:
	}
	return true
}

// Idle waits until no purge is owed, or ctx ends, and returns how many
// entries are still queued.
func (e *Edge) Idle(ctx context.Context) int {
	stop := context.AfterFunc(ctx, func() {
		e.mu.Lock()
		e.idle.Broadcast()
		e.mu.Unlock()
	})
	defer stop()
	e.mu.Lock()
	defer e.mu.Unlock()
	for (len(e.entries) > 0 || e.busy) && ctx.Err() == nil {
		e.idle.Wait()
	}
	return len(e.entries)
}

// Sent returns how many purge requests the CDN took.
func (e *Edge) Sent() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.sent
}

package publish

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"gocloud.dev/blob"
)

// LeaseFile is the key (under the prefix) of the object by which a live
// publisher tells others that it publishes there. It is a dot-file: publish
// never uploads nor deletes it.
const LeaseFile = ".guidepub-live"

// leaseBeat is how often the holder rewrites its lease; another publisher
// takes the lease over once it has seen it unchanged for leaseExpiry.
const (
	leaseBeat   = 10 * time.Second
	leaseExpiry = 3 * leaseBeat
)

// errOtherPublisher: another live publisher holds the bucket's lease.
var errOtherPublisher = errors.New("another watcher publishes to this bucket and prefix")

// leaseBody is the lease object's content.
type leaseBody struct {
	ID string `json:"id"` // random, one per process
	// Holder is the host and outbox folder of the holder, and its process
	// id: what a waiting publisher names, and how a process that took over
	// an outbox (whose lock proves its last user gone) knows its
	// predecessor's lease. Leases written before it existed carry that
	// in ID.
	Holder string `json:"holder,omitempty"`
	PID    int    `json:"pid,omitempty"`
	Beat   int64  `json:"beat"` // changes at every rewrite
}

// lease keeps one publisher's claim on a bucket and prefix, so that two
// watchers pointed at one bucket by mistake do not overwrite each other's
// guides: the second waits, and says why, until the first stops. A lease
// is held by one process (a random id each); the holder's host and outbox
// folder let a process that restarts on the same outbox take its dead
// predecessor's lease at once (it holds the outbox's lock, which the
// operating system released when the predecessor died) rather than wait
// for the lease to expire.
type lease struct {
	bucket *blob.Bucket
	key    string
	id     string // random
	holder string // host and outbox folder
	now    func() time.Time

	mu      sync.Mutex
	held    time.Time // when our last write was made (zero: not held)
	beat    int64
	other   string    // the other holder's last seen body
	seenAt  time.Time // when that body was first seen
	otherID string
}

func newLease(b *blob.Bucket, prefix, name, outbox string, now func() time.Time) *lease {
	host, _ := os.Hostname()
	abs, err := filepath.Abs(outbox)
	if err != nil {
		abs = outbox
	}
	key := prefix + LeaseFile
	if name != "" {
		key += "-" + name
	}
	var id [16]byte
	rand.Read(id[:])
	return &lease{bucket: b, key: key, id: hex.EncodeToString(id[:]), holder: host + ":" + abs, now: now}
}

// mine reports whether body is this process's lease, or its
// predecessor's on the same outbox (which this process has locked, so
// that predecessor is gone).
func (ls *lease) mine(body leaseBody) bool {
	return body.ID == ls.id || body.Holder == ls.holder || (body.Holder == "" && body.ID == ls.holder)
}

// claim returns nil when this publisher holds the lease (taking it when
// free or abandoned), or an error wrapping errOtherPublisher.
func (ls *lease) claim(ctx context.Context) error {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	now := ls.now()
	if !ls.held.IsZero() && now.Sub(ls.held) < leaseBeat {
		return nil
	}
	data, err := ls.bucket.ReadAll(ctx, ls.key)
	switch {
	case isNotFound(err):
	case err != nil:
		return fmt.Errorf("read %s: %w", ls.key, err)
	default:
		var body leaseBody
		if json.Unmarshal(data, &body) == nil && body.ID != "" && !ls.mine(body) {
			who := body.Holder
			if who == "" {
				who = body.ID
			}
			if body.PID != 0 {
				who += fmt.Sprintf(", pid %d", body.PID)
			}
			if string(data) != ls.other {
				ls.other, ls.seenAt, ls.otherID = string(data), now, who
			}
			if now.Sub(ls.seenAt) < leaseExpiry {
				ls.held = time.Time{}
				return fmt.Errorf("%w (%s)", errOtherPublisher, who)
			}
		}
	}
	ls.beat++
	out, _ := json.Marshal(leaseBody{ID: ls.id, Holder: ls.holder, PID: os.Getpid(), Beat: ls.beat})
	if err := ls.bucket.WriteAll(ctx, ls.key, out, &blob.WriterOptions{ContentType: "application/json", CacheControl: "no-store"}); err != nil {
		return fmt.Errorf("write %s: %w", ls.key, err)
	}
	ls.held = now
	return nil
}

// release deletes the lease if this publisher holds it.
func (ls *lease) release(ctx context.Context) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.held.IsZero() {
		return
	}
	data, err := ls.bucket.ReadAll(ctx, ls.key)
	var body leaseBody
	if err == nil && json.Unmarshal(data, &body) == nil && ls.mine(body) {
		ls.bucket.Delete(ctx, ls.key)
	}
	ls.held = time.Time{}
}

// heartbeat keeps the lease fresh while it is held, until stop closes.
func (l *Live) heartbeat(ctx context.Context, stop chan struct{}) {
	for {
		ch := make(chan struct{})
		cancel := l.clock.AfterFunc(leaseBeat, func() { close(ch) })
		select {
		case <-stop:
			cancel()
			return
		case <-ctx.Done():
			cancel()
			return
		case <-ch:
		}
		l.lease.mu.Lock()
		held := !l.lease.held.IsZero()
		l.lease.mu.Unlock()
		if held {
			if err := l.lease.claim(ctx); err != nil && ctx.Err() == nil {
				l.log.Warn("lease not renewed", "error", err.Error())
			}
		}
	}
}

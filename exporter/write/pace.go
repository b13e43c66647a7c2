package write

import (
	"context"
	"sync"
)

// Pace says how the compressed siblings of a guide's export are made and
// whether the export gives way to others (docs/output.md, "Quick
// siblings").
type Pace int

const (
	// Final compresses every sibling with its final settings: a whole
	// export, a catch-up.
	Final Pace = iota
	// Quick compresses the siblings of the public documents that changed
	// with quick settings (an upload's export, served sooner) and lists
	// them in Written.Quick; the final compressions of unchanged
	// documents whose siblings an earlier export left quick run one at a
	// time, leaving the other CPU slots to the upload.
	Quick
	// Finishing is the export that follows a Quick one of the same
	// bundle, to replace its quick siblings by final ones. It is Quick
	// for what changed, and gives way to every Quick export: before
	// each group of files, each compression and each file it writes, it
	// waits while one is in progress, so that the next upload's export
	// has the CPU and the disk to itself (docs/benchmarks.md, "Finishing
	// gives way").
	Finishing
)

// uploads counts the Quick exports in progress, which Finishing ones give
// way to.
type uploads struct {
	mu   sync.Mutex
	n    int
	idle chan struct{} // closed while n is zero
}

func newUploads() *uploads {
	u := &uploads{idle: make(chan struct{})}
	close(u.idle)
	return u
}

// start records a Quick export starting and returns what records its end.
func (u *uploads) start() (done func()) {
	u.mu.Lock()
	if u.n == 0 {
		u.idle = make(chan struct{})
	}
	u.n++
	u.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			u.mu.Lock()
			u.n--
			if u.n == 0 {
				close(u.idle)
			}
			u.mu.Unlock()
		})
	}
}

// wait returns once no Quick export is in progress, or ctx's error when
// it ends first.
func (u *uploads) wait(ctx context.Context) error {
	u.mu.Lock()
	idle := u.idle
	u.mu.Unlock()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

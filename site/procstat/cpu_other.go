//go:build !unix

package procstat

import (
	"errors"
	"time"
)

// CPUTime returns 0: this system's process times are not read.
func CPUTime() time.Duration { return 0 }

// SystemTime returns 0: this system's process times are not read.
func SystemTime() time.Duration { return 0 }

// DropCaches fails: this system's caches are not dropped.
func DropCaches() error { return errors.New("procstat: dropping the page cache needs Linux") }

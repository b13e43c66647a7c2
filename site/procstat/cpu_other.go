//go:build !unix

package procstat

import "time"

// CPUTime returns 0: this system's process times are not read.
func CPUTime() time.Duration { return 0 }

// SystemTime returns 0: this system's process times are not read.
func SystemTime() time.Duration { return 0 }

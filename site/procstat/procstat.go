// Package procstat reads a process's own resource use, as the benchmarks
// report it: resident memory (now and at its peak, from /proc, so Linux
// only: elsewhere the readings fail) and CPU time. It is the one place the
// benchmarks of every package take these figures from.
package procstat

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// RSS returns the resident set size (VmRSS) of process pid, or of this
// process for pid 0, in MiB.
func RSS(pid int) (float64, error) { return status(pid, "VmRSS") }

// PeakRSS returns this process's peak resident set size (VmHWM) since it
// started or since the last ResetPeakRSS, in MiB.
func PeakRSS() (float64, error) { return status(0, "VmHWM") }

// ResetPeakRSS makes the peak resident set size start again from the
// current one (Linux 4.0 and later).
func ResetPeakRSS() error { return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// status returns the field of /proc/<pid>/status given in kB, in MiB.
func status(pid int, field string) (float64, error) {
	name := "/proc/self/status"
	if pid != 0 {
		name = fmt.Sprintf("/proc/%d/status", pid)
	}
	f, err := os.Open(name)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 64)
			if err != nil {
				return 0, fmt.Errorf("%s: %s: %w", name, field, err)
			}
			return kb / 1024, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("%s: no %s", name, field)
}

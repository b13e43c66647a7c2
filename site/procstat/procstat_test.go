package procstat

import (
	"os"
	"runtime"
	"testing"
	"time"
)

// The readings of this process are plausible, and growing the heap shows
// in the peak; a process that does not exist is an error.
func TestReadings(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc is Linux's")
	}
	rss, err := RSS(0)
	if err != nil || rss <= 0 {
		t.Fatalf("RSS(0) = %v, %v", rss, err)
	}
	if other, err := RSS(os.Getpid()); err != nil || other <= 0 {
		t.Fatalf("RSS(own pid) = %v, %v", other, err)
	}
	if err := ResetPeakRSS(); err != nil {
		t.Fatal(err)
	}
	before, err := PeakRSS()
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64<<20)
	for i := range buf {
		buf[i] = byte(i)
	}
	after, err := PeakRSS()
	if err != nil || after < before+32 {
		t.Errorf("peak RSS %v MiB before touching 64 MiB, %v (%v) after", before, after, err)
	}
	runtime.KeepAlive(buf)
	if _, err := RSS(1 << 30); err == nil {
		t.Error("RSS of a process that does not exist: no error")
	}
	if CPUTime() <= 0 || CPUTime() > time.Hour {
		t.Errorf("CPUTime() = %v", CPUTime())
	}
}

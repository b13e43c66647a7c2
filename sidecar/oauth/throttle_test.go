package oauth

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestThrottleRefusedKeepsNothing: once a client is refused, its further
// attempts, each for another owner, keep nothing: the table holds the
// counts of the 20 admitted attempts (their pairs, their owners and the
// client) however many refusals follow.
func TestThrottleRefusedKeepsNothing(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	th := newThrottle(testPolicy, func() time.Time { return now })
	for i := range 20 {
		if a, _, _ := th.admit(fmt.Sprintf("owner-%d", i), "10.0.0.1"); a == nil {
			t.Fatalf("refused after %d failures", i)
		}
	}
	kept := th.len()
	if kept != 41 {
		t.Fatalf("%d counts kept for 20 failures of one client for 20 owners, want 41", kept)
	}
	for i := range 1000 {
		if a, _, _ := th.admit(strings.Repeat("x", 200)+fmt.Sprint(i), "10.0.0.1"); a != nil {
			t.Fatal("admitted past the client's limit")
		}
	}
	if n := th.len(); n != kept {
		t.Fatalf("%d counts kept after 1,000 refusals, want %d as before", n, kept)
	}
}

// TestThrottleExpiry: counts are dropped as their window ends, oldest
// first, without waiting for the table to fill; a count whose window
// started later stays.
func TestThrottleExpiry(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	th := newThrottle(testPolicy, func() time.Time { return now })
	th.admit("a", "10.0.0.1") // 3 counts
	now = now.Add(30 * time.Second)
	th.admit("b", "10.0.0.2") // 3 more
	now = now.Add(30 * time.Second)
	// a's window has ended: its counts go, b's stay, c's come.
	if a, d, _ := th.admit("c", "10.0.0.3"); a == nil || d != 0 {
		t.Fatal("refused or slowed a first attempt")
	}
	if n := th.len(); n != 6 {
		t.Fatalf("%d counts kept, want 6 (b's and c's)", n)
	}
	// A client refused in its window is admitted once it ends, and its
	// new window is kept from then.
	for range 5 {
		th.admit("b", "10.0.0.2")
	}
	if a, _, until := th.admit("b", "10.0.0.2"); a != nil || !until.Equal(now.Add(30*time.Second)) {
		t.Fatalf("admitted %v until %v, want refused until b's window ends", a != nil, until)
	}
	now = now.Add(30 * time.Second)
	if a, _, _ := th.admit("b", "10.0.0.2"); a == nil {
		t.Fatal("refused once the window has ended")
	}
	now = now.Add(59 * time.Second)
	if n := th.len(); n != 6 {
		t.Fatalf("%d counts kept, want 6 (c's and b's new ones)", n)
	}
}

// TestThrottleBounded: with room for 30 counts, attempts from 100 clients
// for 100 owners keep at most 30, the newest: the last client is still
// refused past its limit for its owner.
func TestThrottleBounded(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	th := newThrottleSized(testPolicy, func() time.Time { return now }, 30)
	for i := range 100 {
		now = now.Add(time.Millisecond)
		th.admit(fmt.Sprintf("owner-%d", i), fmt.Sprintf("10.0.0.%d", i))
		if n := th.len(); n > 30 {
			t.Fatalf("%d counts kept, want at most 30", n)
		}
	}
	for range 4 {
		th.admit("owner-99", "10.0.0.99")
	}
	if a, _, _ := th.admit("owner-99", "10.0.0.99"); a != nil {
		t.Fatal("the newest client was admitted past its limit: its count was dropped")
	}
}

// TestThrottleKeys: the parts of a key cannot be shifted into one another.
func TestThrottleKeys(t *testing.T) {
	if keyOf(kindPair, "10.0.0.1", "a\x00b") == keyOf(kindPair, "10.0.0.1\x00a", "b") {
		t.Error("two different pairs share a key")
	}
	if keyOf(kindClient, "a") == keyOf(kindOwner, "a") {
		t.Error("a client and an owner of the same name share a key")
	}
}

// TestThrottleBoundedConcurrent: 8 goroutines admit attempts from
// distinct clients for distinct owners, giving every other one back, all
// at once, into a table of 300 counts and into one of the default size
// while 50 attempts of one client for one owner arrive together with
// them: the small table never holds more than 300; in the large one,
// which drops nothing, the one client is admitted exactly 5 times.
func TestThrottleBoundedConcurrent(t *testing.T) {
	small := newThrottleSized(testPolicy, time.Now, 300)
	large := newThrottle(testPolicy, time.Now)
	var (
		wg       sync.WaitGroup
		admitted atomic.Int64
		over     atomic.Int64
		start    = make(chan struct{})
	)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for i := range 500 {
				owner, client := fmt.Sprintf("o-%d-%d", g, i), fmt.Sprintf("10.%d.%d.%d", g, i/250, i%250)
				for _, th := range []*throttle{small, large} {
					if a, _, _ := th.admit(owner, client); a != nil && i%2 == 0 {
						a.giveBack()
					}
				}
				if n := small.len(); n > 300 {
					over.Store(int64(n))
				}
				runtime.Gosched()
			}
		}()
	}
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			if a, _, _ := large.admit("alice", "192.0.2.1"); a != nil {
				admitted.Add(1)
			}
		}()
	}
	close(start)
	wg.Wait()
	if n := over.Load(); n > 0 {
		t.Fatalf("the table held %d counts, want at most 300", n)
	}
	if n := admitted.Load(); n != 5 {
		t.Fatalf("one client's 50 attempts at once: %d admitted, want 5", n)
	}
	if n := large.len(); n != 8*500*3+3 {
		t.Fatalf("the large table holds %d counts, want %d", n, 8*500*3+3)
	}
}

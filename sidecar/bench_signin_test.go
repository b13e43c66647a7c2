package sidecar

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/guidepub/guidepub/sidecar/oauth"
	"github.com/guidepub/guidepub/site/procstat"
)

// signInSenders is how many sign-ins the throttle benchmarks keep in
// flight, each on its own keep-alive connection.
const signInSenders = 8

// keepAliveFrom is an HTTP client whose keep-alive connections come from
// the loopback address ip, so that the sidecar sees one client address.
// It does not follow redirects.
func keepAliveFrom(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	return &http.Client{
		Transport:     &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: signInSenders},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// signInRun sends sign-ins from to to (exclusive) from client with a wrong
// password, signInSenders at a time, the owner of the i-th named by name.
// It returns the answers by status and the latency of each.
func signInRun(b *testing.B, a signInAttempt, client *http.Client, from, to int, name func(i int) string) (map[int]int, []time.Duration) {
	var (
		next      atomic.Int64
		mu        sync.Mutex
		counts    = map[int]int{}
		latencies []time.Duration
		wg        sync.WaitGroup
	)
	next.Store(int64(from))
	for range signInSenders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < to; i = int(next.Add(1) - 1) {
				t0 := time.Now()
				code, _ := a.post(b, client, name(i), "a wrong password, guessed")
				took := time.Since(t0)
				mu.Lock()
				counts[code]++
				latencies = append(latencies, took)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return counts, latencies
}

// countingWriter counts the bytes written to it.
type countingWriter struct{ n atomic.Int64 }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.n.Add(int64(len(p)))
	return len(p), nil
}

// hugeName is a random owner name of 1 MiB.
func hugeName() string {
	b := make([]byte, 512<<10)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// heapMB is the live heap after a collection, in MB.
func heapMB() float64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc) / 1e6
}

// BenchmarkSignInHugeNames sends 450 sign-ins from one address, 8 at a
// time, each with a valid CSRF token, a wrong password and its own random
// 1 MiB owner name, to a sidecar that logs as `guidepub sidecar` does (text
// lines). It reports the heap the process keeps once they are answered
// (after a collection, less the heap before: kept-heap-MB), its resident
// memory once the runtime has returned the memory it no longer uses
// (rss-MB) and at its peak during the requests (peak-RSS-MB, the client's
// request bodies included), the bytes written to the log (log-MB) and how
// many passwords were checked (checked, the 401s).
func BenchmarkSignInHugeNames(b *testing.B) {
	var kept, rss, peak, logMB, checked float64
	for b.Loop() {
		logged := &countingWriter{}
		e := newOAuthEnvWith(b, storetestSQLite(b), func(c *oauth.Config) {
			c.PasswordHashWait = time.Minute
			c.Logger = slog.New(slog.NewTextHandler(logged, nil))
		})
		a := e.newSignInAttempt(b)
		client := keepAliveFrom("127.0.0.5")
		before := heapMB()
		if err := procstat.ResetPeakRSS(); err != nil {
			b.Skipf("cannot reset the peak RSS: %v", err)
		}
		counts, _ := signInRun(b, a, client, 0, 450, func(int) string { return hugeName() })
		if counts[0] > 0 || counts[http.StatusInternalServerError] > 0 {
			b.Fatalf("answers by status %v", counts)
		}
		client.CloseIdleConnections()
		kept = max(kept, heapMB()-before)
		debug.FreeOSMemory()
		r, err := procstat.RSS(os.Getpid())
		if err != nil {
			b.Fatal(err)
		}
		p, err := procstat.PeakRSS()
		if err != nil {
			b.Fatal(err)
		}
		rss, peak = max(rss, r), max(peak, p)
		logMB = max(logMB, float64(logged.n.Load())/1e6)
		checked = max(checked, float64(counts[http.StatusUnauthorized]))
	}
	b.ReportMetric(kept, "kept-heap-MB")
	b.ReportMetric(rss, "rss-MB")
	b.ReportMetric(peak, "peak-RSS-MB")
	b.ReportMetric(logMB, "log-MB")
	b.ReportMetric(checked, "checked")
}

// BenchmarkSignInDistinctNames sends 100,000 sign-ins from one address, 8
// at a time on keep-alive connections, each for another short owner name
// (owner-0, owner-1…) with a wrong password. The first 20 use up the
// address's window and are checked; every one after is refused (429). It
// reports the rate of refused sign-ins over the 5,000 after those 20
// (before-req/s) and over 5,000 more once 100,000 names have been sent
// (after-req/s), the 99th percentile latency of each (before-p99-ms,
// after-p99-ms), the heap kept by then (kept-heap-MB) and how long the
// sign-ins between those two runs took (fill-s).
func BenchmarkSignInDistinctNames(b *testing.B) {
	const window, run, total = 20, 5000, 100000
	name := func(i int) string { return fmt.Sprintf("owner-%d", i) }
	metrics := map[string]float64{}
	for b.Loop() {
		e := newOAuthEnvWith(b, storetestSQLite(b), func(c *oauth.Config) { c.PasswordHashWait = time.Minute })
		a := e.newSignInAttempt(b)
		client := keepAliveFrom("127.0.0.6")
		before := heapMB()
		if counts, _ := signInRun(b, a, client, 0, window, name); counts[http.StatusUnauthorized] != window {
			b.Fatalf("the first %d sign-ins: answers by status %v, want each checked (401)", window, counts)
		}
		refused := func(from, to int, label string) {
			t0 := time.Now()
			counts, lat := signInRun(b, a, client, from, to, name)
			elapsed := time.Since(t0)
			if counts[http.StatusTooManyRequests] != to-from {
				b.Fatalf("sign-ins %d to %d: answers by status %v, want each refused (429)", from, to, counts)
			}
			slices.Sort(lat)
			metrics[label+"-req/s"] = float64(to-from) / elapsed.Seconds()
			metrics[label+"-p99-ms"] = float64(lat[len(lat)*99/100].Microseconds()) / 1000
		}
		refused(window, window+run, "before")
		t0 := time.Now()
		if counts, _ := signInRun(b, a, client, window+run, total, name); counts[http.StatusTooManyRequests] != total-window-run {
			b.Fatalf("the fill: answers by status %v, want each refused (429)", counts)
		}
		metrics["fill-s"] = time.Since(t0).Seconds()
		refused(total, total+run, "after")
		metrics["kept-heap-MB"] = heapMB() - before
		client.CloseIdleConnections()
	}
	for _, k := range slices.Sorted(maps.Keys(metrics)) {
		b.ReportMetric(metrics[k], k)
	}
}

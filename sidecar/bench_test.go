package sidecar

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/guidepub/guidepub/sidecar/apitoken"
	"github.com/guidepub/guidepub/site/procstat"
)

// BenchmarkPortalEventObject measures authenticated GETs of the ready event
// object through a real loopback HTTP server (SQLite store, private tree on
// disk), from 4 concurrent clients per CPU. It reports requests per second
// and the 99th percentile latency.
func BenchmarkPortalEventObject(b *testing.B) {
	benchmarkPortal(b, objectPath+"?taskId="+workOrder, http.StatusOK)
}

// BenchmarkPortalUnauthenticated measures requests with a wrong token: the
// cost of the constant-time credential check and the 401 body.
func BenchmarkPortalUnauthenticated(b *testing.B) {
	benchmarkPortal(b, "", http.StatusUnauthorized)
}

func benchmarkPortal(b *testing.B, path string, want int) {
	e := newEnv(b, storetestSQLite(b), nil)
	alice := e.newCred("alice", apitoken.ScopeEvents)
	if path == "" {
		path, alice.token = objectPath, alice.token+"x"
	}
	ts := httptest.NewServer(e.srv)
	b.Cleanup(ts.Close)
	// The load generator writes prepared HTTP/1.1 requests on keep-alive
	// connections and parses the responses with net/http: lighter than
	// http.Client, so more of the two CPUs is left to the server.
	request := []byte("GET " + path + " HTTP/1.1\r\nHost: sidecar.test\r\n" +
		HeaderAppID + ": " + alice.appID + "\r\n" + HeaderAppToken + ": " + alice.token + "\r\n\r\n")
	clients := 4 * runtime.GOMAXPROCS(0)
	conns := make([]net.Conn, clients)
	for i := range conns {
		c, err := net.Dial("tcp", ts.Listener.Addr().String())
		if err != nil {
			b.Fatal(err)
		}
		conns[i] = c
		b.Cleanup(func() { c.Close() })
	}

	var next atomic.Int64
	var failed atomic.Value
	latencies := make([][]time.Duration, clients)
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn := conns[c]
			br := bufio.NewReader(conn)
			for next.Add(1) <= int64(b.N) {
				t0 := time.Now()
				if _, err := conn.Write(request); err != nil {
					failed.Store(err)
					return
				}
				resp, err := http.ReadResponse(br, nil)
				if err != nil {
					failed.Store(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != want {
					failed.Store(fmt.Errorf("status %d, want %d", resp.StatusCode, want))
					return
				}
				latencies[c] = append(latencies[c], time.Since(t0))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	all := slices.Concat(latencies...)
	slices.Sort(all)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
	if len(all) > 0 {
		b.ReportMetric(float64(all[len(all)*99/100].Microseconds()), "p99-µs")
	}
}

// BenchmarkPortalHandler measures the handler alone (no network): the
// sidecar's own cost of an authenticated event object request.
func BenchmarkPortalHandler(b *testing.B) {
	e := newEnv(b, storetestSQLite(b), nil)
	alice := e.newCred("alice", apitoken.ScopeEvents)
	req := httptest.NewRequest("GET", objectPath+"?taskId="+workOrder, nil)
	req.Header.Set(HeaderAppID, alice.appID)
	req.Header.Set(HeaderAppToken, alice.token)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			w := httptest.NewRecorder()
			e.srv.ServeHTTP(w, req.Clone(req.Context()))
			if w.Code != http.StatusOK {
				b.Errorf("status %d", w.Code)
				return
			}
		}
	})
}

// BenchmarkAuthenticate measures the credential check for each kind of
// request: a refusal must cost about what an acceptance costs, whatever
// was wrong, so timing does not tell which app ids exist.
func BenchmarkAuthenticate(b *testing.B) {
	e := newEnv(b, storetestSQLite(b), nil)
	alice := e.newCred("alice", apitoken.ScopeEvents)
	for _, bc := range []struct {
		name, appID, token string
		ok                 bool
	}{
		{"valid", alice.appID, alice.token, true},
		{"wrong token", alice.appID, alice.token + "x", false},
		{"unknown app", "gpa_0000000000000000", alice.token, false},
		{"no headers", "", "", false},
	} {
		b.Run(bc.name, func(b *testing.B) {
			r := httptest.NewRequest("POST", testPath, nil)
			if bc.appID != "" {
				r.Header.Set(HeaderAppID, bc.appID)
				r.Header.Set(HeaderAppToken, bc.token)
			}
			for b.Loop() {
				if _, err := e.srv.authenticate(r); (err == nil) != bc.ok {
					b.Fatalf("authenticate: %v", err)
				}
			}
		})
	}
}

// BenchmarkSignInFlood sends 30 sign-ins at once, from 30 client
// addresses for 30 owners (so no throttle applies and every one needs a
// 64 MiB argon2id check), with the default hash memory budget, while one
// client calls the Portal API in a loop. It reports the process's peak
// resident memory during the flood (Linux: VmHWM, reset before each
// round), how many sign-ins were answered 503 (busy), and the slowest
// Portal API answer.
func BenchmarkSignInFlood(b *testing.B) {
	e := newOAuthEnv(b, storetestSQLite(b))
	alice := e.newCred("alice", apitoken.ScopeEvents)
	a := e.newSignInAttempt(b)
	var peakMiB float64
	var busy int
	var slowest time.Duration
	for b.Loop() {
		if err := procstat.ResetPeakRSS(); err != nil {
			b.Skipf("cannot reset the peak RSS: %v", err)
		}
		stop := make(chan struct{})
		portalDone := make(chan time.Duration)
		go func() {
			var worst time.Duration
			for {
				select {
				case <-stop:
					portalDone <- worst
					return
				default:
				}
				req, _ := http.NewRequest("GET", e.http.URL+eventPath, nil)
				req.Header.Set(HeaderAppID, alice.appID)
				req.Header.Set(HeaderAppToken, alice.token)
				t0 := time.Now()
				resp, err := http.DefaultClient.Do(req)
				if err != nil || resp.StatusCode != 200 {
					b.Errorf("Portal API during the flood: %v %v", resp, err)
				} else {
					resp.Body.Close()
				}
				worst = max(worst, time.Since(t0))
			}
		}()
		counts := concurrently(b, a, 30, func(i int) (string, string) {
			return fmt.Sprintf("owner-%d", i), fmt.Sprintf("127.0.3.%d", 10+i)
		})
		close(stop)
		slowest = max(slowest, <-portalDone)
		if counts[401]+counts[503] != 30 {
			b.Fatalf("answers by status %v", counts)
		}
		busy += counts[503]
		peak, err := procstat.PeakRSS()
		if err != nil {
			b.Fatal(err)
		}
		peakMiB = max(peakMiB, peak)
	}
	b.ReportMetric(peakMiB, "peak-RSS-MiB")
	b.ReportMetric(float64(busy)/float64(b.N), "busy/op")
	b.ReportMetric(float64(slowest.Milliseconds()), "max-portal-ms")
}

package main

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/guidepub/guidepub/site"
)

// The edge's benchmarks run real Varnish with the printed VCL in front of
// guidepub serve, as TestEdgeFollowsHide does, at two corpus sizes: the
// two samples alone, and with 48 generated guides shaped like them.

// edgeCorpus returns the bundles of n generated guides beside the samples.
func edgeCorpus(b *testing.B, n int) map[string]map[string][]byte {
	more := map[string]map[string][]byte{}
	for i := range n {
		more[fmt.Sprintf("bench-%05d", i)] = shapedBundle(b, i, guideShape{})
	}
	return more
}

// edgeShows reports whether the edge serves the street in one of urls.
func edgeShows(b *testing.B, s *edgeSite, urls []string, street string) bool {
	for _, u := range urls {
		if strings.Contains(s.get(b, u).body, street) {
			return true
		}
	}
	return false
}

// BenchmarkEdgeHide measures the time from a hide's upload (guide.json
// renamed into place) to the edge (Varnish, warmed) serving none of what
// it hides, with watch --purge: the default view of a sample hides its
// address and photos, then shows them again, six times; hide-p50-ms and
// hide-max-ms are the hides', show-p50-ms the showings'. Without purges
// the edge would follow a hide when the objects expire: a minute for
// documents, an hour for media at the browser's lifetimes.
func BenchmarkEdgeHide(b *testing.B) {
	for _, extra := range []int{0, 48} {
		b.Run(fmt.Sprintf("guides=%d", 2+extra), func(b *testing.B) {
			s := startEdgeSiteWith(b, edgeCorpus(b, extra))
			watch := startProc(b, s.bin, "watch", "--src", s.src, "--out", s.out, "--private", s.priv, "--purge", "varnish+http://"+s.edgeAddr)
			waitLog(b, watch, "watching for uploads")
			urls := urlsOf(b, s.out, "vKT301A", "301-king-st-e")
			const street = "King St E"
			var hides, shows []time.Duration
			for range b.N {
				for range 6 {
					for _, u := range urls {
						s.get(b, u)
					}
					start := time.Now()
					hideOnDefaultView(b, s.src, "301-king-st-e", "address", "photos")
					eventually(b, "the hide at the edge", func() bool { return !edgeShows(b, s, urls, street) })
					hides = append(hides, time.Since(start))
					start = time.Now()
					hideOnDefaultView(b, s.src, "301-king-st-e")
					eventually(b, "the showing at the edge", func() bool { return edgeShows(b, s, urls, street) })
					shows = append(shows, time.Since(start))
				}
			}
			slices.Sort(hides)
			slices.Sort(shows)
			b.ReportMetric(float64(percentile(hides, 50).Milliseconds()), "hide-p50-ms")
			b.ReportMetric(float64(hides[len(hides)-1].Milliseconds()), "hide-max-ms")
			b.ReportMetric(float64(percentile(shows, 50).Milliseconds()), "show-p50-ms")
		})
	}
}

// BenchmarkEdgeHitRatio measures the edge's hit ratio on documents under
// a mix of reads and uploads at 50 guides: from a warm edge, two minutes
// of reads (each document URL of every public id, up to 200 a second,
// chosen at random) while a guide's default view hides or shows its
// address every 4 s. purge-1d is guidepub's edge: documents kept a day,
// purged on each change; ttl-60s is the edge as it was, keeping documents
// for their browser lifetime (a minute), unpurged. stale-s is how long,
// after the last hide, the edge still served the hidden street.
func BenchmarkEdgeHitRatio(b *testing.B) {
	corpus := edgeCorpus(b, 48)
	for _, c := range []struct {
		name    string
		vclArgs []string
		purge   bool
	}{{"purge-1d", nil, true}, {"ttl-60s", []string{"--edge-ttl", "60s"}, false}} {
		b.Run(c.name, func(b *testing.B) {
			s := startEdgeSiteWith(b, corpus, c.vclArgs...)
			args := []string{"watch", "--src", s.src, "--out", s.out, "--private", s.priv}
			if c.purge {
				args = append(args, "--purge", "varnish+http://"+s.edgeAddr)
			}
			waitLog(b, startProc(b, s.bin, args...), "watching for uploads")
			var docs []string
			for _, u := range urlsOf(b, s.out, publicIDs(b, s.out)...) {
				if strings.Contains(u, "/data/") || strings.Contains(u, "/reso/") {
					docs = append(docs, u)
				}
			}
			for _, u := range docs {
				s.get(b, u) // a warm edge: the misses measured are the mix's
			}
			for range b.N {
				hits, reads, stale := edgeMix(b, s, docs, 2*time.Minute)
				b.ReportMetric(float64(hits)/float64(reads), "hit-ratio")
				b.ReportMetric(float64(reads), "reads")
				b.ReportMetric(stale.Seconds(), "stale-s")
			}
		})
	}
}

// edgeMix reads docs through the edge at random, 200 a second, for d,
// while the sample's default view hides and shows its address every 4 s.
// It returns the hits, the reads, and how long after the last hide the
// edge still served the street (up to 70 s).
func edgeMix(b *testing.B, s *edgeSite, docs []string, d time.Duration) (hits, reads int, stale time.Duration) {
	const street = "King St E"
	target := urlsOf(b, s.out, "vKT301A", "301-king-st-e")
	rng := rand.New(rand.NewPCG(1, 2))
	hidden := false
	var lastHide time.Time
	nextUpload := time.Now()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(nextUpload) {
			hidden = !hidden
			if hidden {
				hideOnDefaultView(b, s.src, "301-king-st-e", "address")
				lastHide = time.Now()
			} else {
				hideOnDefaultView(b, s.src, "301-king-st-e")
			}
			nextUpload = time.Now().Add(4 * time.Second)
		}
		g := s.get(b, docs[rng.IntN(len(docs))])
		reads++
		if g.hit && g.status == http.StatusOK {
			hits++
		}
	}
	if !hidden {
		hideOnDefaultView(b, s.src, "301-king-st-e", "address")
		lastHide = time.Now()
	}
	for edgeShows(b, s, target, street) && time.Since(lastHide) < 70*time.Second {
		time.Sleep(50 * time.Millisecond)
	}
	return hits, reads, time.Since(lastHide)
}

// publicIDs returns the public ids of the tree out: its top folders
// that carry a surrogate key.
func publicIDs(b *testing.B, out string) []string {
	des, err := os.ReadDir(out)
	if err != nil {
		b.Fatal(err)
	}
	var ids []string
	for _, de := range des {
		if _, ok := site.SurrogateKeyOf(de.Name() + "/data/status"); ok && de.IsDir() {
			ids = append(ids, de.Name())
		}
	}
	return ids
}

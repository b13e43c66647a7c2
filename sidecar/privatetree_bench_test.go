package sidecar

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"gocloud.dev/blob"

	"github.com/guidepub/guidepub/exporter/publish/publishtest"
	"github.com/guidepub/guidepub/sidecar/apitoken"
	"github.com/guidepub/guidepub/sidecar/privatetree"
	"github.com/guidepub/guidepub/site"
	"github.com/guidepub/guidepub/site/bucket"
)

// benchDocSize is the size of the private document the benchmarks serve:
// about a sample guide's floor plan JPEG.
const benchDocSize = 256 << 10

// uploadTree copies every file of the folder dir into b, with the SHA-256
// metadata the exporter's mirror sets.
func uploadTree(tb testing.TB, dir string, b *blob.Bucket) {
	tb.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		sum := sha256.Sum256(data)
		return b.WriteAll(context.Background(), filepath.ToSlash(rel), data,
			&blob.WriterOptions{Metadata: map[string]string{bucket.MetadataHash: hex.EncodeToString(sum[:])}})
	})
	if err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkPrivateTree measures the sidecar serving from a private tree in
// a folder and in a bucket (versitygw on loopback, S3's protocol): the
// Portal's event object and a 256 KB private document, one request at a
// time through a loopback HTTP server. It reports the median and 99th
// percentile latency and the allocations of a request.
func BenchmarkPrivateTree(b *testing.B) {
	st := publishtest.StartStore(b)
	for _, where := range []string{"folder", "bucket"} {
		var bk *blob.Bucket
		mod := func(*Config) {}
		if where == "bucket" {
			bk = publishtest.NewBucket(b, st.Endpoint, fmt.Sprintf("bench-private-%d", time.Now().UnixNano()))
			mod = func(cfg *Config) { cfg.Private = privatetree.Bucket(bk, "bench") }
		}
		e := newEnv(b, storetestSQLite(b), mod)
		doc := make([]byte, benchDocSize)
		for i := range doc {
			doc[i] = byte(i * 7)
		}
		e.write(site.PrivateDocPath(guideReady, "en/jpgMetric-1.jpg"), doc)
		if bk != nil {
			uploadTree(b, e.dir, bk)
		}
		ts := httptest.NewServer(e.srv)
		b.Cleanup(ts.Close)
		alice := e.newCred("alice", apitoken.ScopeEvents)
		tok, _ := e.events.signer.Issue(guideReady)
		for _, what := range []struct{ name, path string }{
			{"event", objectPath + "?taskId=" + workOrder},
			{"document", "/private/" + guideReady + "/en/jpgMetric-1.jpg?accessToken=" + tok},
		} {
			b.Run(where+"/"+what.name, func(b *testing.B) {
				req, _ := http.NewRequest("GET", ts.URL+what.path, nil)
				req.Header.Set(HeaderAppID, alice.appID)
				req.Header.Set(HeaderAppToken, alice.token)
				lat := make([]time.Duration, 0, b.N)
				b.ReportAllocs()
				for b.Loop() {
					t0 := time.Now()
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						b.Fatal(err)
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						b.Fatalf("status %d", resp.StatusCode)
					}
					lat = append(lat, time.Since(t0))
				}
				slices.Sort(lat)
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
			})
		}
	}
}

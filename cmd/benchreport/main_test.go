package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const sample = `goos: linux
goarch: amd64
pkg: github.com/guidepub/guidepub/sidecar
cpu: AMD EPYC 7B13
BenchmarkPortalEventObject-2   	  100000	     42000 ns/op	   23421 req/s	     5.6 p99-ms
    bench_test.go:50: a log line that is not a result
BenchmarkAuthenticate/valid-2  	 4000000	       291 ns/op	       0 B/op	       0 allocs/op
PASS
ok  	github.com/guidepub/guidepub/sidecar	12.3s
pkg: github.com/guidepub/guidepub/fixtures
PASS
--- FAIL: BenchmarkBroken
FAIL	github.com/guidepub/guidepub/exporter	1.0s
`

func TestParse(t *testing.T) {
	p, err := parse(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	if p.cpu != "AMD EPYC 7B13" {
		t.Errorf("cpu = %q", p.cpu)
	}
	if len(p.packages) != 1 {
		t.Fatalf("packages = %d, want 1 (the one without results dropped)", len(p.packages))
	}
	rs := p.packages[0].results
	if len(rs) != 2 {
		t.Fatalf("results = %d, want 2", len(rs))
	}
	if rs[0].name != "BenchmarkPortalEventObject" || len(rs[0].metrics) != 3 || rs[0].metrics[1] != (metric{"23421", "req/s"}) {
		t.Errorf("first result = %+v", rs[0])
	}
	if rs[1].name != "BenchmarkAuthenticate/valid" {
		t.Errorf("second name = %q", rs[1].name)
	}
	if len(p.failures) != 2 {
		t.Errorf("failures = %q, want 2", p.failures)
	}
}

func TestRunReplacesOnlyTheSection(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "bench.txt")
	doc := filepath.Join(dir, "benchmarks.md")
	if err := os.WriteFile(in, []byte(sample), 0o644); err != nil {
		t.Fatal(err)
	}
	head := "# Benchmarks\n\nHand-written text.\n\n"
	tail := "\n\nAfter the section.\n"
	if err := os.WriteFile(doc, []byte(head+beginMarker+"\nold numbers\n"+endMarker+tail), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(in, doc, time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(doc)
	s := string(got)
	for _, want := range []string{head, tail, "AMD EPYC 7B13", "2026-11-23", "| `BenchmarkPortalEventObject` | 100000 | 42000 ns/op, 23421 req/s, 5.6 p99-ms | 2026-11-23 00:00 UTC |", "**Failed in the run of"} {
		if !strings.Contains(s, want) {
			t.Errorf("document lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "old numbers") {
		t.Error("old section kept")
	}
}

func TestRunWithoutMarkers(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "bench.txt")
	doc := filepath.Join(dir, "benchmarks.md")
	os.WriteFile(in, []byte(sample), 0o644)
	os.WriteFile(doc, []byte("# no markers\n"), 0o644)
	if err := run(in, doc, time.Now()); err == nil || !strings.Contains(err.Error(), "section") {
		t.Fatalf("err = %v, want a missing-section error", err)
	}
}

// TestRunKeepsRowsItDidNotMeasure: a run over one package (or one
// benchmark) replaces those rows and keeps the others with their run.
func TestRunKeepsRowsItDidNotMeasure(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "bench.txt")
	doc := filepath.Join(dir, "benchmarks.md")
	os.WriteFile(in, []byte(sample), 0o644)
	old := beginMarker + `
Measured on: Intel(R) Xeon(R) Processor, 2 cores, go1.26.8 linux/amd64, 2026-11-20; load average at the end of the run: 1 1 1.

### ` + "`github.com/guidepub/guidepub/exporter`" + `

| benchmark | runs | results |
|---|---|---|
| ` + "`BenchmarkExport`" + ` | 1 | 5 ns/op |

### ` + "`github.com/guidepub/guidepub/sidecar`" + `

| benchmark | runs | results |
|---|---|---|
| ` + "`BenchmarkPortalEventObject`" + ` | 9 | 99 ns/op |
| ` + "`BenchmarkIssue`" + ` | 7 | 77 ns/op |
` + endMarker + "\n"
	os.WriteFile(doc, []byte(old), 0o644)
	if err := run(in, doc, time.Date(2026, 11, 25, 18, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(doc)
	s := string(got)
	for _, want := range []string{
		"- **2026-11-20**: Intel(R) Xeon(R) Processor",
		"- **2026-11-25 18:00 UTC**: AMD EPYC 7B13",
		"| `BenchmarkExport` | 1 | 5 ns/op | 2026-11-20 |",
		"| `BenchmarkPortalEventObject` | 100000 | 42000 ns/op, 23421 req/s, 5.6 p99-ms | 2026-11-25 18:00 UTC |",
		"| `BenchmarkIssue` | 7 | 77 ns/op | 2026-11-20 |",
		"| `BenchmarkAuthenticate/valid` | 4000000 |",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("document lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "99 ns/op") {
		t.Error("the replaced row is still there")
	}
	// A second run with the same input keeps one row per benchmark and one line per run.
	if err := run(in, doc, time.Date(2026, 11, 25, 18, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	again, _ := os.ReadFile(doc)
	if strings.Count(string(again), "| `BenchmarkIssue` |") != 1 || strings.Count(string(again), "- **2026-11-20**") != 1 {
		t.Errorf("rows or runs duplicated by a second run:\n%s", again)
	}
}

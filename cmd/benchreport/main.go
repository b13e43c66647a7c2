// Command benchreport turns the output of `go test -bench` into the
// generated part of docs/benchmarks.md: one table per package with every
// metric each benchmark reported, under a header naming the machine, the Go
// version and the date. `make bench` runs it; the hand-written part of the
// document (what each benchmark measures and its goal) is kept, and only the
// text between the two markers is replaced.
//
// Usage:
//
//	go test -run '^$' -bench . ./... | tee bench.txt
//	go run ./cmd/benchreport -in bench.txt -doc docs/benchmarks.md
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"
)

// The generated section of the document lies between these two lines.
const (
	beginMarker = "<!-- benchreport:begin -->"
	endMarker   = "<!-- benchreport:end -->"
)

func main() {
	in := flag.String("in", "-", "go test -bench output to read (- for standard input)")
	doc := flag.String("doc", "docs/benchmarks.md", "Markdown file whose generated section is replaced")
	flag.Parse()
	if err := run(*in, *doc, time.Now()); err != nil {
		fmt.Fprintln(os.Stderr, "benchreport:", err)
		os.Exit(1)
	}
}

func run(in, doc string, now time.Time) error {
	r := io.Reader(os.Stdin)
	if in != "-" {
		f, err := os.Open(in)
		if err != nil {
			return err
		}
		defer f.Close()
		r = f
	}
	res, err := parse(r)
	if err != nil {
		return err
	}
	if len(res.packages) == 0 {
		return errors.New("no benchmark results in the input")
	}
	old, err := os.ReadFile(doc)
	if err != nil {
		return err
	}
	var gen bytes.Buffer
	writeSection(&gen, res, machine(res.cpu, now))
	out, err := replaceSection(old, gen.Bytes())
	if err != nil {
		return fmt.Errorf("%s: %w", doc, err)
	}
	return os.WriteFile(doc, out, 0o644)
}

// result is one benchmark line: its name and each reported metric in the
// order the line gave them.
type result struct {
	name    string
	iters   string
	metrics []metric
}

type metric struct{ value, unit string }

type pkgResults struct {
	path    string
	results []result
}

type parsed struct {
	cpu      string
	packages []*pkgResults
	failures []string
}

// parse reads go test -bench output. Lines it does not know are ignored, so
// test logs in the stream do no harm; a FAIL line is kept and reported.
func parse(r io.Reader) (parsed, error) {
	var p parsed
	var cur *pkgResults
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "pkg: "):
			cur = &pkgResults{path: strings.TrimPrefix(line, "pkg: ")}
			p.packages = append(p.packages, cur)
		case strings.HasPrefix(line, "cpu: "):
			p.cpu = strings.TrimPrefix(line, "cpu: ")
		case strings.HasPrefix(line, "--- FAIL") || strings.HasPrefix(line, "FAIL\t"):
			p.failures = append(p.failures, line)
		case strings.HasPrefix(line, "Benchmark") && cur != nil:
			if res, ok := parseLine(line); ok {
				cur.results = append(cur.results, res)
			}
		}
	}
	// Packages without benchmarks print a pkg line too in some modes.
	kept := p.packages[:0]
	for _, pk := range p.packages {
		if len(pk.results) > 0 {
			kept = append(kept, pk)
		}
	}
	p.packages = kept
	return p, sc.Err()
}

// parseLine splits "BenchmarkX-2  10  123 ns/op  4.5 p99-ms" into its parts;
// a line without an iteration count (a benchmark's log) is not a result.
func parseLine(line string) (result, bool) {
	f := strings.Fields(line)
	if len(f) < 4 || (len(f)-2)%2 != 0 {
		return result{}, false
	}
	if _, err := fmt.Sscanf(f[1], "%d", new(int64)); err != nil {
		return result{}, false
	}
	res := result{name: trimProcs(f[0]), iters: f[1]}
	for i := 2; i+1 < len(f); i += 2 {
		res.metrics = append(res.metrics, metric{value: f[i], unit: f[i+1]})
	}
	return res, true
}

// trimProcs removes the -GOMAXPROCS suffix go test appends to a name.
func trimProcs(name string) string {
	if i := strings.LastIndexByte(name, '-'); i > 0 {
		if _, err := fmt.Sscanf(name[i+1:], "%d", new(int)); err == nil {
			return name[:i]
		}
	}
	return name
}

// machine describes where the numbers were taken.
func machine(cpu string, now time.Time) string {
	if cpu == "" {
		cpu = "unknown CPU"
	}
	load := "unknown"
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) >= 3 {
			load = strings.Join(f[:3], " ")
		}
	}
	return fmt.Sprintf("%s, %d cores, %s %s/%s, %s; load average at the end of the run: %s",
		cpu, runtime.NumCPU(), runtime.Version(), runtime.GOOS, runtime.GOARCH,
		now.UTC().Format("2006-01-02"), load)
}

func writeSection(w io.Writer, p parsed, mach string) {
	fmt.Fprintf(w, "Measured on: %s.\n", mach)
	for _, f := range p.failures {
		fmt.Fprintf(w, "\n**Failed:** `%s`\n", f)
	}
	for _, pk := range p.packages {
		fmt.Fprintf(w, "\n### `%s`\n\n| benchmark | runs | results |\n|---|---|---|\n", pk.path)
		for _, r := range pk.results {
			parts := make([]string, len(r.metrics))
			for i, m := range r.metrics {
				parts[i] = m.value + " " + m.unit
			}
			fmt.Fprintf(w, "| `%s` | %s | %s |\n", r.name, r.iters, strings.Join(parts, ", "))
		}
	}
}

// replaceSection puts gen between the markers of doc, keeping the rest.
func replaceSection(doc, gen []byte) ([]byte, error) {
	b := bytes.Index(doc, []byte(beginMarker))
	e := bytes.Index(doc, []byte(endMarker))
	if b < 0 || e < b {
		return nil, fmt.Errorf("no %s … %s section", beginMarker, endMarker)
	}
	var out bytes.Buffer
	out.Write(doc[:b+len(beginMarker)])
	out.WriteString("\n")
	out.Write(gen)
	out.Write(doc[e:])
	return out.Bytes(), nil
}

// Command benchreport turns the output of `go test -bench` into the
// generated part of docs/benchmarks.md: one table per package with every
// metric each benchmark reported, each row naming the run it comes from
// (the machine, the Go version, the date and the load, listed above the
// tables). A run replaces the rows of the benchmarks it measured and keeps
// the others, so `make bench` over some packages updates those alone. The
// hand-written part of the document (what each benchmark measures and its
// goal) is kept: only the text between the two markers is rewritten.
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
	"maps"
	"os"
	"regexp"
	"runtime"
	"slices"
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
	section, err := readSection(old)
	if err != nil {
		return fmt.Errorf("%s: %w", doc, err)
	}
	rep := parseReport(section)
	rep.merge(res, now.UTC().Format("2006-01-02 15:04 UTC"), machine(res.cpu))
	var gen bytes.Buffer
	rep.write(&gen)
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

// machine describes where the numbers were taken: the CPU, the Go version
// and the load at the end of the run.
func machine(cpu string) string {
	if cpu == "" {
		cpu = "unknown CPU"
	}
	load := "unknown"
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) >= 3 {
			load = strings.Join(f[:3], " ")
		}
	}
	return fmt.Sprintf("%s, %d cores, %s %s/%s; load average at the end of the run: %s",
		cpu, runtime.NumCPU(), runtime.Version(), runtime.GOOS, runtime.GOARCH, load)
}

// report is the generated section: every package's rows, each naming the
// run it came from, and the machine of each run. A run replaces the rows of
// the benchmarks it measured and keeps the others, so `make bench` over one
// package (or one benchmark) updates those rows alone.
type report struct {
	runs     map[string]string // run label → machine
	packages map[string][]row  // package path → rows in order
	failures []string          // of the latest run
	failedIn string            // the latest run's label
}

// row is one benchmark's line in a package's table.
type row struct{ name, iters, results, run string }

// parseReport reads a section written by report.write, or by the earlier
// format with one "Measured on:" line for the whole section.
func parseReport(section []byte) *report {
	rep := &report{runs: map[string]string{}, packages: map[string][]row{}}
	legacy := ""
	pkg := ""
	for _, line := range strings.Split(string(section), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "Measured on: "):
			m := strings.TrimSuffix(strings.TrimPrefix(line, "Measured on: "), ".")
			legacy = "earlier run"
			if d := dateRE.FindString(m); d != "" {
				legacy = d
			}
			rep.runs[legacy] = m
		case strings.HasPrefix(line, "- **"):
			if label, m, ok := strings.Cut(strings.TrimPrefix(line, "- **"), "**: "); ok {
				rep.runs[label] = strings.TrimSuffix(m, ".")
			}
		case strings.HasPrefix(line, "### `"):
			pkg = strings.Trim(strings.TrimPrefix(line, "### "), "`")
		case strings.HasPrefix(line, "| `") && pkg != "":
			cells := strings.Split(strings.Trim(line, "|"), "|")
			for i := range cells {
				cells[i] = strings.TrimSpace(cells[i])
			}
			r := row{name: strings.Trim(cells[0], "`")}
			if len(cells) >= 3 {
				r.iters, r.results, r.run = cells[1], cells[2], legacy
			}
			if len(cells) >= 4 {
				r.run = cells[3]
			}
			rep.packages[pkg] = append(rep.packages[pkg], r)
		}
	}
	return rep
}

var dateRE = regexp.MustCompile(`\d{4}-\d{2}-\d{2}`)

// merge puts the results of run label (measured on mach) in place of the
// rows of the same benchmarks, appending new ones.
func (rep *report) merge(p parsed, label, mach string) {
	rep.runs[label] = mach
	rep.failures, rep.failedIn = p.failures, label
	for _, pk := range p.packages {
		rows := rep.packages[pk.path]
		for _, r := range pk.results {
			parts := make([]string, len(r.metrics))
			for i, m := range r.metrics {
				parts[i] = m.value + " " + m.unit
			}
			nr := row{name: r.name, iters: r.iters, results: strings.Join(parts, ", "), run: label}
			if i := slices.IndexFunc(rows, func(o row) bool { return o.name == nr.name }); i >= 0 {
				rows[i] = nr
			} else {
				rows = append(rows, nr)
			}
		}
		rep.packages[pk.path] = rows
	}
}

func (rep *report) write(w io.Writer) {
	used := map[string]bool{}
	for _, rows := range rep.packages {
		for _, r := range rows {
			used[r.run] = true
		}
	}
	labels := slices.Sorted(maps.Keys(used))
	fmt.Fprintln(w, "Each row names the `make bench` run it comes from; the runs were made on:")
	fmt.Fprintln(w)
	for _, l := range labels {
		fmt.Fprintf(w, "- **%s**: %s.\n", l, rep.runs[l])
	}
	for _, f := range rep.failures {
		fmt.Fprintf(w, "\n**Failed in the run of %s:** `%s`\n", rep.failedIn, f)
	}
	for _, path := range slices.Sorted(maps.Keys(rep.packages)) {
		fmt.Fprintf(w, "\n### `%s`\n\n| benchmark | runs | results | run |\n|---|---|---|---|\n", path)
		for _, r := range rep.packages[path] {
			fmt.Fprintf(w, "| `%s` | %s | %s | %s |\n", r.name, r.iters, r.results, r.run)
		}
	}
}

// readSection returns the text between the markers of doc.
func readSection(doc []byte) ([]byte, error) {
	b := bytes.Index(doc, []byte(beginMarker))
	e := bytes.Index(doc, []byte(endMarker))
	if b < 0 || e < b {
		return nil, fmt.Errorf("no %s … %s section", beginMarker, endMarker)
	}
	return doc[b+len(beginMarker) : e], nil
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

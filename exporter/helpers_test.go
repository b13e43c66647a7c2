package exporter

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"
	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/fixtures"
	"github.com/guidepub/guidepub/site"
	"github.com/guidepub/guidepub/site/clock/clocktest"
)

// testNow is the fixed clock of the tests: after the fixtures' 2020 expiry,
// before their 2099 one.
var testNow = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// testURLs are fixed URL settings, different from the defaults so a test
// sees each one land where it belongs.
var testURLs = struct{ view, unbranded, embed, base string }{
	"https://view.example.test", "https://unbranded.example.test", "https://view.example.test/embed", "https://portal.example.test",
}

// fsKind is one file system the tests run on: a memory one and a real
// folder, so that both kinds of file system are covered.
type fsKind struct {
	name string
	make func(t *testing.T) (afero.Fs, string) // file system and a fresh folder in it
}

var fsKinds = []fsKind{
	{"mem", func(t *testing.T) (afero.Fs, string) { return afero.NewMemMapFs(), "/site" }},
	{"os", func(t *testing.T) (afero.Fs, string) { return afero.NewOsFs(), t.TempDir() }},
}

// env is an exporter under test with its source, public and private trees.
type env struct {
	t       *testing.T
	src     afero.Fs
	srcDir  string
	out     afero.Fs
	outDir  string
	privDir string
	now     time.Time
	cfg     Config
}

// newEnv copies the fixture bundles into a source folder of the file
// system kind and returns an environment writing to the same file system.
func newEnv(t *testing.T, kind fsKind) *env {
	t.Helper()
	fsys, root := kind.make(t)
	ev := &env{t: t, src: fsys, srcDir: filepath.Join(root, "src"), out: fsys, outDir: filepath.Join(root, "out"), privDir: filepath.Join(root, "private"), now: testNow}
	copyFixtures(t, fsys, ev.srcDir)
	ev.cfg = testConfig(fsys, ev.srcDir, ev.outDir, ev.privDir)
	ev.cfg.ViewURL, ev.cfg.UnbrandedURL, ev.cfg.EmbedURL, ev.cfg.BaseURL = testURLs.view, testURLs.unbranded, testURLs.embed, testURLs.base
	ev.cfg.Jobs, ev.cfg.Clock = 2, clocktest.NowFunc(func() time.Time { return ev.now })
	return ev
}

// testConfig is DefaultConfig with the source, public and private trees
// in folders of fsys and the clock fixed at testNow.
func testConfig(fsys afero.Fs, srcDir, outDir, privDir string) Config {
	cfg := DefaultConfig()
	cfg.Src, cfg.SrcDir, cfg.Out, cfg.OutDir, cfg.Private, cfg.PrivateDir = fsys, srcDir, fsys, outDir, fsys, privDir
	cfg.Clock = clocktest.NowFunc(func() time.Time { return testNow })
	return cfg
}

// copyFixtures copies the embedded fixture bundles to dir of fsys.
func copyFixtures(t testing.TB, fsys afero.Fs, dir string) {
	t.Helper()
	err := fs.WalkDir(fixtures.Bundles, "bundles", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(p, "bundles")))
		if d.IsDir() {
			return fsys.MkdirAll(dst, 0o755)
		}
		data, err := fs.ReadFile(fixtures.Bundles, p)
		if err != nil {
			return err
		}
		return afero.WriteFile(fsys, dst, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// exporter returns a new Exporter over the environment (as a new process
// would build it).
func (ev *env) exporter() *Exporter {
	ev.t.Helper()
	e, err := New(ev.cfg)
	if err != nil {
		ev.t.Fatal(err)
	}
	return e
}

// exportAll runs ExportAll on a new Exporter and fails on an I/O error.
func (ev *env) exportAll() *Report {
	ev.t.Helper()
	rep, err := ev.exporter().ExportAll(context.Background())
	if err != nil {
		ev.t.Fatalf("ExportAll: %v", err)
	}
	return rep
}

// editGuide rewrites the guide.json of folder through edit.
func (ev *env) editGuide(folder string, edit func(g map[string]any)) {
	ev.t.Helper()
	p := filepath.Join(ev.srcDir, folder, "guide.json")
	data, err := afero.ReadFile(ev.src, p)
	if err != nil {
		ev.t.Fatal(err)
	}
	var g map[string]any
	if err := json.Unmarshal(data, &g); err != nil {
		ev.t.Fatal(err)
	}
	edit(g)
	out, err := json.MarshalIndent(g, "", "  ")
	if err != nil {
		ev.t.Fatal(err)
	}
	if err := afero.WriteFile(ev.src, p, out, 0o644); err != nil {
		ev.t.Fatal(err)
	}
}

// snapshot returns every file under dir of fsys by slash path.
func snapshot(t testing.TB, fsys afero.Fs, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	if _, err := fsys.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return files
	}
	err := afero.Walk(fsys, dir, func(p string, fi fs.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if fi.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		data, err := afero.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		files[filepath.ToSlash(rel)] = data
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// sharedPaths returns the names of files that are files of the whole
// tree, no guide's (the stylesheet and its siblings), sorted.
func sharedPaths(files map[string][]byte) []string {
	var out []string
	for _, name := range sortedNames(files) {
		if doc, _, ok := site.SplitEncoded(name); ok {
			name = doc
		}
		if f, _, ok := site.PublicFileOf(name); ok && f.Group == site.GroupShared {
			out = append(out, name)
		}
	}
	return out
}

// sortedNames returns the keys of files, sorted.
func sortedNames(files map[string][]byte) []string {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// decompress returns data decoded from enc.
func decompress(enc site.Encoding, data []byte) ([]byte, error) {
	var r io.Reader
	switch enc {
	case site.Brotli:
		r = brotli.NewReader(bytes.NewReader(data))
	case site.Gzip:
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, err
		}
		r = zr
	case site.Zstd:
		zr, err := zstd.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, err
		}
		defer zr.Close()
		r = zr
	default:
		return nil, fmt.Errorf("unknown encoding %v", enc)
	}
	return io.ReadAll(r)
}

// lineDiff returns a readable line diff of want and got: JSON is indented
// first, then the lines are compared (longest common subsequence) and
// shown with "-" (want only), "+" (got only) and a few lines of context.
func lineDiff(want, got []byte) string {
	a, b := strings.Split(indentJSON(want), "\n"), strings.Split(indentJSON(got), "\n")
	n, m := len(a), len(b)
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	type line struct {
		op   byte
		text string
	}
	var lines []line
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			lines = append(lines, line{' ', a[i]})
			i++
			j++
		case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
			lines = append(lines, line{'+', b[j]})
			j++
		default:
			lines = append(lines, line{'-', a[i]})
			i++
		}
	}
	const context = 3
	var sb strings.Builder
	last := -1
	for k, l := range lines {
		near := false
		for d := max(0, k-context); d <= min(len(lines)-1, k+context); d++ {
			if lines[d].op != ' ' {
				near = true
				break
			}
		}
		if !near {
			continue
		}
		if last >= 0 && k > last+1 {
			sb.WriteString("...\n")
		}
		fmt.Fprintf(&sb, "%c %s\n", l.op, l.text)
		last = k
	}
	return sb.String()
}

// indentJSON indents data when it is JSON, else returns it as text.
func indentJSON(data []byte) string {
	var buf bytes.Buffer
	if json.Indent(&buf, data, "", "  ") == nil {
		return buf.String()
	}
	return string(data)
}

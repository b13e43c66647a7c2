package bundle

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/exporter/media"
)

// Problem is one thing wrong with a bundle.
type Problem struct {
	// File is the file at fault, relative to the bundle source folder and
	// slash-separated: "301-king-st-e/guide.json" or
	// "301-king-st-e/photos/x.jpg".
	File string
	// Path is the JSON path of the value at fault, such as
	// "$.views[1].hidden[0]", or "" when the problem is not about a JSON
	// value.
	Path string
	// Message says what is wrong.
	Message string
}

// String returns "file: path: message", leaving out an empty path.
func (p Problem) String() string {
	var b strings.Builder
	if p.File != "" {
		b.WriteString(p.File)
		b.WriteString(": ")
	}
	if p.Path != "" {
		b.WriteString(p.Path)
		b.WriteString(": ")
	}
	b.WriteString(p.Message)
	return b.String()
}

// Error is a rejected bundle: every problem found in it.
type Error struct {
	Folder   string
	Problems []Problem
}

// Error returns a first line naming the folder and the problem count, then
// every problem on a line of its own.
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "bundle %s rejected: %s", e.Folder, plural(len(e.Problems), "problem"))
	for _, p := range e.Problems {
		b.WriteString("\n")
		b.WriteString(p.String())
	}
	return b.String()
}

// LogAttrs returns err as structured log attributes: for an *Error the
// first line as "error" and every problem as an element of the list
// "problems", so a log line holds no embedded newlines; for another error
// its text as "error".
func LogAttrs(err error) []any {
	var be *Error
	if errors.As(err, &be) {
		problems := make([]string, len(be.Problems))
		for i, p := range be.Problems {
			problems[i] = p.String()
		}
		return []any{"error", fmt.Sprintf("bundle %s rejected: %s", be.Folder, plural(len(be.Problems), "problem")), "problems", problems}
	}
	return []any{"error", err.Error()}
}

// Bundle is a loaded, validated bundle.
type Bundle struct {
	Folder string // folder name under the bundle source
	Dir    string // dir as given to Load
	Guide  Guide
	Raw    []byte // guide.json as read
	// Media is what each file the guide names holds (its format and
	// pixel size), by its path relative to the folder: the export
	// publishes what the files are, not what guide.json says.
	Media map[string]media.Info

	fsys afero.Fs
}

// Load reads and validates the bundle in folder dir of fsys
// (filepath.Base(dir) is its folder name). It checks guide.json and every
// file it names. Every failure, including a guide.json that cannot be
// read, gives an *Error listing every problem found.
func Load(fsys afero.Fs, dir string) (*Bundle, error) {
	return LoadLimits(fsys, dir, Limits{})
}

// LoadLimits is Load with the limits lim (zero fields: DefaultLimits) on
// what the bundle holds, checked before guide.json is decoded.
func LoadLimits(fsys afero.Fs, dir string, lim Limits) (*Bundle, error) {
	folder := filepath.Base(filepath.Clean(dir))
	guideFile := path.Join(folder, FileName)
	if msg := checkFolder(fsys, dir); msg != "" {
		return nil, &Error{Folder: folder, Problems: []Problem{{File: folder, Message: msg}}}
	}
	raw, msg := readGuide(fsys, dir)
	if msg != "" {
		return nil, &Error{Folder: folder, Problems: []Problem{{File: guideFile, Message: msg}}}
	}
	if problems := CheckLimits(raw, lim); len(problems) > 0 {
		for i := range problems {
			problems[i].File = guideFile
		}
		return nil, &Error{Folder: folder, Problems: problems}
	}
	g, problems := Parse(raw)
	for i := range problems {
		problems[i].File = guideFile
	}
	var infos map[string]media.Info
	if g != nil {
		var fp []Problem
		infos, fp = checkFiles(fsys, dir, folder, g, lim.Media())
		problems = append(problems, fp...)
	}
	if len(problems) > 0 {
		return nil, &Error{Folder: folder, Problems: problems}
	}
	return &Bundle{Folder: folder, Dir: dir, Guide: *g, Raw: raw, Media: infos, fsys: fsys}, nil
}

// MaxGuideSize is the largest guide.json Load reads, in bytes: far above
// any real guide, it keeps a stray huge file from exhausting memory.
const MaxGuideSize = 32 << 20

// readGuide reads dir/guide.json, which must be a regular file (not a
// symbolic link) of at most MaxGuideSize bytes. It returns the content, or
// why it cannot be read.
func readGuide(fsys afero.Fs, dir string) ([]byte, string) {
	if _, msg := checkFile(fsys, dir, FileName); msg != "" {
		if msg == msgNotExist {
			return nil, "guide.json does not exist in the bundle folder"
		}
		return nil, msg
	}
	f, err := fsys.Open(filepath.Join(dir, FileName))
	if err != nil {
		return nil, readError(err)
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, MaxGuideSize+1))
	if err != nil {
		return nil, readError(err)
	}
	if len(raw) > MaxGuideSize {
		return nil, fmt.Sprintf("guide.json is larger than %d MiB", MaxGuideSize>>20)
	}
	return raw, ""
}

// ReadFile returns the content of rel, a file named by the bundle's Guide
// (slash-separated, relative to the bundle folder). It checks again that
// rel is a regular file inside the bundle reached through no symbolic
// link and with no other hard link, since the folder may have changed
// since Load; it returns an error when it is not, or when the file cannot
// be read.
func (b *Bundle) ReadFile(rel string) ([]byte, error) {
	f, err := b.Open(rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// Open opens rel, a file named by the bundle's Guide, for reading, with
// the checks of ReadFile. It returns an error when rel is not a regular
// file inside the bundle reached through no symbolic link, when the file
// opened has another hard link, or when it cannot be opened.
func (b *Bundle) Open(rel string) (afero.File, error) {
	if msg := checkRel(rel); msg != "" {
		return nil, fmt.Errorf("bundle %s: file %q: %s", b.Folder, rel, msg)
	}
	if _, msg := checkFile(b.fsys, b.Dir, rel); msg != "" {
		return nil, fmt.Errorf("bundle %s: file %q: %s", b.Folder, rel, msg)
	}
	f, err := b.fsys.Open(filepath.Join(b.Dir, filepath.FromSlash(rel)))
	if err != nil {
		return nil, err
	}
	// The links of the file opened, not of the name checked above: a link
	// made in between is seen.
	fi, err := f.Stat()
	if err == nil {
		if msg := checkLinks(fi); msg != "" {
			err = fmt.Errorf("bundle %s: file %q: %s", b.Folder, rel, msg)
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Parse decodes and validates guide.json alone (the files it names are
// not checked, their path syntax is). Problems have an empty File. When
// the text is not valid JSON, Parse returns nil and the syntax problem,
// naming its line and column. Otherwise it returns the decoded guide,
// which may be partial when problems are returned: a guide is valid only
// when no problem is returned. Empty optional lists and maps are nil, the
// room, floor, building and dims lists are never nil, and expiry times are
// in UTC.
func Parse(data []byte) (*Guide, []Problem) {
	// A UTF-8 byte order mark (as some Windows editors write) is allowed
	// and ignored; see docs/robustness.md.
	data = bytes.TrimPrefix(data, utf8BOM)
	tree, problems := readTree(data)
	if tree == nil {
		return nil, problems
	}
	w := &walker{problems: problems}
	w.walk(tree, reflect.TypeFor[Guide]())
	problems = w.problems
	clean := data
	if len(problems) > 0 {
		// Decode what fits, so that the meaning of everything else is
		// still checked and reported.
		var buf bytes.Buffer
		tree.encode(&buf)
		clean = buf.Bytes()
	}
	var g Guide
	if err := json.Unmarshal(clean, &g); err != nil {
		// The walk lets through only what decodes; this is a safety net.
		problems = append(problems, Problem{Message: "cannot decode: " + err.Error()})
	}
	normalize(&g)
	for _, sp := range validate(&g) {
		if !repeats(sp, w.changed) {
			problems = append(problems, sp.Problem)
		}
	}
	if len(problems) > maxProblems {
		problems = append(problems[:maxProblems], Problem{Message: fmt.Sprintf("too many problems; only the first %d are listed", maxProblems)})
	}
	return &g, problems
}

// repeats reports whether the semantic problem sp would only repeat a
// shape problem: it is about a value at or inside one of the changed paths
// (left out or zero for its shape: a missing id is also an invalid id), or
// it is an aggregate problem about a list holding one (default: "yes" also
// means no default view).
func repeats(sp semanticProblem, changed []string) bool {
	for _, c := range changed {
		if within(sp.Path, c) || sp.aggregate && within(c, sp.Path) {
			return true
		}
	}
	return false
}

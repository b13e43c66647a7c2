package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// repoRoot is the module's root, seen from this package's folder.
const repoRoot = "../.."

// TestDocumentedCommands checks the shell examples of README.md and every
// page under docs/: each guidepub command they run (as `guidepub …`, `go run
// ./cmd/guidepub …` or an image running guidepub) exists and takes every
// flag they give it.
func TestDocumentedCommands(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join(repoRoot, "README.md"))
	checked := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		checked += checkShellExamples(t, filepath.Base(f), string(data))
	}
	if checked < 10 {
		t.Errorf("found only %d guidepub commands in the documentation's examples", checked)
	}
}

var (
	shellSplit  = regexp.MustCompile(`&&|\|\||[|;&>]`)
	commandName = regexp.MustCompile(`^[a-z][a-z-]*$`)
)

// checkShellExamples checks the ```sh blocks of one document and returns
// how many guidepub commands it found.
func checkShellExamples(t *testing.T, name, doc string) int {
	t.Helper()
	var lines []string
	inSh := false
	for _, l := range strings.Split(doc, "\n") {
		l = strings.TrimSpace(l) // code blocks may be indented in a list
		switch {
		case strings.HasPrefix(l, "```sh"):
			inSh = true
		case strings.HasPrefix(l, "```"):
			inSh = false
		case inSh:
			lines = append(lines, l)
		}
	}
	script := strings.ReplaceAll(strings.Join(lines, "\n"), "\\\n", " ")
	checked := 0
	for _, line := range strings.Split(script, "\n") {
		line, _, _ = strings.Cut(line, " #") // a trailing comment
		for _, part := range shellSplit.Split(line, -1) {
			words := shellWords(strings.TrimSpace(part))
			// The binary (by name or path), `go run ./cmd/guidepub`, or the
			// image before the command it runs (podman run ...
			// guidepub:latest watch ...).
			i := slices.IndexFunc(words, func(w string) bool {
				return w == "guidepub" || strings.HasSuffix(w, "/guidepub") || strings.HasPrefix(w, "guidepub:")
			})
			if i < 0 || i+1 >= len(words) || !commandName.MatchString(words[i+1]) {
				continue
			}
			words = words[i+1:]
			cmd := command(words[0])
			if cmd == nil {
				t.Errorf("%s runs `guidepub %s`, which is no command", name, words[0])
				continue
			}
			cmdName := cmd.Name
			if len(cmd.Subcommands) > 0 && len(words) > 1 {
				for _, sub := range cmd.Subcommands {
					if sub.Name == words[1] {
						cmd, cmdName = sub, cmdName+" "+sub.Name
					}
				}
			}
			checked++
			for _, w := range words[1:] {
				flag, ok := strings.CutPrefix(w, "--")
				if !ok {
					continue
				}
				flag, _, _ = strings.Cut(flag, "=")
				if !slices.ContainsFunc(cmd.Flags, func(f cli.Flag) bool { return slices.Contains(f.Names(), flag) }) {
					t.Errorf("%s runs `guidepub %s --%s`, a flag it does not take", name, cmdName, flag)
				}
			}
		}
	}
	return checked
}

// markdownLink matches [text](target) links; targets with a scheme are
// not files of the repository.
var markdownLink = regexp.MustCompile(`\]\(([^)#\s]+)(#[^)\s]*)?\)`)

// TestDocumentLinks checks that every relative link of README.md and of
// the pages under docs/ names a file of the repository.
func TestDocumentLinks(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join(repoRoot, "README.md"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range markdownLink.FindAllStringSubmatch(string(data), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(f), filepath.FromSlash(target))); err != nil {
				t.Errorf("%s links to %s, which does not exist", filepath.Base(f), target)
			}
		}
	}
}

// shellWords splits a command line into words, honouring single and double
// quotes (enough for the build commands compared here).
func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	for _, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

// command returns guidepub's command name, or nil.
func command(name string) *cli.Command {
	for _, c := range newApp(nil, nil).Commands {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// TestDocumentedAutofillFields checks the Autofill section of
// docs/documents.md against the golden autofill documents: every compound
// field name it gives in backticks (PropertyRooms, xSvcStructures,
// AreaSource...) is a key of those documents, or the end of one
// (RoomAreaSource).
func TestDocumentedAutofillFields(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(repoRoot, "docs", "documents.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "\n## Autofill\n")
	if !ok {
		t.Fatal("docs/documents.md has no Autofill section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	goldens, err := filepath.Glob(filepath.Join(repoRoot, "fixtures", "golden", "public", "*", "reso", "autofill"))
	if err != nil || len(goldens) == 0 {
		t.Fatalf("no golden autofill documents: %v", err)
	}
	keys := map[string]bool{}
	var collect func(v any)
	collect = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, el := range x {
				keys[k] = true
				collect(el)
			}
		case []any:
			for _, el := range x {
				collect(el)
			}
		}
	}
	for _, g := range goldens {
		data, err := os.ReadFile(g)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			t.Fatal(err)
		}
		collect(v)
	}
	compound := regexp.MustCompile("`((?:[a-z]+|[A-Z][a-z]+)(?:[A-Z][a-z]*)+)(?:\\[\\])?`")
	path := regexp.MustCompile("`([A-Za-z]+)\\[\\]\\.([A-Za-z]+)`") // xSvcStructures[].Floors
	var names []string
	for _, m := range compound.FindAllStringSubmatch(section, -1) {
		names = append(names, m[1])
	}
	for _, m := range path.FindAllStringSubmatch(section, -1) {
		names = append(names, m[1], m[2])
	}
	if len(names) < 3 {
		t.Fatalf("found only %v in the Autofill section", names)
	}
	for _, name := range names {
		found := keys[name]
		for k := range keys {
			found = found || strings.HasSuffix(k, name)
		}
		if !found {
			t.Errorf("docs/documents.md names `%s`, which no autofill document holds", name)
		}
	}
}

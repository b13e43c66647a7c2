// Package bundleschema holds the JSON Schema (draft 2020-12) of a bundle's
// guide.json and validates documents against it. The schema expresses what
// a schema can of guidepub's bundle rules (required fields, types, id
// patterns, enums, unknown keys rejected, dims of 0 or 2 items, exactly one
// default view); exporter/bundle checks the rest (unique ids, files that
// must exist). Editors use it through a "$schema" key or their settings.
package bundleschema

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

//go:embed guide.schema.json
var schemaJSON []byte

// ID is the schema's $id.
const ID = "urn:guidepub:schema:guide.json"

// FileName is the name the schema is shipped under.
const FileName = "guide.schema.json"

// Schema returns the JSON Schema of guide.json. The caller gets its own copy.
func Schema() []byte {
	return append([]byte(nil), schemaJSON...)
}

// Problem is one place where a guide.json breaks the schema.
type Problem struct {
	// Path is the JSON path of the value at fault, in exporter/bundle's
	// notation: "$.views[1].hidden[0]", `$.media.documents["x-y"]`. For a
	// missing or unknown key it names that key ("$.guideId").
	Path string
	// Message says what is wrong.
	Message string
}

// String returns "path: message".
func (p Problem) String() string { return p.Path + ": " + p.Message }

var compiled = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaJSON))
	if err != nil {
		return nil, fmt.Errorf("decode %s: %w", FileName, err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource(ID, doc); err != nil {
		return nil, fmt.Errorf("add %s: %w", FileName, err)
	}
	s, err := c.Compile(ID)
	if err != nil {
		return nil, fmt.Errorf("compile %s: %w", FileName, err)
	}
	return s, nil
})

var printer = message.NewPrinter(language.English)

// Validate checks the guide.json document data against the schema. It
// returns every problem found, sorted by path (none for a valid document),
// or an error when data is not a single JSON value.
func Validate(data []byte) ([]Problem, error) {
	s, err := compiled()
	if err != nil {
		return nil, err
	}
	dec := bytes.NewReader(data)
	inst, err := jsonschema.UnmarshalJSON(dec)
	if err != nil {
		return nil, fmt.Errorf("guide.json is not JSON: %w", err)
	}
	err = s.Validate(inst)
	if err == nil {
		return nil, nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return nil, fmt.Errorf("validate guide.json: %w", err)
	}
	var problems []Problem
	collect(ve, inst, &problems)
	sort.SliceStable(problems, func(i, j int) bool { return problems[i].Path < problems[j].Path })
	return dedupe(problems), nil
}

// collect appends a Problem for each leaf of the error tree e.
func collect(e *jsonschema.ValidationError, inst any, out *[]Problem) {
	base := jsonPath(inst, e.InstanceLocation)
	switch e.ErrorKind.(type) {
	case *kind.Contains, *kind.MinContains, *kind.MaxContains:
		// The causes are every item that did not match; the problem is the
		// array's.
		*out = append(*out, Problem{Path: base, Message: e.ErrorKind.LocalizedString(printer) + ". " + describe(e.SchemaURL)})
		return
	}
	if len(e.Causes) > 0 {
		for _, c := range e.Causes {
			collect(c, inst, out)
		}
		return
	}
	switch k := e.ErrorKind.(type) {
	case *kind.Required:
		for _, m := range k.Missing {
			*out = append(*out, Problem{Path: base + keyPath(m), Message: "required key is missing"})
		}
	case *kind.AdditionalProperties:
		for _, p := range k.Properties {
			*out = append(*out, Problem{Path: base + keyPath(p), Message: "unknown key"})
		}
	case *kind.UniqueItems:
		// Point at the repetition, as exporter/bundle does.
		*out = append(*out, Problem{
			Path:    fmt.Sprintf("%s[%d]", base, k.Duplicates[1]),
			Message: fmt.Sprintf("listed twice: the same as item %d", k.Duplicates[0]),
		})
	case *kind.Pattern:
		*out = append(*out, Problem{Path: base, Message: fmt.Sprintf("%q is not valid: %s", k.Got, describe(e.SchemaURL))})
	case *kind.Not:
		*out = append(*out, Problem{Path: base, Message: "value is not allowed: " + describe(e.SchemaURL)})
	default:
		*out = append(*out, Problem{Path: base, Message: e.ErrorKind.LocalizedString(printer)})
	}
}

// describe returns the description of the schema at the location u (the
// schema's $id, "#" and a JSON pointer), or of the nearest schema above it
// that has one: a regular expression means little to the author of a
// guide.json, the description says what is expected.
func describe(u string) string {
	_, ptr, _ := strings.Cut(u, "#")
	toks := strings.Split(strings.TrimPrefix(ptr, "/"), "/")
	if ptr == "" {
		toks = nil
	}
	for n := len(toks); n >= 0; n-- {
		var v any = schemaTree()
		for _, tok := range toks[:n] {
			tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
			m, ok := v.(map[string]any)
			if !ok {
				v = nil
				break
			}
			v = m[tok]
		}
		if m, ok := v.(map[string]any); ok {
			if d, ok := m["description"].(string); ok {
				return d
			}
		}
	}
	return "see " + FileName
}

var schemaTree = sync.OnceValue(func() map[string]any {
	var m map[string]any
	_ = json.Unmarshal(schemaJSON, &m) // compiled() has already decoded it
	return m
})

func dedupe(ps []Problem) []Problem {
	out := ps[:0]
	for i, p := range ps {
		if i > 0 && p == ps[i-1] {
			continue
		}
		out = append(out, p)
	}
	return out
}

// jsonPath turns an instance location (JSON pointer tokens) into a JSON
// path, walking inst to tell array indexes from object keys.
func jsonPath(inst any, loc []string) string {
	var b strings.Builder
	b.WriteString("$")
	v := inst
	for _, tok := range loc {
		switch x := v.(type) {
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				b.WriteString(keyPath(tok))
				v = nil
				continue
			}
			fmt.Fprintf(&b, "[%d]", i)
			v = x[i]
		case map[string]any:
			b.WriteString(keyPath(tok))
			v = x[tok]
		default:
			b.WriteString(keyPath(tok))
			v = nil
		}
	}
	return b.String()
}

var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// keyPath returns the JSON path step for an object key: ".key" for a plain
// identifier, else `["key"]` (as exporter/bundle writes it).
func keyPath(key string) string {
	if identifier.MatchString(key) {
		return "." + key
	}
	return "[" + strconv.Quote(key) + "]"
}

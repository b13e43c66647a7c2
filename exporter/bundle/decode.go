package bundle

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/guidepub/guidepub/site"
)

// A guide.json is checked in three passes so that every problem is
// reported, not just the first: the text is read into a tree of JSON values
// (syntax, duplicate keys), the tree is walked against the Go types of
// Guide (unknown fields, wrong types, missing required fields, integers),
// and only then is it decoded into a Guide and checked for meaning
// (validate.go).

type valueKind int

const (
	kindNull valueKind = iota
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

// describe names a kind for "expected X, got Y" messages.
func (k valueKind) describe() string {
	return [...]string{"null", "true or false", "a number", "a string", "an array", "an object"}[k]
}

// value is one JSON value of the tree; object keys keep their order.
type value struct {
	kind  valueKind
	bad   bool        // does not fit its Go type: left out when decoding
	b     bool        // kindBool
	str   string      // kindString
	num   json.Number // kindNumber
	keys  []string    // kindObject
	elems []*value    // kindArray elements, or kindObject values (parallel to keys)
}

// maxProblems bounds the problems reported for one guide.json, so that a
// huge broken file cannot produce an unbounded report.
const maxProblems = 200

// readTree reads data as exactly one JSON object. It returns nil and the
// syntax problem when data is not valid JSON; duplicate keys are reported
// as problems with the tree still returned.
func readTree(data []byte) (*value, []Problem) {
	if !utf8.Valid(data) {
		off := invalidUTF8Offset(data)
		return nil, []Problem{{Message: "invalid UTF-8 at " + position(data, off)}}
	}
	if !json.Valid(data) {
		return nil, []Problem{syntaxProblem(data)}
	}
	r := &treeReader{data: data}
	r.skipSpace()
	root := r.read()
	if root.kind != kindObject {
		return nil, []Problem{{Path: "$", Message: "guide.json must hold a JSON object, not " + root.kind.describe()}}
	}
	return root, r.problems
}

// syntaxProblem describes why data (not valid JSON) does not decode, with
// the line and column.
func syntaxProblem(data []byte) Problem {
	var v any
	err := json.Unmarshal(data, &v)
	var se *json.SyntaxError
	switch {
	case len(bytes.TrimSpace(data)) == 0:
		return Problem{Message: "guide.json is empty"}
	case errors.As(err, &se) && se.Offset >= int64(len(data)) && strings.Contains(se.Error(), "unexpected end"):
		return Problem{Message: "invalid JSON at " + position(data, int64(len(data))) + ": unexpected end of input (truncated file?)"}
	case errors.As(err, &se) && strings.Contains(se.Error(), "after top-level value"):
		rest := bytes.TrimLeft(data[se.Offset-1:], " \t\r\n")
		return Problem{Message: "unexpected data after the JSON object at " + position(data, int64(len(data)-len(rest)))}
	case errors.As(err, &se):
		// The offset counts the offending byte; point at it.
		return Problem{Message: "invalid JSON at " + position(data, se.Offset-1) + ": " + strings.TrimPrefix(se.Error(), "json: ")}
	case err != nil:
		return Problem{Message: "invalid JSON: " + err.Error()}
	}
	return Problem{Message: "invalid JSON"}
}

// treeReader builds the tree of a text that json.Valid accepted, so it
// does not check syntax again.
type treeReader struct {
	data     []byte
	pos      int
	steps    steps // where the value being read sits
	problems []Problem
}

func (r *treeReader) skipSpace() {
	for r.pos < len(r.data) {
		switch r.data[r.pos] {
		case ' ', '\t', '\r', '\n':
			r.pos++
		default:
			return
		}
	}
}

// read reads the value at r.pos and the space after it.
func (r *treeReader) read() *value {
	var v *value
	switch c := r.data[r.pos]; {
	case c == '{':
		v = &value{kind: kindObject}
		r.pos++
		r.skipSpace()
		var seen map[string]bool
		for r.data[r.pos] != '}' {
			key := r.string()
			r.skipSpace()
			r.pos++ // ':'
			r.skipSpace()
			r.steps.pushKey(key)
			if seen[key] {
				r.problems = append(r.problems, Problem{Path: r.steps.String(), Message: fmt.Sprintf("duplicate key %q", key)})
			}
			if seen == nil {
				seen = map[string]bool{}
			}
			seen[key] = true
			v.keys = append(v.keys, key)
			v.elems = append(v.elems, r.read())
			r.steps.pop()
			if r.data[r.pos] == ',' {
				r.pos++
				r.skipSpace()
			}
		}
		r.pos++
	case c == '[':
		v = &value{kind: kindArray}
		r.pos++
		r.skipSpace()
		for i := 0; r.data[r.pos] != ']'; i++ {
			r.steps.pushIndex(i)
			v.elems = append(v.elems, r.read())
			r.steps.pop()
			if r.data[r.pos] == ',' {
				r.pos++
				r.skipSpace()
			}
		}
		r.pos++
	case c == '"':
		v = &value{kind: kindString, str: r.string()}
	case c == 't':
		v = &value{kind: kindBool, b: true}
		r.pos += len("true")
	case c == 'f':
		v = &value{kind: kindBool}
		r.pos += len("false")
	case c == 'n':
		v = &value{kind: kindNull}
		r.pos += len("null")
	default:
		start := r.pos
		for r.pos < len(r.data) && strings.IndexByte("+-0123456789.eE", r.data[r.pos]) >= 0 {
			r.pos++
		}
		v = &value{kind: kindNumber, num: json.Number(r.data[start:r.pos])}
	}
	r.skipSpace()
	return v
}

// string reads the string at r.pos. Strings with escapes are decoded by
// encoding/json, so they mean exactly what they mean to json.Unmarshal.
func (r *treeReader) string() string {
	start := r.pos
	r.pos++
	escaped := false
	for {
		c := r.data[r.pos]
		r.pos++
		if c == '\\' {
			escaped = true
			r.pos++
		} else if c == '"' {
			break
		}
	}
	if !escaped {
		return string(r.data[start+1 : r.pos-1])
	}
	var s string
	_ = json.Unmarshal(r.data[start:r.pos], &s) // valid: json.Valid accepted it
	return s
}

// step is one step of a JSON path: an object key or an array index.
type step struct {
	key   string
	index int // -1 for a key
}

// steps is a JSON path under construction; its text is built only when a
// problem needs it.
type steps []step

func (s *steps) pushKey(k string)   { *s = append(*s, step{key: k, index: -1}) }
func (s *steps) pushIndex(i int)    { *s = append(*s, step{index: i}) }
func (s *steps) pop()               { *s = (*s)[:len(*s)-1] }
func (s steps) with(k string) steps { return append(s[:len(s):len(s)], step{key: k, index: -1}) }

// String returns the path as "$.a.b[2]".
func (s steps) String() string {
	var b strings.Builder
	b.WriteByte('$')
	for _, st := range s {
		if st.index >= 0 {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(st.index))
			b.WriteByte(']')
		} else {
			b.WriteString(keyPath(st.key))
		}
	}
	return b.String()
}

// position returns "line L, column C" (both from 1, columns in characters)
// of byte offset off in data.
func position(data []byte, off int64) string {
	if off < 0 {
		off = 0
	}
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	before := data[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	start := bytes.LastIndexByte(before, '\n') + 1
	col := utf8.RuneCount(before[start:]) + 1
	return fmt.Sprintf("line %d, column %d", line, col)
}

func invalidUTF8Offset(data []byte) int64 {
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 {
			return int64(i)
		}
		i += size
	}
	return int64(len(data))
}

// requiredFields lists the required JSON keys of the site package's types,
// which carry no bundle tags. Fields of this package's types are required
// by their `bundle:"required"` tag.
var requiredFields = map[reflect.Type][]string{
	reflect.TypeFor[site.Property]():    {"country"},
	reflect.TypeFor[site.Location]():    {"lat", "lng"},
	reflect.TypeFor[site.Phone]():       {"number"},
	reflect.TypeFor[site.SocialLink]():  {"link"},
	reflect.TypeFor[site.Summary]():     {"measurementStandard"},
	reflect.TypeFor[site.Building]():    {"id"},
	reflect.TypeFor[site.Floor]():       {"id"},
	reflect.TypeFor[site.Room]():        {"id", "area"},
	reflect.TypeFor[site.WallSegment](): {"length", "height", "area", "areaWithoutOpenings"},
	reflect.TypeFor[site.Webhook]():     {"url"},
}

// structInfo is what the walk needs to know of a struct type.
type structInfo struct {
	fields   map[string]reflect.StructField // by JSON key
	required []string                       // JSON keys, in field order
}

var structInfos sync.Map // reflect.Type -> *structInfo

func infoOf(t reflect.Type) *structInfo {
	if si, ok := structInfos.Load(t); ok {
		return si.(*structInfo)
	}
	si := &structInfo{fields: map[string]reflect.StructField{}}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() || f.Tag.Get("json") == "-" {
			continue
		}
		name := jsonName(f)
		si.fields[name] = f
		if f.Tag.Get("bundle") == "required" {
			si.required = append(si.required, name)
		}
	}
	si.required = append(si.required, requiredFields[t]...)
	structInfos.Store(t, si)
	return si
}

var timeType = reflect.TypeFor[time.Time]()

// walker checks a tree against a Go type.
type walker struct {
	steps    steps // where the value being walked sits
	problems []Problem
	// changed holds the paths of values the decoded guide lacks or holds
	// as zero: values of the wrong shape, missing required fields.
	changed []string
}

func (w *walker) add(path, format string, args ...any) {
	w.problems = append(w.problems, Problem{Path: path, Message: fmt.Sprintf(format, args...)})
}

// bad records a problem with the value v at the current path, which is
// then left out of the decoded guide.
func (w *walker) bad(v *value, format string, args ...any) {
	v.bad = true
	p := w.steps.String()
	w.add(p, format, args...)
	w.changed = append(w.changed, p)
}

// jsonKinds maps the Go kinds of the bundle types to the JSON kind they
// decode from.
var jsonKinds = map[reflect.Kind]valueKind{
	reflect.Struct: kindObject, reflect.Map: kindObject, reflect.Slice: kindArray,
	reflect.String: kindString, reflect.Bool: kindBool,
	reflect.Int: kindNumber, reflect.Int64: kindNumber, reflect.Float64: kindNumber,
}

// walk checks the value v against the Go type t it decodes into, marking
// the values that do not fit as bad and reporting each as a problem.
func (w *walker) walk(v *value, t reflect.Type) {
	if len(w.problems) >= maxProblems {
		return
	}
	if v.kind == kindNull {
		switch t.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface:
		default:
			w.bad(v, "expected %s, got null", expected(t))
		}
		return
	}
	if t == timeType {
		w.walkTime(v, t)
		return
	}
	if t.Kind() == reflect.Pointer {
		w.walk(v, t.Elem())
		return
	}
	k, ok := jsonKinds[t.Kind()]
	if !ok {
		w.bad(v, "unsupported field type %s", t)
		return
	}
	if v.kind != k {
		w.bad(v, "expected %s, got %s", expected(t), v.kind.describe())
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		w.walkStruct(v, t)
	case reflect.Map:
		for i, key := range v.keys {
			w.steps.pushKey(key)
			w.walk(v.elems[i], t.Elem())
			w.steps.pop()
		}
	case reflect.Slice:
		for i, el := range v.elems {
			w.steps.pushIndex(i)
			w.walk(el, t.Elem())
			w.steps.pop()
		}
	case reflect.Int, reflect.Int64:
		if _, err := strconv.ParseInt(v.num.String(), 10, 64); err != nil {
			if !strings.ContainsAny(v.num.String(), ".eE") {
				w.bad(v, "integer %s is out of range", v.num)
			} else {
				w.bad(v, "expected an integer, got %s", v.num)
			}
		}
	case reflect.Float64:
		if _, err := strconv.ParseFloat(v.num.String(), 64); err != nil {
			w.bad(v, "number %s is out of range", v.num)
		}
	}
}

// walkTime checks that v, the value of a time.Time field of type t, is
// an RFC 3339 time.
func (w *walker) walkTime(v *value, t reflect.Type) {
	if v.kind != kindString {
		w.bad(v, "expected %s, got %s", expected(t), v.kind.describe())
		return
	}
	quoted, _ := json.Marshal(v.str)
	var tm time.Time
	if err := tm.UnmarshalJSON(quoted); err != nil {
		w.bad(v, "%q is not an RFC 3339 time such as \"2099-12-31T23:59:59Z\"", v.str)
	}
}

// walkStruct walks the members of the object v against the fields of the
// struct type t: unknown fields and missing required ones are problems.
func (w *walker) walkStruct(v *value, t reflect.Type) {
	si := infoOf(t)
	var present map[string]bool
	if len(si.required) > 0 {
		present = make(map[string]bool, len(v.keys))
	}
	for i, key := range v.keys {
		w.steps.pushKey(key)
		if f, ok := si.fields[key]; !ok {
			// Left out of the decoded guide, but it was never part of it.
			v.elems[i].bad = true
			w.add(w.steps.String(), "unknown field %q", key)
		} else {
			if present != nil {
				present[key] = v.elems[i].kind != kindNull
			}
			w.walk(v.elems[i], f.Type)
		}
		w.steps.pop()
	}
	for _, key := range si.required {
		if !present[key] {
			p := w.steps.with(key).String()
			w.add(p, "missing required field %q", key)
			w.changed = append(w.changed, p)
		}
	}
}

// encode writes the tree as JSON, leaving out bad values: an object drops
// the key, an array keeps the element's place as null so that the paths of
// later elements do not change.
func (v *value) encode(buf *bytes.Buffer) {
	switch v.kind {
	case kindNull:
		buf.WriteString("null")
	case kindBool:
		buf.WriteString(strconv.FormatBool(v.b))
	case kindNumber:
		buf.WriteString(v.num.String())
	case kindString:
		quoted, _ := json.Marshal(v.str)
		buf.Write(quoted)
	case kindArray:
		buf.WriteByte('[')
		for i, el := range v.elems {
			if i > 0 {
				buf.WriteByte(',')
			}
			if el.bad {
				buf.WriteString("null")
			} else {
				el.encode(buf)
			}
		}
		buf.WriteByte(']')
	case kindObject:
		buf.WriteByte('{')
		n := 0
		for i, el := range v.elems {
			if el.bad {
				continue
			}
			if n > 0 {
				buf.WriteByte(',')
			}
			n++
			quoted, _ := json.Marshal(v.keys[i])
			buf.Write(quoted)
			buf.WriteByte(':')
			el.encode(buf)
		}
		buf.WriteByte('}')
	}
}

// expected names what a JSON value of Go type t must be.
func expected(t reflect.Type) string {
	if t == timeType {
		return "an RFC 3339 time string"
	}
	switch t.Kind() {
	case reflect.Pointer:
		return expected(t.Elem())
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice:
		return "an array"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int64:
		return "an integer"
	case reflect.Float64:
		return "a number"
	}
	return t.String()
}

// within reports whether JSON path a is b or a value inside b.
func within(a, b string) bool {
	if !strings.HasPrefix(a, b) {
		return false
	}
	return len(a) == len(b) || a[len(b)] == '.' || a[len(b)] == '['
}

// normalize makes decoded guides compare and encode the same way however
// the input spelled emptiness: an empty optional list or map (omitempty) is
// nil, a list that is always encoded (dims, buildings, floors, rooms) is
// non-nil, and expiry times are in UTC.
func normalize(g *Guide) {
	normalizeValue(reflect.ValueOf(g).Elem())
	for i := range g.Views {
		if t := g.Views[i].ExpiresAt; t != nil {
			u := t.UTC()
			g.Views[i].ExpiresAt = &u
		}
	}
}

func normalizeValue(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			normalizeValue(v.Elem())
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			normalizeValue(v.Index(i))
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			el := reflect.New(v.Type().Elem()).Elem()
			el.Set(v.MapIndex(k))
			normalizeValue(el)
			v.SetMapIndex(k, el)
		}
	case reflect.Struct:
		if v.Type() == timeType {
			return
		}
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			sf := t.Field(i)
			f := v.Field(i)
			if !sf.IsExported() {
				continue
			}
			if f.Kind() == reflect.Slice || f.Kind() == reflect.Map {
				_, opts, _ := strings.Cut(sf.Tag.Get("json"), ",")
				omit := strings.Contains(","+opts+",", ",omitempty,")
				switch {
				case strings.Contains(","+opts+",", ",omitzero,"):
					// Given as [] or {} or not given: kept as given.
				case omit && f.Len() == 0:
					f.SetZero()
				case !omit && f.IsNil() && f.Kind() == reflect.Slice:
					f.Set(reflect.MakeSlice(f.Type(), 0, 0))
				case !omit && f.IsNil():
					f.Set(reflect.MakeMap(f.Type()))
				}
			}
			normalizeValue(f)
		}
	}
}

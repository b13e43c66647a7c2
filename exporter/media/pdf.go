package media

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
)

// PDFs are read with pdfcpu (see docs/output.md#pdf-documents), which
// parses the whole document with limits on what input can make it
// allocate; guidepub then builds a new document of the pages alone, each
// object copied by the allow-list of pdfschema.go, and writes it itself.
// Nothing is published because it was not known to be private: an
// outline, an attachment, a form field's value, a custom key are not
// removed, they are never copied.

// PDFTimeout bounds the time one PDF may take to parse.
const PDFTimeout = 60 * time.Second

// pdfStreamBytes bounds what one stream of a PDF (an object stream, a
// cross-reference stream) may decode to when it is parsed.
const pdfStreamBytes = 32 << 20

// maxPDFDepth bounds how deeply objects may nest in one another, and
// page tree nodes in one another.
const maxPDFDepth = 64

var disableConfig sync.Once

// pdfConfig returns pdfcpu's configuration for a file of size bytes:
// relaxed validation (what viewers accept), no network, no configuration
// folder, and resource limits well below pdfcpu's defaults.
func pdfConfig(size int64) *model.Configuration {
	disableConfig.Do(func() { model.ConfigPath = "disable" })
	conf := model.NewDefaultConfiguration()
	conf.ValidationMode = model.ValidationRelaxed
	conf.Offline = true
	conf.Limits.MaxStreamBytes = max(size, 1)
	conf.Limits.MaxDecodeBytes = pdfStreamBytes
	conf.Limits.MaxObjectCount = 1_000_000
	conf.Limits.MaxXRefEntries = 1_000_000
	conf.Limits.MaxObjectStreamCount = 100_000
	conf.Limits.MaxRecursionDepth = maxPDFDepth
	return conf
}

// RebuildPDF writes to dst a new PDF document made of what the pages of
// the document data draw, and nothing else: each page's boxes, rotation,
// content streams and the resources they use (fonts, images, forms,
// colour spaces, patterns, shadings, graphics states), each object with
// only the entries drawing reads (pdfschema.go), ICC profiles rebuilt as
// images' are, and optional content groups renamed. The catalog has no
// outline, names, attachments, JavaScript, actions, annotations, form,
// page labels, structure tree, metadata or any other entry; there is no
// document information dictionary. The output depends only on data.
//
// budget bounds the memory the rebuild may take (DecodeCost.Bytes, as
// Check estimated it; 0 for DefaultDecodeMemory): a document whose
// packed objects would take more is refused before it is parsed. It
// returns an error, whose message reads after "the file is ", when data
// does not parse as a PDF, is encrypted, has no page, or exceeds the
// budget or the parser's limits.
func RebuildPDF(dst io.Writer, data []byte, budget int64) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("a PDF document that does not parse (%v)", r)
		}
	}()
	if budget <= 0 {
		budget = DefaultDecodeMemory
	}
	cost, err := pdfCost(bytes.NewReader(data), int64(len(data)), budget)
	if err != nil {
		return err
	}
	if err := cost.check(PDF, Limits{Memory: budget}); err != nil {
		return err
	}
	c, cancel := context.WithTimeout(context.Background(), PDFTimeout)
	defer cancel()
	ctx, err := pdfcpu.ReadWithContext(c, bytes.NewReader(data), pdfConfig(int64(len(data))))
	if err != nil {
		return pdfError(err)
	}
	if ctx.Encrypt != nil {
		return errors.New("a PDF document that is encrypted: publish it without a password or permissions")
	}
	r := &pdfRebuild{c: c, src: ctx, memo: map[pdfMemoKey]int{}}
	if err := r.build(); err != nil {
		return pdfError(err)
	}
	return r.write(dst, ctx.XRefTable.Version(), sha256.Sum256(data))
}

// pdfError words an error of reading a PDF for a message about a bundle
// file.
func pdfError(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("a PDF document that takes more than %v to read", PDFTimeout)
	}
	if _, ok := errors.AsType[*pdfRefusal](err); ok {
		return err
	}
	msg := err.Error()
	if len(msg) > 200 {
		msg = msg[:200] + "…"
	}
	return fmt.Errorf("a PDF document that does not parse (%s)", msg)
}

// pdfRefusal is an error of the rebuild that says itself what is wrong
// with the document ("a PDF document with no page").
type pdfRefusal struct{ msg string }

func (e *pdfRefusal) Error() string { return e.msg }

func refuse(format string, args ...any) error { return &pdfRefusal{fmt.Sprintf(format, args...)} }

// pdfObj is an object of the rebuilt document: a value, or a stream's
// dictionary (value) and encoded bytes.
type pdfObj struct {
	value  types.Object
	stream bool
	raw    []byte
}

// pdfMemoKey names the copy of a source object as one kind: an object
// reached again as the same kind is the same new object.
type pdfMemoKey struct {
	nr   int
	kind pdfKind
}

// pdfRebuild copies what the pages of src draw into objs, numbered from
// 1: the catalog, the page tree's root, then each object in the order the
// walk meets it, so that the numbering depends on the document alone.
type pdfRebuild struct {
	c    context.Context
	src  *model.Context
	objs []pdfObj
	memo map[pdfMemoKey]int
	// ocgs are the new numbers of the optional content groups copied,
	// in the order met; iccBytes counts the profiles' decoded bytes.
	ocgs     []int
	iccBytes int64
}

// The new document's first objects.
const (
	pdfCatalogNr = 1
	pdfPagesNr   = 2
)

func pdfRef(nr int) types.IndirectRef { return *types.NewIndirectRef(nr, 0) }

// add appends o and returns its number.
func (r *pdfRebuild) add(o pdfObj) int {
	r.objs = append(r.objs, o)
	return len(r.objs)
}

// build copies the pages, then writes the page tree's root and the
// catalog.
func (r *pdfRebuild) build() error {
	if r.src.RootDict == nil {
		return refuse("a PDF document without a catalog")
	}
	r.add(pdfObj{}) // the catalog
	r.add(pdfObj{}) // the page tree
	var kids types.Array
	seen := map[int]bool{}
	if err := r.pageTree(r.src.RootDict["Pages"], types.Dict{}, &kids, seen, 0); err != nil {
		return err
	}
	if len(kids) == 0 {
		return refuse("a PDF document with no page")
	}
	r.objs[pdfPagesNr-1] = pdfObj{value: types.Dict{"Type": types.Name("Pages"), "Kids": kids, "Count": types.Integer(len(kids))}}
	catalog := types.Dict{"Type": types.Name("Catalog"), "Pages": pdfRef(pdfPagesNr)}
	if oc := r.ocProperties(); oc != nil {
		catalog["OCProperties"] = oc
	}
	r.objs[pdfCatalogNr-1] = pdfObj{value: catalog}
	return nil
}

// pageTree walks the page tree node, passing on the inherited entries,
// and appends a reference to each page copied to kids. A node met twice
// (a loop, or a page listed twice) is copied once.
func (r *pdfRebuild) pageTree(node types.Object, inherited types.Dict, kids *types.Array, seen map[int]bool, depth int) error {
	if depth > maxPDFDepth {
		return refuse("a PDF document whose page tree is more than %d levels deep", maxPDFDepth)
	}
	v, nr, err := r.resolve(node)
	if err != nil {
		return err
	}
	d, ok := v.(types.Dict)
	if !ok || (nr != 0 && seen[nr]) {
		return nil
	}
	seen[nr] = true
	kidList, isNode := d["Kids"]
	if t := d.Type(); t != nil && *t == "Page" || t == nil && !isNode {
		return r.page(d, inherited, kids, depth)
	}
	passed := inherited.Clone().(types.Dict)
	for _, k := range pdfInherited {
		if v, ok := d[k]; ok {
			passed[k] = v
		}
	}
	list, _, err := r.resolve(kidList)
	if err != nil {
		return err
	}
	a, _ := list.(types.Array)
	for _, kid := range a {
		if err := r.pageTree(kid, passed, kids, seen, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// page copies the page d, with the entries it inherits, and appends a
// reference to the copy to kids.
func (r *pdfRebuild) page(d, inherited types.Dict, kids *types.Array, depth int) error {
	entry := func(k string) types.Object {
		if v, ok := d[k]; ok {
			return v
		}
		return inherited[k]
	}
	out := types.Dict{"Type": types.Name("Page"), "Parent": pdfRef(pdfPagesNr)}
	for _, k := range slices.Sorted(maps.Keys(pdfPageKeys)) {
		if err := r.set(out, k, entry(k), pdfPageKeys[k], depth); err != nil {
			return err
		}
	}
	if _, ok := out["MediaBox"].(types.Array); !ok {
		return refuse("a PDF document whose page %d has no media box", len(*kids)+1)
	}
	if err := r.set(out, "Resources", entry("Resources"), pdfResources, depth); err != nil {
		return err
	}
	if err := r.set(out, "Contents", d["Contents"], pdfContent, depth); err != nil {
		return err
	}
	*kids = append(*kids, pdfRef(r.add(pdfObj{value: out})))
	return nil
}

// set copies v as kind k into out[key], unless the copy keeps nothing.
func (r *pdfRebuild) set(out types.Dict, key string, v types.Object, k pdfKind, depth int) error {
	if v == nil {
		return nil
	}
	c, err := r.copy(v, k, depth+1)
	if c != nil {
		out[key] = c
	}
	return err
}

// resolve returns the object o refers to (o itself when it is direct)
// and its number (0 for a direct object). A reference to nothing, or to
// another reference, is nil, as a reader takes it for null.
func (r *pdfRebuild) resolve(o types.Object) (types.Object, int, error) {
	ref, ok := o.(types.IndirectRef)
	if !ok {
		return o, 0, nil
	}
	nr := ref.ObjectNumber.Value()
	e, ok := r.src.Table[nr]
	if !ok || e == nil || e.Free || e.Object == nil {
		return nil, nr, nil
	}
	if l, ok := e.Object.(types.LazyObjectStreamObject); ok {
		d, err := l.DecodedObject(r.c)
		if err != nil {
			return nil, nr, err
		}
		e.Object = d
	}
	if _, ok := e.Object.(types.IndirectRef); ok {
		return nil, nr, nil
	}
	return e.Object, nr, nil
}

// copy returns the copy of o as kind k: a scalar copied, a dictionary or
// array copied by the rules of k, an indirect object made one new object
// (the same one each time it is met as k). nil means nothing of o is
// kept.
func (r *pdfRebuild) copy(o types.Object, k pdfKind, depth int) (types.Object, error) {
	if depth > maxPDFDepth {
		return nil, refuse("a PDF document with objects nested more than %d deep", maxPDFDepth)
	}
	if err := r.c.Err(); err != nil {
		return nil, err
	}
	v, nr, err := r.resolve(o)
	if err != nil || v == nil {
		return nil, err
	}
	if number, name, text := pdfScalar(k); number || name || text {
		return r.scalar(v, number, name, text, depth)
	}
	k = r.dispatch(v, k)
	if k == pdfNone {
		return nil, nil
	}
	if nr == 0 {
		if k == pdfOCG {
			return nil, nil // a group is an indirect object: one that is not cannot be told apart
		}
		obj, err := r.copyValue(v, k, depth)
		if obj.stream {
			return nil, err
		}
		return obj.value, err
	}
	key := pdfMemoKey{nr, k}
	if n, ok := r.memo[key]; ok {
		if n == 0 {
			return nil, nil // copied before, and nothing of it kept
		}
		return pdfRef(n), nil
	}
	n := r.add(pdfObj{})
	r.memo[key] = n
	if k == pdfOCG {
		r.ocgs = append(r.ocgs, n)
	}
	obj, err := r.copyValue(v, k, depth)
	if err != nil {
		return nil, err
	}
	r.objs[n-1] = obj
	if obj.value == nil {
		// Nothing of it is kept: the entry referring to it is dropped, as
		// a reader takes a reference to nothing (its number stays null).
		r.memo[key] = 0
		return nil, nil
	}
	return pdfRef(n), nil
}

// dispatch returns the kind v is as k: an XObject is an image or a form
// by its Subtype, optional content a group or a membership dictionary by
// its Type; pdfNone when v is neither.
func (r *pdfRebuild) dispatch(v types.Object, k pdfKind) pdfKind {
	var d types.Dict
	switch v := v.(type) {
	case types.Dict:
		d = v
	case types.StreamDict:
		d = v.Dict
	}
	switch k {
	case pdfXObject:
		switch st := d.Subtype(); {
		case st != nil && *st == "Image":
			return pdfImage
		case st != nil && *st == "Form":
			return pdfForm
		}
		return pdfNone
	case pdfOC:
		switch t := d.Type(); {
		case t != nil && *t == "OCG":
			return pdfOCG
		case t != nil && *t == "OCMD":
			return pdfOCMD
		}
		return pdfNone
	}
	return k
}

// copyValue copies v, a direct object or the value of an indirect one,
// as kind k.
func (r *pdfRebuild) copyValue(v types.Object, k pdfKind, depth int) (pdfObj, error) {
	if special, ok := pdfSpecial[k]; ok {
		return special(r, v, depth)
	}
	switch v := v.(type) {
	case types.Array:
		out := make(types.Array, 0, len(v))
		for _, e := range v {
			c, err := r.copy(e, k, depth+1)
			if err != nil {
				return pdfObj{}, err
			}
			out = append(out, c)
		}
		return pdfObj{value: out}, nil
	case types.Dict:
		d, err := r.dict(v, k, depth)
		return pdfObj{value: d}, err
	case types.StreamDict:
		return r.stream(v, k, depth)
	}
	return pdfObj{}, nil
}

// dict copies the entries of d that kind k keeps.
func (r *pdfRebuild) dict(d types.Dict, k pdfKind, depth int) (types.Dict, error) {
	keys := pdfKeys[k]
	out := types.Dict{}
	for _, key := range slices.Sorted(maps.Keys(d)) {
		ek, ok := keys[key]
		if !ok {
			continue
		}
		var c types.Object
		var err error
		if pdfNameDict(k, key) {
			c, err = r.nameDict(d[key], ek, depth+1)
		} else {
			c, err = r.copy(d[key], ek, depth+1)
		}
		if err != nil {
			return nil, err
		}
		if c != nil {
			out[key] = c
		}
	}
	if k == pdfOCG {
		out["Name"] = types.StringLiteral(fmt.Sprintf("Layer %d", len(r.ocgs)))
	}
	return out, nil
}

// nameDict copies a dictionary of names the producer chose (a page's
// fonts by name) whose values are of kind k.
func (r *pdfRebuild) nameDict(o types.Object, k pdfKind, depth int) (types.Object, error) {
	v, _, err := r.resolve(o)
	if err != nil {
		return nil, err
	}
	d, ok := v.(types.Dict)
	if !ok {
		return nil, nil
	}
	out := types.Dict{}
	for _, name := range slices.Sorted(maps.Keys(d)) {
		c, err := r.copy(d[name], k, depth+1)
		if err != nil {
			return nil, err
		}
		if c != nil {
			out[name] = c
		}
	}
	return out, nil
}

// stream copies a stream's kept entries, how its bytes are encoded and
// its bytes as they are.
func (r *pdfRebuild) stream(sd types.StreamDict, k pdfKind, depth int) (pdfObj, error) {
	if sd.Raw == nil && sd.StreamLength != nil && *sd.StreamLength > 0 {
		return pdfObj{}, errors.New("a stream that was not read")
	}
	d, err := r.dict(sd.Dict, k, depth)
	if err != nil {
		return pdfObj{}, err
	}
	for _, key := range slices.Sorted(maps.Keys(pdfStreamKeys)) {
		if err := r.set(d, key, sd.Dict[key], pdfStreamKeys[key], depth); err != nil {
			return pdfObj{}, err
		}
	}
	return pdfObj{value: d, stream: true, raw: sd.Raw}, nil
}

// scalar copies v when it is a scalar of an accepted type, or an array
// of them (nested, references followed); other elements of an array
// become null, so that the positions of the others hold.
func (r *pdfRebuild) scalar(v types.Object, number, name, text bool, depth int) (types.Object, error) {
	switch v := v.(type) {
	case types.Integer, types.Float, types.Boolean:
		if number {
			return v, nil
		}
	case types.Name:
		if name {
			return v, nil
		}
	case types.StringLiteral, types.HexLiteral:
		if text {
			return v, nil
		}
	case types.Array:
		if depth > maxPDFDepth {
			return nil, refuse("a PDF document with arrays nested more than %d deep", maxPDFDepth)
		}
		out := make(types.Array, 0, len(v))
		for _, e := range v {
			ev, _, err := r.resolve(e)
			if err != nil {
				return nil, err
			}
			c, err := r.scalar(ev, number, name, text, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, c)
		}
		return out, nil
	}
	return nil, nil
}

// ocProperties returns the catalog's optional content properties for the
// groups copied: each group's default state as the source's default
// configuration sets it, nothing else (no names, order or usage).
func (r *pdfRebuild) ocProperties() types.Object {
	if len(r.ocgs) == 0 {
		return nil
	}
	var all types.Array
	for _, n := range r.ocgs {
		all = append(all, pdfRef(n))
	}
	d := types.Dict{}
	src, _, _ := r.resolve(r.src.RootDict["OCProperties"])
	if p, ok := src.(types.Dict); ok {
		conf, _, _ := r.resolve(p["D"])
		if c, ok := conf.(types.Dict); ok {
			if b, ok := c["BaseState"].(types.Name); ok && (b == "ON" || b == "OFF" || b == "Unchanged") {
				d["BaseState"] = b
			}
			for _, state := range []string{"ON", "OFF"} {
				if a := r.copiedOCGs(c[state]); len(a) > 0 {
					d[state] = a
				}
			}
		}
	}
	return types.Dict{"OCGs": all, "D": d}
}

// copiedOCGs returns the copies of the groups the array o lists that
// were copied.
func (r *pdfRebuild) copiedOCGs(o types.Object) types.Array {
	v, _, _ := r.resolve(o)
	a, _ := v.(types.Array)
	var out types.Array
	for _, e := range a {
		if ref, ok := e.(types.IndirectRef); ok {
			if n, ok := r.memo[pdfMemoKey{ref.ObjectNumber.Value(), pdfOCG}]; ok {
				out = append(out, pdfRef(n))
			}
		}
	}
	return out
}

// write writes the rebuilt objects to dst with a cross-reference table,
// the header version of the source and the file identifier taken from
// digest (the source's): the bytes depend on the document alone.
// pdfcpu's own writer is not used: it stamps the file with the time and
// orders objects by walking Go maps.
func (r *pdfRebuild) write(dst io.Writer, version model.Version, digest [sha256.Size]byte) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%%PDF-%s\n%%\xE2\xE3\xCF\xD3\n", version)
	offsets := make([]int, len(r.objs))
	for i, o := range r.objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n", i+1)
		switch {
		case o.stream:
			d := o.value.(types.Dict)
			d["Length"] = types.Integer(len(o.raw))
			fmt.Fprintf(&b, "%s\nstream\n", d.PDFString())
			b.Write(o.raw)
			b.WriteString("\nendstream")
		case o.value == nil:
			b.WriteString("null")
		default:
			b.WriteString(o.value.PDFString())
		}
		b.WriteString("\nendobj\n")
	}
	size := len(r.objs) + 1
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f\r\n", size)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n\r\n", off)
	}
	id := types.HexLiteral(strings.ToUpper(hex.EncodeToString(digest[:16])))
	trailer := types.Dict{"Size": types.Integer(size), "Root": pdfRef(pdfCatalogNr), "ID": types.Array{id, id}}
	fmt.Fprintf(&b, "trailer\n%s\nstartxref\n%d\n%%%%EOF\n", trailer.PDFString(), xref)
	_, err := dst.Write(b.Bytes())
	return err
}

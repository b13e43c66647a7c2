package media

import (
	"bytes"
	"compress/zlib"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/validate"
)

// The strip that published PDFs before they were rebuilt (removing the
// document information, XMP, piece info and thumbnails, keeping every
// other object the catalog reaches), kept here as the baseline
// BenchmarkPDF compares the rebuild with. It is not used to publish.

// strippedKeys are the entries removed from every dictionary of a PDF: the
// XMP metadata stream, an application's private data (PieceInfo, which
// editors fill with whole copies of the document) and page thumbnails
// (pictures of the page as it once was).
var strippedKeys = []string{"Metadata", "PieceInfo", "LastModified", "Thumb"}

// stripPDFBefore writes the PDF document data to dst without its metadata: no
// document information dictionary (/Info: title, author, dates,
// producer), no XMP metadata stream on the catalog, a page or any other
// object, no PieceInfo, LastModified or page thumbnails, and nothing that
// no page or catalog entry reaches. What the pages draw is kept object for
// object; the file identifier is derived from data. The output depends
// only on data. It returns an error, whose message reads after "the file
// is ", when data does not parse as a PDF, is encrypted, or exceeds the
// parser's limits. Memory is about 6 to 9 times len(data) (pdfCost).
func stripPDFBefore(dst io.Writer, data []byte) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("a PDF document that does not parse (%v)", r)
		}
	}()
	if err := checkXRefStreamsBefore(data); err != nil {
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
	if err := dropMetadataBefore(c, ctx); err != nil {
		return pdfError(err)
	}
	if err := validate.XRefTable(ctx); err != nil {
		return pdfError(err)
	}
	return writePDFBefore(dst, ctx, sha256.Sum256(data))
}

// xrefStreamBefore finds the dictionary of a cross-reference stream: from "obj"
// to "stream", with /Type /XRef and no other filter than FlateDecode.
var (
	xrefStreamBefore = regexp.MustCompile(`(?s)\bobj\s*<<((?:[^s]|s[^t]|st[^r])*?/Type\s*/XRef\b.*?)>>\s*stream\r?\n`)
	pdfFilterBefore  = regexp.MustCompile(`/Filter\s*(\[[^\]]*\]|/[A-Za-z0-9]+)`)
)

// checkXRefStreamsBefore refuses a document with a cross-reference stream that
// decompresses to more than pdfStreamBytes, or whose cross-reference
// streams decompress to more than pdfXRefBytes together. pdfcpu decodes
// these streams before it reads its configuration's limits, up to 512 MiB
// each (and several times that allocated): a 256 KiB file can ask for it.
func checkXRefStreamsBefore(data []byte) error {
	var total int64
	for _, m := range xrefStreamBefore.FindAllSubmatchIndex(data, -1) {
		dict := data[m[2]:m[3]]
		if f := pdfFilterBefore.FindSubmatch(dict); f != nil && strings.Trim(string(f[1]), "[] \r\n\t") != "/FlateDecode" {
			return fmt.Errorf("a PDF document whose cross-reference stream is encoded with %s; only FlateDecode is read", f[1])
		}
		zr, err := zlib.NewReader(bytes.NewReader(data[m[1]:]))
		if err != nil {
			continue // not compressed, or broken: pdfcpu says which
		}
		n, _ := io.Copy(io.Discard, io.LimitReader(zr, pdfStreamBytes+1))
		if n > pdfStreamBytes {
			return fmt.Errorf("a PDF document with a cross-reference stream that decompresses to more than %d MiB", pdfStreamBytes>>20)
		}
		if total += n; total > pdfXRefBytes {
			return fmt.Errorf("a PDF document whose cross-reference streams decompress to more than %d MiB", pdfXRefBytes>>20)
		}
	}
	return nil
}

// dropMetadataBefore removes the document information dictionary and the
// strippedKeys entries of every dictionary and stream of ctx. An object
// kept in an object stream is parsed first (pdfcpu would otherwise copy
// its bytes as they are).
func dropMetadataBefore(c context.Context, ctx *model.Context) error {
	ctx.Info = nil
	for _, e := range ctx.Table {
		if e == nil || e.Free || e.Object == nil {
			continue
		}
		if l, ok := e.Object.(types.LazyObjectStreamObject); ok {
			o, err := l.DecodedObject(c)
			if err != nil {
				return err
			}
			if err := model.ProcessRefCountsWithError(ctx.XRefTable, o); err != nil {
				return err
			}
			e.Object = o
		}
		switch o := e.Object.(type) {
		case types.Dict:
			dropKeysBefore(o)
		case types.StreamDict:
			dropKeysBefore(o.Dict)
		case types.ObjectStreamDict:
			dropKeysBefore(o.Dict)
		}
	}
	if ctx.RootDict != nil {
		dropKeysBefore(ctx.RootDict)
	}
	return nil
}

func dropKeysBefore(d types.Dict) {
	for _, k := range strippedKeys {
		delete(d, k)
	}
}

// writePDFBefore writes the objects of ctx that the catalog reaches to dst,
// in the order of their numbers, with a cross-reference table and the
// file identifier id (from the source's digest): the bytes depend on the
// document alone. pdfcpu's own writer is not used for this: it stamps
// the file with the time and orders objects by walking Go maps, so one
// document gave different bytes from run to run.
func writePDFBefore(dst io.Writer, ctx *model.Context, digest [sha256.Size]byte) error {
	if ctx.Root == nil {
		return errors.New("a PDF document without a catalog")
	}
	reached := map[int]bool{}
	if err := reachBefore(ctx, *ctx.Root, reached, 0); err != nil {
		return err
	}
	nrs := slices.Sorted(maps.Keys(reached))
	var b bytes.Buffer
	fmt.Fprintf(&b, "%%PDF-%s\n%%\xE2\xE3\xCF\xD3\n", ctx.XRefTable.Version())
	offsets := map[int]int{}
	for _, nr := range nrs {
		offsets[nr] = b.Len()
		if err := writeObjectBefore(&b, ctx, nr); err != nil {
			return err
		}
	}
	size := nrs[len(nrs)-1] + 1
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f\r\n", size)
	for nr := 1; nr < size; nr++ {
		if off, ok := offsets[nr]; ok {
			fmt.Fprintf(&b, "%010d %05d n\r\n", off, generationBefore(ctx, nr))
		} else {
			b.WriteString("0000000000 00000 f\r\n")
		}
	}
	id := types.HexLiteral(strings.ToUpper(hex.EncodeToString(digest[:16])))
	trailer := types.Dict{"Size": types.Integer(size), "Root": *ctx.Root, "ID": types.Array{id, id}}
	fmt.Fprintf(&b, "trailer\n%s\nstartxref\n%d\n%%%%EOF\n", trailer.PDFString(), xref)
	_, err := dst.Write(b.Bytes())
	return err
}

// reachBefore adds to reached the number of every object that o refers to,
// directly or through the objects it reaches.
func reachBefore(ctx *model.Context, o types.Object, reached map[int]bool, depth int) error {
	if depth > 256 {
		return errors.New("a PDF document with objects nested too deeply")
	}
	switch o := o.(type) {
	case types.IndirectRef:
		nr := o.ObjectNumber.Value()
		if reached[nr] {
			return nil
		}
		e, ok := ctx.Table[nr]
		if !ok || e == nil || e.Free || e.Object == nil {
			return nil // a reference to nothing reads as null
		}
		reached[nr] = true
		return reachBefore(ctx, e.Object, reached, 0)
	case types.Dict:
		for _, k := range slices.Sorted(maps.Keys(o)) {
			if err := reachBefore(ctx, o[k], reached, depth+1); err != nil {
				return err
			}
		}
	case types.StreamDict:
		return reachBefore(ctx, o.Dict, reached, depth+1)
	case types.Array:
		for _, v := range o {
			if err := reachBefore(ctx, v, reached, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeObjectBefore writes object nr of ctx as an indirect object; a stream
// with its encoded bytes as read and their length.
func writeObjectBefore(b *bytes.Buffer, ctx *model.Context, nr int) error {
	fmt.Fprintf(b, "%d %d obj\n", nr, generationBefore(ctx, nr))
	switch o := ctx.Table[nr].Object.(type) {
	case types.StreamDict:
		if o.Raw == nil && o.StreamLength != nil && *o.StreamLength > 0 {
			return fmt.Errorf("a PDF document whose stream %d was not read", nr)
		}
		d := o.Dict.Clone().(types.Dict)
		d["Length"] = types.Integer(len(o.Raw))
		fmt.Fprintf(b, "%s\nstream\n", d.PDFString())
		b.Write(o.Raw)
		b.WriteString("\nendstream")
	case types.ObjectStreamDict, types.XRefStreamDict:
		return fmt.Errorf("a PDF document whose object %d, a cross-reference or object stream, is referred to", nr)
	default:
		b.WriteString(o.PDFString())
	}
	b.WriteString("\nendobj\n")
	return nil
}

// generationBefore returns the generation number of object nr of ctx.
func generationBefore(ctx *model.Context, nr int) int {
	if g := ctx.Table[nr].Generation; g != nil {
		return *g
	}
	return 0
}

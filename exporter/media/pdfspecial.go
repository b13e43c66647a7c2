package media

import (
	"bytes"
	"compress/zlib"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
)

// The kinds whose objects are not one dictionary with an allow-list: a
// colour space is an array read by its family, some entries are a name or
// a dictionary, an ICC profile is rebuilt.

// pdfSpecial copies the objects of the kinds that pdfKeys cannot say.
var pdfSpecial map[pdfKind]func(r *pdfRebuild, v types.Object, depth int) (pdfObj, error)

func init() {
	pdfSpecial = map[pdfKind]func(*pdfRebuild, types.Object, int) (pdfObj, error){
		pdfColorSpace: (*pdfRebuild).colorSpace,
		pdfGSFont:     (*pdfRebuild).gsFont,
		pdfVisibility: (*pdfRebuild).visibility,
		pdfMask:       nameOr(pdfNone, pdfNumber, pdfImage),
		pdfSoftMask:   nameOr(pdfSoftMask, pdfNone, pdfNone),
		pdfTransfer:   nameOr(pdfFunction, pdfFunction, pdfFunction),
		pdfEncoding:   nameOr(pdfEncoding, pdfNone, pdfCMap), // a Type 0 font's is a CMap
		pdfCMap:       nameOr(pdfNone, pdfNone, pdfCMap),
		pdfLookup:     (*pdfRebuild).lookup,
	}
}

// nameOr returns the copier of a kind whose value is a name (kept), or a
// dictionary, array or stream copied as the kind given for each (pdfNone:
// dropped).
func nameOr(dict, array, stream pdfKind) func(*pdfRebuild, types.Object, int) (pdfObj, error) {
	return func(r *pdfRebuild, v types.Object, depth int) (pdfObj, error) {
		var k pdfKind
		switch v.(type) {
		case types.Name:
			return pdfObj{value: v}, nil
		case types.Dict:
			k = dict
		case types.Array:
			k = array
		case types.StreamDict:
			k = stream
		}
		if k == pdfNone {
			return pdfObj{}, nil
		}
		if number, name, text := pdfScalar(k); number || name || text {
			s, err := r.scalar(v, number, name, text, depth)
			return pdfObj{value: s}, err
		}
		if a, ok := v.(types.Array); ok {
			return r.copyValue(a, k, depth)
		}
		// The generic copy of the same value as a kind that has no
		// special copier.
		switch v := v.(type) {
		case types.Dict:
			d, err := r.dict(v, k, depth)
			return pdfObj{value: d}, err
		case types.StreamDict:
			return r.stream(v, k, depth)
		}
		return pdfObj{}, nil
	}
}

// lookup copies an Indexed colour space's lookup table: a string, or a
// stream of the same bytes.
func (r *pdfRebuild) lookup(v types.Object, depth int) (pdfObj, error) {
	switch v := v.(type) {
	case types.StringLiteral, types.HexLiteral:
		return pdfObj{value: v}, nil
	case types.StreamDict:
		return r.stream(v, pdfPlainStream, depth)
	}
	return pdfObj{}, nil
}

// gsFont copies an ExtGState's Font entry: [font size].
func (r *pdfRebuild) gsFont(v types.Object, depth int) (pdfObj, error) {
	a, ok := v.(types.Array)
	if !ok || len(a) != 2 {
		return pdfObj{}, nil
	}
	font, err := r.copy(a[0], pdfFont, depth+1)
	if err != nil || font == nil {
		return pdfObj{}, err
	}
	size, err := r.copy(a[1], pdfNumber, depth+1)
	return pdfObj{value: types.Array{font, size}}, err
}

// visibility copies a visibility expression: an operator's name followed
// by groups and expressions.
func (r *pdfRebuild) visibility(v types.Object, depth int) (pdfObj, error) {
	a, ok := v.(types.Array)
	if !ok || len(a) == 0 {
		return pdfObj{}, nil
	}
	op, ok := a[0].(types.Name)
	if !ok || op != "And" && op != "Or" && op != "Not" {
		return pdfObj{}, nil
	}
	out := types.Array{op}
	for _, e := range a[1:] {
		ev, _, err := r.resolve(e)
		if err != nil {
			return pdfObj{}, err
		}
		k := pdfOCG
		if _, ok := ev.(types.Array); ok {
			k = pdfVisibility
		}
		c, err := r.copy(e, k, depth+1)
		if err != nil {
			return pdfObj{}, err
		}
		out = append(out, c)
	}
	return pdfObj{value: out}, nil
}

// colorSpace copies a colour space: a name, or an array whose first
// element, the family, says what each other element is. A family that is
// not one of PDF's is dropped.
func (r *pdfRebuild) colorSpace(v types.Object, depth int) (pdfObj, error) {
	if n, ok := v.(types.Name); ok {
		return pdfObj{value: n}, nil
	}
	a, ok := v.(types.Array)
	if !ok || len(a) == 0 {
		return pdfObj{}, nil
	}
	fam, _, err := r.resolve(a[0])
	if err != nil {
		return pdfObj{}, err
	}
	family, _ := fam.(types.Name)
	parts, ok := pdfColorSpaceParts[string(family)]
	if !ok || len(a) < len(parts)+1 || len(a) > len(parts)+2 {
		return pdfObj{}, nil
	}
	if family == "ICCBased" {
		return r.iccBased(a[1], depth)
	}
	out := types.Array{family}
	for i, k := range parts {
		c, err := r.copy(a[i+1], k, depth+1)
		if err != nil {
			return pdfObj{}, err
		}
		if c == nil {
			return pdfObj{}, nil // a colour space missing a part reads as none
		}
		out = append(out, c)
	}
	if family == "DeviceN" && len(a) == len(parts)+2 {
		attrs, err := r.copy(a[len(parts)+1], pdfDeviceNAttrs, depth+1)
		if err != nil {
			return pdfObj{}, err
		}
		if attrs != nil {
			out = append(out, attrs)
		}
	}
	return pdfObj{value: out}, nil
}

// pdfColorSpaceParts lists, for each family of colour space written as an
// array, the kinds of the elements after the family's name (DeviceN may
// add its attributes).
var pdfColorSpaceParts = map[string][]pdfKind{
	"DeviceGray": {}, "DeviceRGB": {}, "DeviceCMYK": {},
	"CalGray": {pdfCal}, "CalRGB": {pdfCal}, "Lab": {pdfCal},
	"ICCBased":   {pdfNone},
	"Indexed":    {pdfColorSpace, pdfNumber, pdfLookup},
	"I":          {pdfColorSpace, pdfNumber, pdfLookup},
	"Pattern":    {pdfColorSpace},
	"Separation": {pdfName, pdfColorSpace, pdfFunction},
	"DeviceN":    {pdfName, pdfColorSpace, pdfFunction},
}

// maxICCBytes bounds what one ICC profile of a PDF may decode to, and
// maxICCTotal what all of them may decode to together.
const (
	maxICCBytes = 8 << 20
	maxICCTotal = 64 << 20
)

// iccBased copies an ICCBased colour space: its profile rebuilt from its
// colour tags (cleanICC), compressed anew. A profile that does not decode
// or parse gives its alternate colour space, or the device space of its
// number of components, as a reader would use.
func (r *pdfRebuild) iccBased(o types.Object, depth int) (pdfObj, error) {
	v, nr, err := r.resolve(o)
	sd, ok := v.(types.StreamDict)
	if err != nil || !ok || nr == 0 {
		return pdfObj{}, err
	}
	key := pdfMemoKey{nr, pdfICC}
	if n, ok := r.memo[key]; ok {
		return pdfObj{value: types.Array{types.Name("ICCBased"), pdfRef(n)}}, nil
	}
	if err := sd.DecodeWithLimit(maxICCBytes); err != nil {
		return r.iccFallback(sd, depth)
	}
	if r.iccBytes += int64(len(sd.Content)); r.iccBytes > maxICCTotal {
		return pdfObj{}, refuse("a PDF document whose colour profiles decode to more than %d MiB", maxICCTotal>>20)
	}
	profile := cleanICC(sd.Content)
	if profile == nil {
		return r.iccFallback(sd, depth)
	}
	var z bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&z, zlib.BestCompression)
	zw.Write(profile)
	zw.Close()
	d := types.Dict{"Filter": types.Name("FlateDecode")}
	for _, e := range []struct {
		key  string
		kind pdfKind
	}{{"N", pdfNumber}, {"Range", pdfNumber}, {"Alternate", pdfColorSpace}} {
		if err := r.set(d, e.key, sd.Dict[e.key], e.kind, depth); err != nil {
			return pdfObj{}, err
		}
	}
	n := r.add(pdfObj{value: d, stream: true, raw: z.Bytes()})
	r.memo[key] = n
	return pdfObj{value: types.Array{types.Name("ICCBased"), pdfRef(n)}}, nil
}

// iccFallback returns the colour space a reader uses for the ICC profile
// sd that cannot be read.
func (r *pdfRebuild) iccFallback(sd types.StreamDict, depth int) (pdfObj, error) {
	if alt, ok := sd.Dict["Alternate"]; ok {
		c, err := r.copy(alt, pdfColorSpace, depth+1)
		if c != nil || err != nil {
			return pdfObj{value: c}, err
		}
	}
	n, _, _ := r.resolve(sd.Dict["N"])
	device := map[types.Integer]string{1: "DeviceGray", 3: "DeviceRGB", 4: "DeviceCMYK"}[asInteger(n)]
	if device == "" {
		return pdfObj{}, nil
	}
	return pdfObj{value: types.Name(device)}, nil
}

func asInteger(o types.Object) types.Integer {
	i, _ := o.(types.Integer)
	return i
}

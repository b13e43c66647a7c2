package media

// What a public PDF keeps, by allow-list (see docs/output.md#pdf-documents):
// a rebuilt document is made of its pages and of what their content
// streams use to draw, each object copied with only the entries that
// drawing reads. Every other entry, of any object, is not copied, whatever
// its name: a key this file does not list never reaches a public byte.

// pdfKind is what an object is to the pages that draw it, and so which of
// its entries are kept and what each of them is in turn.
type pdfKind int

const (
	pdfNone pdfKind = iota

	// Scalars, copied as they are (arrays of them too, nested).
	pdfNumber  // numbers and booleans
	pdfName    // names
	pdfText    // strings: only where drawing reads one (CIDSystemInfo)
	pdfNumName // numbers and names mixed (an encoding's Differences)

	// Dictionaries and streams, each copied by its allow-list.
	pdfResources     // a page's, form's, pattern's or Type 3 font's resources
	pdfContent       // a content stream: what a page or glyph draws
	pdfFont          // a font of any subtype
	pdfFontDesc      // a font descriptor
	pdfFontFile      // an embedded font program
	pdfCIDSystemInfo // a CID font's character collection
	pdfEncoding      // a font's encoding: a name, a dictionary, or (Type 0) a CMap stream
	pdfCMap          // a CMap: a name or a stream (ToUnicode, a Type 0 encoding)
	pdfXObject       // an image or a form, by its Subtype
	pdfImage         // an image XObject
	pdfForm          // a form XObject
	pdfExtGState     // a graphics state parameter dictionary
	pdfSoftMask      // an ExtGState's soft mask: /None or a dictionary
	pdfTransfer      // a transfer function: a name or a function
	pdfPattern       // a tiling or shading pattern, by its PatternType
	pdfShading       // a shading dictionary or stream
	pdfFunction      // a function dictionary or stream
	pdfGroup         // a transparency group's attributes
	pdfCal           // a CIE-based colour space's parameters
	pdfColorSpace    // a colour space: a name or an array, by its family
	pdfDeviceNAttrs  // a DeviceN colour space's attributes
	pdfDecodeParms   // a filter's parameters
	pdfPlainStream   // a stream of data only (an Indexed lookup, a CIDSet)
	pdfGSFont        // an ExtGState's Font: [font size]
	pdfOC            // optional content: a group or a membership dictionary
	pdfOCG           // an optional content group (its name is replaced)
	pdfOCMD          // an optional content membership dictionary
	pdfVisibility    // an OCMD's visibility expression
	pdfMask          // an image's Mask: an image or an array of numbers
	pdfLookup        // an Indexed colour space's lookup: a string or a stream
	pdfICC           // an ICC profile stream (rebuilt, not copied)
)

// pdfStreamKeys are kept in every stream copied: how its bytes are
// encoded. Length is written anew.
var pdfStreamKeys = map[string]pdfKind{"Filter": pdfName, "DecodeParms": pdfDecodeParms}

// pdfKeys lists, for each kind of dictionary or stream, the entries kept
// and the kind of each.
var pdfKeys = map[pdfKind]map[string]pdfKind{
	pdfResources: {
		"ExtGState": pdfExtGState, "ColorSpace": pdfColorSpace, "Pattern": pdfPattern, "Shading": pdfShading,
		"XObject": pdfXObject, "Font": pdfFont, "ProcSet": pdfName, "Properties": pdfOC,
	},
	pdfContent: {},
	pdfFont: {
		"Type": pdfName, "Subtype": pdfName, "BaseFont": pdfName, "FirstChar": pdfNumber, "LastChar": pdfNumber,
		"Widths": pdfNumber, "FontDescriptor": pdfFontDesc, "Encoding": pdfEncoding, "ToUnicode": pdfCMap,
		// Type 0 and CID fonts
		"DescendantFonts": pdfFont, "CIDSystemInfo": pdfCIDSystemInfo, "DW": pdfNumber, "W": pdfNumber,
		"DW2": pdfNumber, "W2": pdfNumber, "CIDToGIDMap": pdfCMap,
		// Type 3 fonts
		"FontBBox": pdfNumber, "FontMatrix": pdfNumber, "CharProcs": pdfContent, "Resources": pdfResources,
	},
	pdfFontDesc: {
		"Type": pdfName, "FontName": pdfName, "Flags": pdfNumber, "FontBBox": pdfNumber, "ItalicAngle": pdfNumber,
		"Ascent": pdfNumber, "Descent": pdfNumber, "Leading": pdfNumber, "CapHeight": pdfNumber, "XHeight": pdfNumber,
		"StemV": pdfNumber, "StemH": pdfNumber, "AvgWidth": pdfNumber, "MaxWidth": pdfNumber, "MissingWidth": pdfNumber,
		"FontStretch": pdfName, "FontWeight": pdfNumber,
		"FontFile": pdfFontFile, "FontFile2": pdfFontFile, "FontFile3": pdfFontFile, "CIDSet": pdfPlainStream,
	},
	pdfFontFile:      {"Length1": pdfNumber, "Length2": pdfNumber, "Length3": pdfNumber, "Subtype": pdfName},
	pdfCIDSystemInfo: {"Registry": pdfText, "Ordering": pdfText, "Supplement": pdfNumber},
	pdfEncoding:      {"Type": pdfName, "BaseEncoding": pdfName, "Differences": pdfNumName},
	pdfCMap:          {"Type": pdfName, "CMapName": pdfName, "CIDSystemInfo": pdfCIDSystemInfo, "WMode": pdfNumber, "UseCMap": pdfCMap},
	pdfImage: {
		"Type": pdfName, "Subtype": pdfName, "Width": pdfNumber, "Height": pdfNumber, "ColorSpace": pdfColorSpace,
		"BitsPerComponent": pdfNumber, "Intent": pdfName, "ImageMask": pdfNumber, "Mask": pdfMask, "Decode": pdfNumber,
		"Interpolate": pdfNumber, "SMask": pdfImage, "SMaskInData": pdfNumber, "Matte": pdfNumber, "OC": pdfOC,
	},
	pdfForm: {
		"Type": pdfName, "Subtype": pdfName, "FormType": pdfNumber, "BBox": pdfNumber, "Matrix": pdfNumber,
		"Resources": pdfResources, "Group": pdfGroup, "OC": pdfOC,
	},
	pdfExtGState: {
		"Type": pdfName, "LW": pdfNumber, "LC": pdfNumber, "LJ": pdfNumber, "ML": pdfNumber, "D": pdfNumber,
		"RI": pdfName, "OP": pdfNumber, "op": pdfNumber, "OPM": pdfNumber, "Font": pdfGSFont, "BG": pdfTransfer,
		"BG2": pdfTransfer, "UCR": pdfTransfer, "UCR2": pdfTransfer, "TR": pdfTransfer, "TR2": pdfTransfer,
		"FL": pdfNumber, "SM": pdfNumber, "SA": pdfNumber, "BM": pdfName, "SMask": pdfSoftMask, "CA": pdfNumber,
		"ca": pdfNumber, "AIS": pdfNumber, "TK": pdfNumber, "UseBlackPtComp": pdfName,
	},
	pdfSoftMask: {"Type": pdfName, "S": pdfName, "G": pdfForm, "BC": pdfNumber, "TR": pdfTransfer},
	pdfPattern: {
		"Type": pdfName, "PatternType": pdfNumber, "PaintType": pdfNumber, "TilingType": pdfNumber,
		"BBox": pdfNumber, "XStep": pdfNumber, "YStep": pdfNumber, "Resources": pdfResources, "Matrix": pdfNumber,
		"Shading": pdfShading, "ExtGState": pdfExtGState,
	},
	pdfShading: {
		"ShadingType": pdfNumber, "ColorSpace": pdfColorSpace, "Background": pdfNumber, "BBox": pdfNumber,
		"AntiAlias": pdfNumber, "Coords": pdfNumber, "Domain": pdfNumber, "Function": pdfFunction,
		"Extend": pdfNumber, "Matrix": pdfNumber, "BitsPerCoordinate": pdfNumber, "BitsPerComponent": pdfNumber,
		"BitsPerFlag": pdfNumber, "Decode": pdfNumber, "VerticesPerRow": pdfNumber,
	},
	pdfFunction: {
		"FunctionType": pdfNumber, "Domain": pdfNumber, "Range": pdfNumber, "Size": pdfNumber,
		"BitsPerSample": pdfNumber, "Order": pdfNumber, "Encode": pdfNumber, "Decode": pdfNumber,
		"C0": pdfNumber, "C1": pdfNumber, "N": pdfNumber, "Functions": pdfFunction, "Bounds": pdfNumber,
	},
	pdfGroup:        {"Type": pdfName, "S": pdfName, "CS": pdfColorSpace, "I": pdfNumber, "K": pdfNumber},
	pdfCal:          {"WhitePoint": pdfNumber, "BlackPoint": pdfNumber, "Gamma": pdfNumber, "Matrix": pdfNumber, "Range": pdfNumber},
	pdfDeviceNAttrs: {"Subtype": pdfName, "Colorants": pdfColorSpace},
	pdfDecodeParms: {
		"Predictor": pdfNumber, "Colors": pdfNumber, "BitsPerComponent": pdfNumber, "Columns": pdfNumber,
		"EarlyChange": pdfNumber, "K": pdfNumber, "EndOfLine": pdfNumber, "EncodedByteAlign": pdfNumber,
		"Rows": pdfNumber, "EndOfBlock": pdfNumber, "BlackIs1": pdfNumber, "DamagedRowsBeforeError": pdfNumber,
		"JBIG2Globals": pdfPlainStream, "ColorTransform": pdfNumber,
	},
	pdfPlainStream: {},
	pdfOCG:         {"Type": pdfName, "Intent": pdfName},
	pdfOCMD:        {"Type": pdfName, "OCGs": pdfOCG, "P": pdfName, "VE": pdfVisibility},
}

// pdfNameDict reports whether the entry key of a dictionary of kind
// parent maps names chosen by the producer (/F1, /Im0: the names content
// streams use) to objects of the entry's kind, rather than being one.
func pdfNameDict(parent pdfKind, key string) bool {
	switch parent {
	case pdfResources:
		return key != "ProcSet"
	case pdfFont:
		return key == "CharProcs"
	case pdfDeviceNAttrs:
		return key == "Colorants"
	}
	return false
}

// pdfPageKeys are the entries of a page kept, besides its Contents and
// Resources: what places and turns what it draws.
var pdfPageKeys = map[string]pdfKind{
	"MediaBox": pdfNumber, "CropBox": pdfNumber, "Rotate": pdfNumber, "UserUnit": pdfNumber, "Group": pdfGroup,
}

// pdfInherited are the page entries a page tree node passes on to the
// pages below it.
var pdfInherited = []string{"Resources", "MediaBox", "CropBox", "Rotate"}

// pdfScalar reports which scalar kinds accept the object o (not an array
// or a reference): numbers and booleans, names, strings.
func pdfScalar(k pdfKind) (number, name, text bool) {
	switch k {
	case pdfNumber:
		return true, false, false
	case pdfName:
		return false, true, false
	case pdfText:
		return false, false, true
	case pdfNumName:
		return true, true, false
	}
	return false, false, false
}

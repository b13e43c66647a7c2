package render

import (
	"fmt"

	"github.com/guidepub/guidepub/site"
	"github.com/guidepub/guidepub/site/viewpage"
)

// SharedFiles returns the files of the whole tree that pages link and
// that belong to no guide: the stylesheet (docs/pages.md#the-stylesheet),
// a document with compressed siblings at a path named by a hash of its
// bytes. It returns an error when the hide table has no shared row for
// one of them.
func SharedFiles() ([]File, error) {
	f := File{Path: viewpage.StylesheetPath, Data: viewpage.Stylesheet(), Doc: true}
	if row, _, ok := site.PublicFileOf(f.Path); !ok || row.Group != site.GroupShared {
		return nil, fmt.Errorf("public file %s has no row of the shared files in the hide table (site.PublicFiles)", f.Path)
	}
	return []File{f}, nil
}

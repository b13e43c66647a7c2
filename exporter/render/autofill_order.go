package render

import (
	"slices"

	"github.com/guidepub/guidepub/site"
)

// mainRoomsFirst orders the autofill room list: the main building's rooms
// first, then the other buildings' rooms, each in bundle order.
func mainRoomsFirst(rooms []site.PropertyRoom, structures []site.PropertyStructure) {
	main := ""
	for _, s := range structures {
		if s.MainStructureYN {
			main = s.StructureKey
		}
	}
	slices.SortStableFunc(rooms, func(a, b site.PropertyRoom) int {
		am, bm := a.StructureKey == main, b.StructureKey == main
		switch {
		case am && !bm:
			return -1
		case bm && !am:
			return 1
		}
		return 0
	})
}

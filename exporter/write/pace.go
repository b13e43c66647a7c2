package write

import (
	"context"
	"time"
)

// Pace says how the compressed siblings of a guide's export are made and
// whether the export gives way to others (docs/output.md, "Quick
// siblings").
type Pace int

const (
	// Final compresses every sibling with its final settings: a whole
	// export, a catch-up.
	Final Pace = iota
	// Quick compresses the siblings of the public documents that changed
	// with quick settings (an upload's export, served sooner) and lists
	// them in Written.Quick; the final compressions of unchanged
	// documents whose siblings an earlier export left quick run one at a
	// time, leaving the other CPU slots to the upload.
	Quick
	// Finishing is the export that follows a Quick one of the same
	// bundle, to replace its quick siblings by final ones. It is Quick
	// for what changed, and gives way: before each group of files, each
	// compression and each file it writes, it waits for Config.GiveWay
	// (the exporter's: while another upload is exported), so that the
	// next upload's export has the CPU and the disk to itself; for
	// MaxGiveWay in all at the most.
	Finishing
)

// MaxGiveWay is the longest a Finishing export waits in all before it
// goes on without giving way: uploads that never stop must not keep it
// waiting, nor an upload of its own folder, which waits for it. A
// variable for tests.
var MaxGiveWay = 2 * time.Second

// giveWay waits, in a Finishing export, for Config.GiveWay (see Pace),
// until w.until at the latest; it returns ctx's error when ctx ends
// first.
func (w *guideWriter) giveWay(ctx context.Context) error {
	if w.pace != Finishing || w.e.giveWay == nil {
		return nil
	}
	left := time.Until(w.until)
	if left <= 0 {
		return ctx.Err()
	}
	wctx, cancel := context.WithTimeout(ctx, left)
	defer cancel()
	if err := w.e.giveWay(wctx); err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return nil
}

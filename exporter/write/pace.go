package write

import "errors"

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
	// final compression and each file it writes, it asks Config.GiveWay,
	// and stops there with ErrGaveWay when told to (the exporter's rule:
	// while another upload is exported), so that the upload has the CPU,
	// the disk and the worker to itself. What it wrote before is whole
	// and listed in the result; the guide's record is not written.
	Finishing
)

// ErrGaveWay is the error of a Finishing export that stopped to give way
// (see Pace): not a failure, the export is to be done again later.
var ErrGaveWay = errors.New("gave way to an upload")

// giveWay returns ErrGaveWay in a Finishing export that Config.GiveWay
// tells to stop, else nil.
func (w *guideWriter) giveWay() error {
	if w.pace == Finishing && w.e.giveWay != nil && w.e.giveWay() {
		return ErrGaveWay
	}
	return nil
}

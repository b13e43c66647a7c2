// Package write is the export's fourth stage: it carries out a plan
// (render.Plan) against the public and private trees (Tree). It takes the
// plan, the loaded bundle its media come from and the guide's ledger as
// last recorded (package ledger), and gives what it wrote (Written): the
// paths the guide occupies, its revision, the counts and the public files
// changed, with the digests and media sources of the files written for
// the guide's record.
//
// Every file is created atomically and durably (an unnamed or temporary
// file flushed, then linked or renamed into place; the folders flushed
// once per guide before its record names them: durable.go). A file that
// already holds its bytes is left alone. Documents get their compressed
// siblings (Compressor); media are streamed, public images and PDFs
// stripped of private metadata, renditions made once per source through
// a memory budget that every decode shares, with a record of each decode
// in progress so that a file that killed the process is refused
// (decodes.go). A media file is made once per source and transformation
// in an export, and not again while its source and its published file
// keep the stamps the guide's ledger recorded (mediaonce.go). A marker in
// the private tree says writes are in progress (Begin, End); an exporter that finds it at start removes the temporary
// files an interrupted export left and checks every media file until a
// full export is done (repair.go, Verifying); what the interrupted export
// replaced shows new stamps, so its guides are not intact and are
// exported again.
package write

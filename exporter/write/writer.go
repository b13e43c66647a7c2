package write

import (
	"context"
	"errors"
	"slices"

	"github.com/moby/locker"

	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/exporter/ledger"
	"github.com/guidepub/guidepub/exporter/render"
	"github.com/guidepub/guidepub/site"
)

// Config is what a Writer writes into and how.
type Config struct {
	Public, Private Tree // the public and private trees
	// Encodings are the compressed siblings written beside each document.
	Encodings []site.Encoding
	// Jobs is how many documents are compressed, or images decoded, at
	// once (at least 1).
	Jobs int
	// Limits bound the memory of image decodes and PDF rewrites
	// (Limits.Media) and the pixels of a decoded image.
	Limits bundle.Limits
	// Marker is the private-tree name of the marker of writes in
	// progress (a hidden name: see Writer.Begin).
	Marker string
	// GiveWay tells a Finishing export to stop where it is (see Pace)
	// when it returns true. Nil: never.
	GiveWay func() bool
}

// Writer carries out plans against the public and private trees. Its
// methods are safe for concurrent use; two plans of the same guide must
// not be written at once.
type Writer struct {
	pub, priv Tree
	encodings []site.Encoding
	limits    bundle.Limits
	marker    string
	comp      *Compressor
	cpu       chan struct{} // Jobs slots for compression and decodes
	finishing chan struct{} // one slot: the final compressions that follow quick ones
	giveWay   func() bool   // Config.GiveWay
	budget    decodeBudget  // the memory image decodes and PDF rewrites share (decodes.go)
	decoding  locker.Locker // by decode key: one decode of a content at a time

	interrupted interruptState // see repair.go
	shared      sharedFiles    // see shared.go
}

// New returns a Writer for cfg. It looks for the marker of an
// interrupted export (see Verifying).
func New(cfg Config) *Writer {
	w := &Writer{pub: cfg.Public, priv: cfg.Private, encodings: cfg.Encodings, limits: cfg.Limits, marker: cfg.Marker,
		comp: NewCompressor(), cpu: make(chan struct{}, cfg.Jobs), finishing: make(chan struct{}, 1), giveWay: cfg.GiveWay, budget: newDecodeBudget(cfg.Limits)}
	w.interrupted.verify = w.markerExists()
	return w
}

// Counts are what writing or removing files did: files written,
// already up to date and deleted, bytes written, and the public files
// changed in the order they were.
type Counts struct {
	Written, Unchanged, Deleted int
	Bytes                       int64
	// Changes are the public files written or removed, in the order it
	// was done: what a live publisher sends to the bucket.
	Changes []FileChange
}

// FileChange is one public file written or removed.
type FileChange struct {
	Path    string // relative to the public tree, slash-separated
	SHA256  string // hex SHA-256 of the bytes written; empty when Removed
	Removed bool
}

// Written is what writing the plan of one guide did.
type Written struct {
	Counts
	Revision string // hash of every path published with its content's hash
	Changed  bool   // some file was written or deleted
	// Public and Private are the paths the guide occupies now in each
	// tree (compressed siblings and the record included), sorted.
	Public, Private []string
	// Digests and PrivateDigests are those of the public and private
	// files written, by path, taken as they were written (a private
	// file's without its MD5); the zero Digest when unknown.
	Digests, PrivateDigests map[string]Digest
	// Quick are the public compressed siblings written with quick
	// settings, sorted (see Guide).
	Quick []string
	// PublicSources and PrivateSources are what each media file of each
	// tree is made from, by path (for the guide's ledger).
	PublicSources, PrivateSources map[string]ledger.Source
}

// Guide writes the plan p of bundle b, whose media files it reads: the
// shared files this Writer has not put in place yet (putShared), every
// file that differs from what is there, then the guide's record at the
// revision they make, then deletes the files old (the guide's previous
// publication, or nil) published that p no longer does, and flushes the
// folders that changed. prior is the guide's ledger as its last export
// recorded it (empty for a new guide): a media file it shows made from
// its source as it is now is left alone without reading either
// (mediaonce.go). On an error some files may have been replaced
// by their new versions, never by a partial one, and the others keep
// their old ones, except when p's Visibility differs from old's: then
// the public files old published that this export did not reach are
// deleted (withdraw), and listed as removed. A media file that keeps
// changing while it is read, or does not decode, is a *bundle.Error.
// The caller holds Begin and End around it.
//
// With a pace other than Final, the compressed siblings of the public
// documents that changed are written with quick settings
// (site.Encoding.EncodeQuick) and listed in Written.Quick: the guide is
// served sooner, its siblings a few percent larger. The siblings old
// lists as quick are compressed again with the final settings, whatever
// the pace, so the export that follows a quick one (with the same
// documents) leaves the tree as an export at the Final pace would have.
// A Finishing export gives way to Quick ones (see Pace).
func (w *Writer) Guide(ctx context.Context, b *bundle.Bundle, p *render.Plan, old *site.ManifestGuide, prior ledger.Guide, pace Pace) (Written, error) {
	var out Written
	gw := &guideWriter{e: w, res: &out.Counts, pace: pace, prior: prior}
	err := gw.guide(ctx, b, p, old, &out)
	// An export that does not finish while it changes what the guide's
	// views show (they may show less; a record written before Visibility
	// existed counts as a change) takes back what it did not reach. A
	// finishing export that gave way changes no content.
	if err != nil && old != nil && old.Visibility != p.Visibility && !errors.Is(err, ErrGaveWay) {
		err = errors.Join(err, gw.withdraw(old))
	}
	return out, err
}

// guide is Guide but for what an export that does not finish takes back.
func (gw *guideWriter) guide(ctx context.Context, b *bundle.Bundle, p *render.Plan, old *site.ManifestGuide, out *Written) error {
	if err := gw.putShared(p.Shared); err != nil { // before the pages that link them
		return err
	}
	if err := gw.putAll(ctx, b, p.Files, old); err != nil {
		return err
	}
	out.Revision = gw.revision()
	if err := gw.putRecord(&b.Guide, out.Revision, p.Ready); err != nil {
		return err
	}
	slices.Sort(gw.public)
	slices.Sort(gw.private)
	if err := gw.deleteStale(old); err != nil {
		return err
	}
	slices.Sort(gw.quick)
	out.Public, out.Private, out.Digests, out.Quick = gw.public, gw.private, gw.digests, slices.Compact(gw.quick)
	out.PrivateDigests, out.PublicSources, out.PrivateSources = gw.privDigests, gw.pubSources, gw.privSources
	out.Changed = out.Written > 0 || out.Deleted > 0
	if out.Changed {
		// Once per guide, before the record names its new files: see
		// durable.go.
		if err := gw.e.pub.syncFolders(gw.public); err != nil {
			return err
		}
		if err := gw.e.priv.syncFolders(gw.private); err != nil {
			return err
		}
	}
	return nil
}

// Remove deletes the files a guide published (mg), except the public
// ones keep reports (nil: none), and the folders they leave empty,
// counting them in c. A missing file is not an error; one that cannot be
// deleted is.
func (w *Writer) Remove(c *Counts, mg site.ManifestGuide, keep func(p string) bool) error {
	for _, p := range mg.Files {
		if keep != nil && keep(p) {
			continue
		}
		if err := removeFile(c, w.pub, p, nil, true); err != nil {
			return err
		}
	}
	for _, p := range mg.Private {
		if err := removeFile(c, w.priv, p, privateKeep, false); err != nil {
			return err
		}
	}
	return nil
}

// Intact reports whether every file mg published is still as its ledger
// l recorded it (ledger.Entry.Holds): one rewritten, touched, replaced or
// deleted since, or one whose digest the ledger does not know, makes the
// guide not intact, and exported again. A file l does not list at all (a
// private file of a record written before the ledger kept them) must
// exist.
func (w *Writer) Intact(mg *site.ManifestGuide, l ledger.Guide) bool {
	return intact(w.pub, mg.Files, l.Public) && intact(w.priv, mg.Private, l.Private)
}

// Sealed is Intact for an entry with a seal (site.ManifestGuide.Seal):
// every file is a regular file and their stamps now give the seal, so
// the ledger itself is not read.
func (w *Writer) Sealed(mg *site.ManifestGuide) bool {
	if mg.Seal == "" {
		return false
	}
	var s ledger.Sealer
	for i, t := range []Tree{w.pub, w.priv} {
		paths := mg.Files
		if i == 1 {
			paths = mg.Private
		}
		for _, p := range paths {
			fi, err := t.FS.Stat(t.Abs(p))
			if err != nil || !fi.Mode().IsRegular() {
				return false
			}
			s.Add(i == 1, p, ledger.StampOf(fi))
		}
	}
	return s.Sum() == mg.Seal
}

// intact reports whether every path of paths in t is as l recorded it.
func intact(t Tree, paths []string, l ledger.Ledger) bool {
	for _, p := range paths {
		e, listed := l.Find(p)
		if !listed {
			if !t.Exists(p) {
				return false
			}
			continue
		}
		fi, err := t.FS.Stat(t.Abs(p))
		if err != nil || !e.Holds(fi) {
			return false
		}
	}
	return true
}

// Private returns the private tree.
func (w *Writer) Private() Tree { return w.priv }

// Public returns the public tree.
func (w *Writer) Public() Tree { return w.pub }

// DecodePeak returns the most bytes of the decode budget held at once.
func (w *Writer) DecodePeak() int64 { return w.budget.peak.Load() }

// privateKeep are the private folders that stay when they become empty.
var privateKeep = map[string]bool{site.GuidesDir: true}

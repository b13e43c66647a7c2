// Package ledger is the exporter's one answer to "is this file still what
// we wrote": for every file a guide's export leaves in the public and
// private trees, the digests of its content, the stamp its file had once
// written (size, modification and change times) and, for a media file,
// what it was made from (its bundle file, the transformation and that
// file's stamp then). A file whose stat still shows the stamp recorded
// holds the content recorded (Entry.Holds); a media file whose source
// also still shows its stamp is still the product of that source.
//
// The records persist each guide's ledger (package records), so that a
// new process knows what it wrote without reading a file; the writer
// reads it to leave media files alone without reading their sources
// (package write), the exporter to know a guide's files intact, publish
// to know a file's digests without reading it. See
// docs/robustness.md#is-a-file-still-what-was-written for what the
// stamps can and cannot tell.
package ledger

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"io/fs"
	"slices"
	"strconv"
	"strings"

	"github.com/guidepub/guidepub/site/filestamp"
)

// Stamp is what a stat shows of one version of a file: its size, and its
// modification and change times in nanoseconds since the Unix epoch. The
// change time is zero where the file system does not report it (and in
// records written before it was kept).
//
// Writing a file, renaming one into place, linking it or copying it with
// its times kept (cp -p, rsync -t) all set the change time to now, which
// no program can set back: a file replaced by another with the same size
// and modification time still shows another stamp.
type Stamp struct {
	Size       int64 `json:"size"`
	ModTime    int64 `json:"mtime"`
	ChangeTime int64 `json:"ctime,omitempty"`
}

// StampOf returns the stamp fi shows.
func StampOf(fi fs.FileInfo) Stamp {
	s := Stamp{Size: fi.Size(), ModTime: fi.ModTime().UnixNano()}
	if ct := filestamp.ChangeTime(fi); !ct.IsZero() {
		s.ChangeTime = ct.UnixNano()
	}
	return s
}

// Shows reports whether now, a file's stamp now, is s: the same size and
// times. A change time s does not know (zero) is not compared.
func (s Stamp) Shows(now Stamp) bool {
	return s.Size == now.Size && s.ModTime == now.ModTime && (s.ChangeTime == 0 || s.ChangeTime == now.ChangeTime)
}

// Source is what a media file was made from: its bundle file (relative
// to the bundle folder, slash-separated), the transformation (Made) and
// the stamp the bundle file had when its bytes were read.
type Source struct {
	Path  string `json:"path"`
	Made  string `json:"made"`
	Stamp Stamp  `json:"stamp"`
}

// Made names a transformation: the media format a file is published as,
// the width of a rendition (0 for a copy) and the media rules, which
// rules names (media.Version: a release that changes what a media file's
// bytes would be changes it, so that no file made by the old rules is
// taken for a product of the new ones).
func Made(format string, width int, rules string) string {
	h := sha256.Sum256([]byte(rules))
	return format + " " + strconv.Itoa(width) + " " + hex.EncodeToString(h[:6])
}

// Entry is one file as the exporter wrote it, or last found it holding
// what it should: its path in its tree, the hex SHA-256 and MD5 of its
// content ("" when not known: a record older than the digests), its
// stamp then, and what it was made from for a media file (nil for the
// others). Its JSON form is what a record keeps of each file; the path
// is kept apart, in the record's lists of files.
type Entry struct {
	Path   string `json:"-"`
	SHA256 string `json:"sha256,omitempty"`
	// MD5 is what an S3 listing's ETag holds, so that publish compares it
	// without reading the file; public files only.
	MD5 string `json:"md5,omitempty"`
	Stamp
	Source *Source `json:"src,omitempty"`
}

// Holds reports whether fi, a stat of e's file now, shows it as it was
// recorded, with a known content: a regular file of the stamp recorded.
// It holds that content unless something other than the exporter rewrote
// it at the same size within the same nanosecond (and, where change times
// are kept, the same change time, which nothing can set).
func (e Entry) Holds(fi fs.FileInfo) bool {
	return e.SHA256 != "" && fi.Mode().IsRegular() && e.Stamp.Shows(StampOf(fi))
}

// Sum returns e's SHA-256, false when it is not known.
func (e Entry) Sum() ([sha256.Size]byte, bool) {
	var sum [sha256.Size]byte
	b, err := hex.DecodeString(e.SHA256)
	if err != nil || len(b) != sha256.Size {
		return sum, false
	}
	copy(sum[:], b)
	return sum, true
}

// MadeFrom reports whether e is the product of src, as it is now: the same
// bundle file, transformation and source stamp.
func (e Entry) MadeFrom(src Source) bool {
	return e.Source != nil && *e.Source == src
}

// Ledger is the entries of one tree's files of a guide, sorted by path
// (byte order).
type Ledger []Entry

// Find returns the entry of path p.
func (l Ledger) Find(p string) (Entry, bool) {
	i, found := slices.BinarySearchFunc(l, p, func(e Entry, p string) int { return strings.Compare(e.Path, p) })
	if !found {
		return Entry{}, false
	}
	return l[i], true
}

// Guide is the ledger of one guide: its files in the public tree and in
// the private one.
type Guide struct {
	Public, Private Ledger
}

// Seal returns the seal of g: a digest of the path and stamp of every
// entry, public then private, so that whether every file still holds its
// entry is checked from stats alone (Sealer), without the entries. It
// is "" when an entry's digest is not known (such a file never holds).
func (g Guide) Seal() string {
	var s Sealer
	for i, l := range []Ledger{g.Public, g.Private} {
		for _, e := range l {
			if e.SHA256 == "" {
				return ""
			}
			s.Add(i == 1, e.Path, e.Stamp)
		}
	}
	return s.Sum()
}

// Sealer computes a seal from the stamps files show now: Add each file of
// a guide's ledger, public ones first, each tree's in path order, then
// compare Sum with the seal recorded: equal when every file shows the
// stamp its entry recorded (where the file system reports no change time,
// none was recorded either).
type Sealer struct {
	h   hash.Hash
	buf []byte
}

// Add adds the file p of the public tree (private false) or the private
// one, showing stamp st.
func (s *Sealer) Add(private bool, p string, st Stamp) {
	if s.h == nil {
		s.h = sha256.New()
	}
	tree := byte('p')
	if private {
		tree = 'q'
	}
	b := append(s.buf[:0], tree)
	b = append(b, p...)
	b = append(b, 0)
	b = binary.LittleEndian.AppendUint64(b, uint64(st.Size))
	b = binary.LittleEndian.AppendUint64(b, uint64(st.ModTime))
	b = binary.LittleEndian.AppendUint64(b, uint64(st.ChangeTime))
	s.h.Write(b)
	s.buf = b
}

// Sum returns the seal of the files added.
func (s *Sealer) Sum() string {
	if s.h == nil {
		s.h = sha256.New()
	}
	return hex.EncodeToString(s.h.Sum(nil))
}

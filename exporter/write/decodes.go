package write

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync/atomic"

	"golang.org/x/sync/semaphore"

	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/exporter/media"
)

// Decodes: an image decoded for its renditions or a PDF parsed to strip
// it takes the memory its headers say (media.DecodeCost) out of one
// budget that every decode of the Writer shares (Limits.DecodeMemory),
// and is recorded in the private tree while it runs, so that a file whose
// decode failed, or killed the process, is not decoded again at every
// start (see docs/robustness.md#decoding-budget).

// DecodesDir is the private tree's folder of decode records: one file per
// source content whose last decode did not end well.
const DecodesDir = "decodes"

// keepDecodes keeps the records' folder when its last record goes: other
// decodes may be writing theirs into it.
var keepDecodes = map[string]bool{DecodesDir: true}

// maxUnfinished is how many decodes of one file may begin and never end
// (the process died during them) before the file is refused: one may be
// a coincidence (a restart, a power loss, another decode that ran at the
// same time), so the next one runs alone; two are the file.
const maxUnfinished = 2

// decodeNote is what a decode record holds.
type decodeNote struct {
	File       string `json:"file"`            // the bundle file, for a reader
	Unfinished int    `json:"unfinished"`      // decodes begun and never ended
	Error      string `json:"error,omitempty"` // why the last decode failed
}

// decodeBudget is the memory budget decodes share: a decode holds its
// estimated bytes (media.DecodeCost.Bytes) while it runs, first come,
// first served.
type decodeBudget struct {
	sem   *semaphore.Weighted
	bytes int64

	inUse, peak *atomic.Int64 // bytes held now, and the most held at once
}

func newDecodeBudget(lim bundle.Limits) decodeBudget {
	n := lim.Media().Memory
	return decodeBudget{sem: semaphore.NewWeighted(n), bytes: n, inUse: new(atomic.Int64), peak: new(atomic.Int64)}
}

// acquire waits for n bytes of the budget and returns the function that
// gives them back.
func (b decodeBudget) acquire(ctx context.Context, n int64) (func(), error) {
	n = min(n, b.bytes) // one over the budget was refused when checked
	if err := b.sem.Acquire(ctx, n); err != nil {
		return nil, err
	}
	in := b.inUse.Add(n)
	for p := b.peak.Load(); in > p && !b.peak.CompareAndSwap(p, in); p = b.peak.Load() {
	}
	return func() {
		b.inUse.Add(-n)
		b.sem.Release(n)
	}, nil
}

// DecodeHook, when set (by tests), runs as a decode starts, with the
// bundle file decoded ("folder/file").
var DecodeHook func(rel string)

// decodeKey names the record of the source content sum for this version
// of guidepub's media rules (a new version tries every file again).
func decodeKey(sum [sha256.Size]byte) string {
	h := sha256.New()
	h.Write([]byte(media.Version + "\x00"))
	h.Write(sum[:])
	return DecodesDir + "/" + hex.EncodeToString(h.Sum(nil)[:16]) + ".json"
}

// decode runs fn, the decode of the bundle file rel of b (content sum,
// cost as its headers say) once its share of the budget is free and its
// record says it may run. It returns the *bundle.Error refusing the file
// when the record says an earlier decode failed or never ended, and
// fn's error otherwise, recording it when the decode failed (an error of
// fn that is a *bundle.Error: the file is bad) and removing the record
// when it succeeded.
func (w *guideWriter) decode(ctx context.Context, b *bundle.Bundle, rel string, sum [sha256.Size]byte, cost media.DecodeCost, fn func() error) error {
	key := decodeKey(sum)
	// The same content published twice (a PDF in two views) is decoded
	// one at a time: its record counts decodes of separate processes.
	w.e.decoding.Lock(key)
	defer func() { _ = w.e.decoding.Unlock(key) }()
	rec, err := w.readDecodeNote(key)
	if err != nil {
		return err
	}
	switch {
	case rec.Error != "":
		return rejectFile(b, rel, fmt.Errorf("%s (when it was last exported; it is not decoded again until it changes)", rec.Error))
	case rec.Unfinished >= maxUnfinished:
		return rejectFile(b, rel, fmt.Errorf("%s whose decoding did not finish %d times (the process was stopped while decoding it, most likely for lack of memory; it is not decoded again until it changes)", b.Media[rel].Format.Name(), rec.Unfinished))
	}
	// A file whose decode was cut short once runs alone: when decodes
	// run together and the process is killed, each is a suspect; alone,
	// a second kill is the file's.
	need := cost.Bytes
	if rec.Unfinished > 0 {
		need = w.e.budget.bytes
	}
	release, err := w.e.budget.acquire(ctx, need)
	if err != nil {
		return err
	}
	defer release()
	rec = decodeNote{File: b.Folder + "/" + rel, Unfinished: rec.Unfinished + 1}
	if err := w.writeDecodeNote(key, rec); err != nil {
		return err
	}
	if DecodeHook != nil {
		DecodeHook(rec.File)
	}
	err = fn()
	var be *bundle.Error
	switch {
	case err == nil:
		return w.e.priv.Remove(key, keepDecodes)
	case errors.As(err, &be):
		rec = decodeNote{File: rec.File, Error: strings.TrimPrefix(be.Problems[0].Message, "the file is ")}
	default:
		// Not the file's fault (a write failed, the source changed):
		// no record.
		_ = w.e.priv.Remove(key, keepDecodes)
		return err
	}
	if werr := w.writeDecodeNote(key, rec); werr != nil {
		return werr
	}
	return err
}

// readDecodeNote returns the record key, zero when there is none or it
// does not decode.
func (w *guideWriter) readDecodeNote(key string) (decodeNote, error) {
	var rec decodeNote
	data, err := w.e.priv.Read(key)
	if errors.Is(err, fs.ErrNotExist) {
		return rec, nil
	}
	if err != nil {
		return rec, err
	}
	_ = json.Unmarshal(data, &rec) // a damaged record is no record
	return rec, nil
}

// writeDecodeNote writes the record key, its folder flushed: a note
// written before a decode is a name like any other (docs/robustness.md,
// power loss), and one flush per decode is little beside the decode.
func (w *guideWriter) writeDecodeNote(key string, rec decodeNote) error {
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return w.e.priv.WriteSynced(key, append(data, '\n'))
}

package publish

import (
	"fmt"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/exporter/records"
)

// Withdrawn reports whether guidepub's own records say that the public
// file rel (slash path relative to the tree; a document, not its
// compressed siblings) is no longer public: its deletion is recorded
// intent (a hide, a lock, an expiry, a removal the outbox names), not
// only a difference between the tree and the listing. Publish deletes
// such a stale object whatever Config.MaxDeletes says. It returns an
// error when the records cannot be read.
type Withdrawn func(rel string) (bool, error)

// RecordedWithdrawals returns a Withdrawn that asks the exporter's records
// (records.Records.Withdrawn; several for a sharded export, whose shards
// record disjoint guides): a file in the folder of a view id or alias a
// guide's record holds, which no record holding it lists. A file a record
// lists is never withdrawn, whatever the tree holds: an empty or wrong
// tree beside the right records still deletes at most MaxDeletes objects.
// A guide or a view removed from the records is not known to them: the
// deletion of its objects counts against the limit unless the outbox
// names them (see Live).
func RecordedWithdrawals(recs ...*records.Records) Withdrawn {
	return func(rel string) (bool, error) {
		for _, r := range recs {
			if ok, err := r.Withdrawn(rel); err != nil || ok {
				return ok, err
			}
		}
		return false, nil
	}
}

// OpenRecords reads the exporter's records of an export run as shards
// shards (0 or 1: unsharded) from its private tree privateDir on fsys
// (records.OpenRecords, for a reader), one per shard. It returns an error
// when a record cannot be read.
func OpenRecords(fsys afero.Fs, privateDir string, shards int) ([]*records.Records, error) {
	shards = max(shards, 1)
	recs := make([]*records.Records, shards)
	for i := range shards {
		r, err := records.OpenRecords(fsys, privateDir, i, shards)
		if err != nil {
			return nil, fmt.Errorf("read the export's records: %w", err)
		}
		recs[i] = r
	}
	return recs, nil
}

// RecordsWithdrawals returns a LiveConfig.Withdrawals that reads the
// exporter's records of privateDir on fsys (nil: the operating system's;
// see OpenRecords) each time it is called, as they are then, and asks
// them (RecordedWithdrawals).
func RecordsWithdrawals(fsys afero.Fs, privateDir string, shards int) func() (Withdrawn, error) {
	if fsys == nil {
		fsys = afero.NewOsFs()
	}
	return func() (Withdrawn, error) {
		recs, err := OpenRecords(fsys, privateDir, shards)
		if err != nil {
			return nil, err
		}
		return RecordedWithdrawals(recs...), nil
	}
}

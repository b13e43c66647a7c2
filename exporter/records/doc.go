// Package records keeps what an exporter published: the export's last
// stage. Once a guide's plan is written (package write), Records.Save
// writes its record: its manifest entry with the guide's ledger (package
// ledger: each file's digests, stamp and media source), one small file per guide in the private tree (RecordsDir),
// which a new exporter reads back in the background at start
// (StartRecords; OpenRecords for a reader) and a publisher consults
// (Records.Lookup, Records.PublicFiles). Records are also what the claims
// of the export's second stage are checked against (claims.Published:
// Records.PublishedGuide, Records.PublicIDOwner); beside them, the ids
// index (idindex.go) names the guide holding each view id and alias, so
// that a claim made before every record is read is checked in a few file
// reads.
package records

// Package records keeps what an exporter published and what it is
// publishing: the export's second stage (claims) and its last (records).
//
// Claims reserve a bundle's guide id, view ids and alias before it is
// rendered, so that two bundles never publish the same id; they are
// checked against the Records and the claims in flight. Once a guide's
// plan is written (package write), Records.Save writes its record: its
// manifest entry with the hash and stamp of each public file, one small
// file per guide in the private tree (RecordsDir), which a new exporter
// reads back in the background at start (StartRecords; OpenRecords for
// a reader) and a publisher consults (Records.Lookup,
// Records.PublicFiles). Beside them, the ids index (idindex.go) names the
// guide holding each view id and alias, so that a claim made before every
// record is read is checked in a few file reads.
package records

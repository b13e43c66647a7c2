// Package records keeps what an exporter published and what it is
// publishing: the export's second stage (claims) and its last (records).
//
// Claims reserve a bundle's guide id, view ids and alias before it is
// rendered, so that two bundles never publish the same id; they are
// checked against the Records and the claims in flight. Once a guide's
// plan is written (package write), Records.Save writes its record: its
// manifest entry with the hash and stamp of each public file, one small
// file per guide in the private tree (RecordsDir), which a new exporter
// reads back at start (OpenRecords) and a publisher consults
// (Records.Lookup, Records.PublicFiles).
package records

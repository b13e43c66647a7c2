// Package exporter turns guide bundles into the published site: for every
// view (and the guide's alias) the precompressed documents data/status,
// data/summary and reso/autofill, the view's pages and public media, and,
// in the private tree, the guide's record, its ready event and its private
// documents.
//
// It only orchestrates the stages, each a package that imports only the
// ones before it: load a bundle (package bundle), claim its ids (package
// claims, checked against what the records say is published), decide
// what it publishes (package render: a pure plan), write that durably
// into the trees (package write), record what was written (package
// records). Below write and records, package ledger says what each file
// written holds and how to tell it still does: records keep each guide's
// ledger, write reads it back. ExportBundle runs them for one bundle folder,
// ExportAll for every folder, RemoveBundle undoes them.
//
// Exports are incremental: a file whose bytes did not change is not
// rewritten, files of views, aliases and guides that went away are deleted,
// and every write goes through a temporary file renamed into place, so a
// reader never sees a half-written file. A rejected bundle leaves what it
// published before untouched.
package exporter

// Package publish uploads an exported public tree to object storage through
// gocloud.dev/blob (S3 and S3-compatible servers, Google Cloud Storage,
// Azure Blob Storage, local folders).
//
// Object stores do not negotiate encodings, so each key holds one
// representation with the headers set at upload: documents as identity
// JSON, or compressed (gzip or br) with Content-Encoding; media always as
// they are. Unchanged objects are skipped by content hash; uploads go in
// phases (media, then summaries and autofill documents, then statuses) so
// a reader never sees a document whose media or companions are missing;
// stale objects are deleted last, and only those guidepub wrote (Owned):
// another writer's objects under the prefix stay. A limit bounds the
// deletions nothing recorded (a wrong tree would make every object
// stale); what the exporter's records or the outbox say was withdrawn
// goes whatever its number (Withdrawn). Live
// keeps a bucket current as exports happen, and makes it converge to the
// tree after any fault (an outbox write failing, a crash). It reads what
// an export changed as plain data (GuideChanges) and imports nothing of
// the exporter's orchestration.
package publish

// Package edge keeps a CDN in front of the public tree or bucket in step
// with every publish: once a change is in place (the tree written, or
// the bucket updated by live publishing), it purges at the CDN exactly the
// public ids (view ids and aliases) the change touched, by their
// surrogate keys (site.SurrogateKey) or, for CloudFront, by paths. So the
// edge can cache documents, pages and media for long and still stop
// serving a hidden street or photo within seconds (docs/hosting.md,
// "Purging the edge").
//
// Purges are durable intents, like live publishing's uploads: before an
// export touches the tree, a file says a purge is owed; after it, the ids
// it changed are saved in the queue folder and the owed file removed. A
// purge leaves the queue only once the CDN accepted it: a crash, a CDN
// outage or a refusal keeps it, and it is sent again (a refusal is logged
// as an error and retried at the longest backoff; a hide's purge is never
// dropped). A process that died with an owed file left makes the next one
// purge everything, since what that export changed is not known.
//
// Purges are batched (many guides' ids in one request, up to the CDN's
// limit per request) and rate-limited by each CDN's documented limits,
// with its 429 and 5xx answers retried after the wait they ask for.
package edge

// Package oauth is guidepub's OAuth 2.0 authorization server, the second
// credential kind of the Portal API (docs/oauth.md). It issues access and
// refresh tokens to OAuth apps through the authorization code grant with
// PKCE (S256 only), rotates refresh tokens, revokes tokens (RFC 7009) and
// publishes its metadata (RFC 8414). Owners sign in with a password (an
// argon2id hash is stored) and approve each app's scopes on a consent page.
//
// Grant handling is github.com/ory/fosite's; this package supplies its
// storage (on sidecar/store, SQLite or PostgreSQL, every token kept only as
// an HMAC signature), the sign-in and consent pages, and Authenticate, which
// the Portal API calls to accept an access token like an API token.
package oauth

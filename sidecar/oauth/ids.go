package oauth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"strings"

	"github.com/guidepub/guidepub/sidecar/apitoken"
)

// Client ids and secrets: a prefix and random base62, so they are told apart
// from API tokens and secret scanners can find a leaked secret.
const (
	ClientIDPrefix     = "gpc_"
	ClientSecretPrefix = "gpcs_"
	clientIDLen        = 16
	clientSecretLen    = 40
)

// NewClientID returns a fresh client id.
func NewClientID() (string, error) {
	s, err := apitoken.RandomBase62(nil, clientIDLen)
	return ClientIDPrefix + s, err
}

// NewClientSecret returns a fresh client secret and the hash to store.
func NewClientSecret() (secret string, hash []byte, err error) {
	s, err := apitoken.RandomBase62(nil, clientSecretLen)
	if err != nil {
		return "", nil, err
	}
	secret = ClientSecretPrefix + s
	sum := sha256.Sum256([]byte(secret))
	return secret, sum[:], nil
}

// IsClientID reports whether id has the shape of an OAuth client id, so the
// Portal API knows which credential kind a request presents.
func IsClientID(id string) bool { return strings.HasPrefix(id, ClientIDPrefix) }

// secretHasher is fosite's client-secret hasher: SHA-256, compared in
// constant time. Client secrets are 238 bits of randomness, so a slow KDF
// would add cost and no safety.
type secretHasher struct{}

func (secretHasher) Hash(_ context.Context, data []byte) ([]byte, error) {
	sum := sha256.Sum256(data)
	return sum[:], nil
}

func (secretHasher) Compare(_ context.Context, hash, data []byte) error {
	sum := sha256.Sum256(data)
	if len(hash) != sha256.Size || subtle.ConstantTimeCompare(hash, sum[:]) != 1 {
		return errors.New("client secret mismatch")
	}
	return nil
}

package oauth

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/argon2"
)

// Argon2id parameters for owners' passwords: RFC 9106's second recommended
// option (3 passes over 64 MiB), 2 lanes for a 2-core machine. About 100 ms
// per check, which is also what bounds a guessing attacker besides the
// sign-in throttle (docs/oauth.md#passwords).
const (
	argonTime    = 3
	argonMemory  = 64 * 1024 // KiB
	argonThreads = 2
	argonKeyLen  = 32
	argonSaltLen = 16
)

// MinPasswordLen is the shortest password an owner may set.
const MinPasswordLen = 12

// HashPassword returns the argon2id hash of password in the PHC string
// format ($argon2id$v=19$m=…,t=…,p=…$salt$hash). It returns an error for a
// password shorter than MinPasswordLen or when no randomness is available.
func HashPassword(password string) (string, error) {
	if len([]rune(password)) < MinPasswordLen {
		return "", fmt.Errorf("a password needs at least %d characters", MinPasswordLen)
	}
	salt := make([]byte, argonSaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	key := argon2.IDKey([]byte(password), salt, argonTime, argonMemory, argonThreads, argonKeyLen)
	return encodeHash(salt, key), nil
}

// encodeHash returns salt and key as an argon2id hash made with this
// package's parameters, in the PHC string format.
func encodeHash(salt, key []byte) string {
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemory, argonTime, argonThreads,
		b64.EncodeToString(salt), b64.EncodeToString(key))
}

// errBadHash is returned for a stored hash this package cannot read.
var errBadHash = errors.New("unreadable password hash")

// CheckPassword reports whether password matches the encoded hash, with a
// constant-time comparison of the derived keys. The hash's own parameters
// are used, so hashes made with other parameters keep working.
func CheckPassword(encoded, password string) (bool, error) {
	h, err := parseHash(encoded)
	if err != nil {
		return false, err
	}
	return h.matches(password), nil
}

// argonHash is a decoded argon2id hash in the PHC string format.
type argonHash struct {
	memKiB, iters uint32
	threads       uint8
	salt, key     []byte
}

// parseHash decodes an encoded argon2id hash, or returns errBadHash.
func parseHash(encoded string) (argonHash, error) {
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return argonHash{}, errBadHash
	}
	var version int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return argonHash{}, errBadHash
	}
	var h argonHash
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &h.memKiB, &h.iters, &h.threads); err != nil || h.memKiB == 0 || h.iters == 0 || h.threads == 0 {
		return argonHash{}, errBadHash
	}
	b64 := base64.RawStdEncoding
	var err error
	if h.salt, err = b64.DecodeString(parts[4]); err != nil {
		return argonHash{}, errBadHash
	}
	if h.key, err = b64.DecodeString(parts[5]); err != nil || len(h.key) == 0 {
		return argonHash{}, errBadHash
	}
	return h, nil
}

// matches derives the key of password (taking h.memKiB of memory for the
// time it runs) and compares it with h's in constant time.
func (h argonHash) matches(password string) bool {
	got := argon2.IDKey([]byte(password), h.salt, h.iters, h.memKiB, h.threads, uint32(len(h.key)))
	return subtle.ConstantTimeCompare(got, h.key) == 1
}

// dummyHash is checked against when an owner has no password, so that a
// sign-in for an unknown owner costs the same time as a wrong password:
// what a check costs is set by the hash's parameters, which are
// HashPassword's, not by its salt and key, which are fixed here (zeros).
// It admits nobody, whatever the check says: checkOwner refuses an unknown
// owner. Made by hashing a password, it cost every sidecar start about
// 0.5 s of CPU and 64 MB (docs/oauth.md#passwords).
var dummyHash = encodeHash(make([]byte, argonSaltLen), make([]byte, argonKeyLen))

package oauth

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"

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
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemory, argonTime, argonThreads,
		b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// errBadHash is returned for a stored hash this package cannot read.
var errBadHash = errors.New("unreadable password hash")

// CheckPassword reports whether password matches the encoded hash, with a
// constant-time comparison of the derived keys. The hash's own parameters
// are used, so hashes made with other parameters keep working.
func CheckPassword(encoded, password string) (bool, error) {
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false, errBadHash
	}
	var version int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false, errBadHash
	}
	var mem, iters uint32
	var threads uint8
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &mem, &iters, &threads); err != nil || mem == 0 || iters == 0 || threads == 0 {
		return false, errBadHash
	}
	b64 := base64.RawStdEncoding
	salt, err := b64.DecodeString(parts[4])
	if err != nil {
		return false, errBadHash
	}
	want, err := b64.DecodeString(parts[5])
	if err != nil || len(want) == 0 {
		return false, errBadHash
	}
	got := argon2.IDKey([]byte(password), salt, iters, mem, threads, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}

// dummyHash is checked against when an owner has no password, so that a
// sign-in for an unknown owner costs the same time as a wrong password.
// It is made once, when first needed (New starts that in the background):
// at package init it cost every guidepub command 0.27 s and 64 MB.
var dummyHash = sync.OnceValue(func() string {
	h, err := HashPassword("guidepub: no such owner, no such password")
	if err != nil {
		panic(err)
	}
	return h
})

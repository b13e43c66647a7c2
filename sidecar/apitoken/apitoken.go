// Package apitoken creates Portal API credentials: an app id (sent as
// X-Svc-App-Id) and a token value (sent as X-Svc-App-Token), and knows the
// scopes a token may carry.
//
// Token values are "gpt_" followed by 32 random base62 characters (about 190
// bits) and a 6-character base62 CRC-32 of them. The fixed prefix and the
// checksum let secret scanners recognise a leaked token without asking the
// service. Only Hash(value) is ever stored.
package apitoken

import (
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"hash/crc32"
	"io"
	"math/big"
	"strings"
)

// Prefixes of app ids and token values.
const (
	AppIDPrefix = "gpa_"
	TokenPrefix = "gpt_"
)

const (
	alphabet    = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	appIDChars  = 16
	secretChars = 32
	crcChars    = 6 // 62^6 > 2^32
)

// Scopes lists every scope a token may carry: the Portal API's eleven
// (docs/sidecar.md#credentials).
var Scopes = []string{
	"guide.list", "guide.read", "guide.write", "guide.process", "guide.billing",
	"guide.events", "guide.draft.ro", "viewer.data", "banner.list", "user.account",
	"credentials.manage",
}

// ScopeEvents is the scope the event endpoints require.
const ScopeEvents = "guide.events"

// ValidScope reports whether s is one of Scopes.
func ValidScope(s string) bool {
	for _, v := range Scopes {
		if v == s {
			return true
		}
	}
	return false
}

// New returns a new app id and token value read from the random source r
// (crypto/rand.Reader when nil). It fails only when r fails.
func New(r io.Reader) (appID, token string, err error) {
	if r == nil {
		r = rand.Reader
	}
	id, err := RandomBase62(r, appIDChars)
	if err != nil {
		return "", "", fmt.Errorf("generate app id: %w", err)
	}
	secret, err := RandomBase62(r, secretChars)
	if err != nil {
		return "", "", fmt.Errorf("generate token: %w", err)
	}
	return AppIDPrefix + id, TokenPrefix + secret + checksum(secret), nil
}

// Hash returns the SHA-256 digest of a token value: what the store keeps.
func Hash(token string) []byte {
	sum := sha256.Sum256([]byte(token))
	return sum[:]
}

// WellFormed reports whether token has the prefix, length and checksum of a
// token made by New. The server does not rely on it (it compares hashes);
// it is for scanners and for telling a person a token was mistyped.
func WellFormed(token string) bool {
	body, ok := strings.CutPrefix(token, TokenPrefix)
	if !ok || len(body) != secretChars+crcChars {
		return false
	}
	for i := 0; i < len(body); i++ {
		if strings.IndexByte(alphabet, body[i]) < 0 {
			return false
		}
	}
	return checksum(body[:secretChars]) == body[secretChars:]
}

func checksum(s string) string {
	n := crc32.ChecksumIEEE([]byte(s))
	b := make([]byte, crcChars)
	for i := crcChars - 1; i >= 0; i-- {
		b[i] = alphabet[n%62]
		n /= 62
	}
	return string(b)
}

// RandomBase62 returns n characters drawn uniformly from [0-9A-Za-z] with
// randomness from r (crypto/rand.Reader when nil): the alphabet of app ids,
// token values and OAuth client ids and secrets. It returns r's error.
func RandomBase62(r io.Reader, n int) (string, error) {
	if r == nil {
		r = rand.Reader
	}
	b := make([]byte, n)
	max := big.NewInt(int64(len(alphabet)))
	for i := range b {
		v, err := rand.Int(r, max)
		if err != nil {
			return "", err
		}
		b[i] = alphabet[v.Int64()]
	}
	return string(b), nil
}

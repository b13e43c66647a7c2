// Package authtoken issues and verifies the access tokens that open a
// guide's private documents: the authtoken of the ready event, sent back by
// clients as ?accessToken=.
//
// A token is "v1.<keyId>.<guideId>.<expiresUnix>.<signature>", where the
// signature is the unpadded base64url HMAC-SHA256 of everything before it
// under the key named by keyId. Binding the guide id into the signed part
// makes a token useless for any other guide; the key id lets the signing key
// be rotated: the newest key signs, every configured key verifies, so tokens
// issued before a rotation keep working until they expire.
package authtoken

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/guidepub/guidepub/site/clock"
)

// Validity is how long an issued token is accepted: three weeks from issue,
// the service's limit for access tokens (docs/sidecar.md#private-documents).
const Validity = 21 * 24 * time.Hour

// MinKeyLen is the shortest signing key accepted, in bytes.
const MinKeyLen = 32

const version = "v1"

// Errors returned by Verify. Callers answer all of them the same way (401);
// they differ only for logs.
var (
	ErrMalformed  = errors.New("authtoken: malformed token")
	ErrUnknownKey = errors.New("authtoken: signed with an unknown key")
	ErrSignature  = errors.New("authtoken: bad signature")
	ErrWrongGuide = errors.New("authtoken: issued for another guide")
	ErrExpired    = errors.New("authtoken: expired")
)

// Signer issues tokens with its current key and verifies them with any of
// its keys. It is safe for concurrent use.
type Signer struct {
	current string
	keys    map[string]*key
	now     func() time.Time
}

// key is one signing key with a pool of HMAC states keyed with it (an HMAC
// is costly to key and cheap to reset).
type key struct {
	macs sync.Pool
}

func newKey(secret []byte) *key {
	secret = append([]byte(nil), secret...)
	return &key{macs: sync.Pool{New: func() any { return hmac.New(sha256.New, secret) }}}
}

func (k *key) sign(payload string) string {
	m := k.macs.Get().(hash.Hash)
	m.Reset()
	m.Write([]byte(payload))
	var sum [sha256.Size]byte
	out := base64.RawURLEncoding.EncodeToString(m.Sum(sum[:0]))
	k.macs.Put(m)
	return out
}

// KeyID returns the id under which key is named in tokens: the first 8 hex
// digits of its SHA-256, so the id reveals nothing useful about the key.
func KeyID(key []byte) string {
	sum := sha256.Sum256(key)
	return hex.EncodeToString(sum[:4])
}

// New returns a Signer that signs with keys[0] and verifies with every key
// in keys. clk tells the time (clock.System() when nil). It returns an error when
// keys is empty or a key is shorter than MinKeyLen bytes.
func New(keys [][]byte, clk clock.Clock) (*Signer, error) {
	if len(keys) == 0 {
		return nil, errors.New("authtoken: no signing key")
	}
	s := &Signer{keys: make(map[string]*key, len(keys)), now: clock.Or(clk).Now}
	for i, k := range keys {
		if len(k) < MinKeyLen {
			return nil, fmt.Errorf("authtoken: signing key %d is %d bytes, want at least %d", i+1, len(k), MinKeyLen)
		}
		id := KeyID(k)
		if i == 0 {
			s.current = id
		}
		s.keys[id] = newKey(k)
	}
	return s, nil
}

// Issue returns a new token for guideID, valid for Validity from now, and
// the moment it expires.
func (s *Signer) Issue(guideID string) (token string, expires time.Time) {
	expires = s.now().Add(Validity).Truncate(time.Second)
	payload := version + "." + s.current + "." + guideID + "." + strconv.FormatInt(expires.Unix(), 10)
	return payload + "." + s.keys[s.current].sign(payload), expires
}

// Verify checks that token was issued by one of the Signer's keys for
// guideID and has not expired. It returns nil or one of ErrMalformed,
// ErrUnknownKey, ErrSignature, ErrWrongGuide, ErrExpired.
func (s *Signer) Verify(token, guideID string) error {
	// Guide ids never contain '.', so the token splits into exactly 5 parts.
	parts := strings.Split(token, ".")
	if len(parts) != 5 || parts[0] != version {
		return ErrMalformed
	}
	k, ok := s.keys[parts[1]]
	if !ok {
		return ErrUnknownKey
	}
	payload := token[:len(token)-len(parts[4])-1]
	want := k.sign(payload)
	if !hmac.Equal([]byte(parts[4]), []byte(want)) {
		return ErrSignature
	}
	if parts[2] != guideID {
		return ErrWrongGuide
	}
	exp, err := strconv.ParseInt(parts[3], 10, 64)
	if err != nil {
		return ErrMalformed
	}
	if !s.now().Before(time.Unix(exp, 0)) {
		return ErrExpired
	}
	return nil
}

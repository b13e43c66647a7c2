package site

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// The shared stylesheet (docs/pages.md#the-stylesheet): every view page
// links one style sheet, published once for the whole tree under a name
// made of a hash of its bytes, so a name always holds the same bytes and
// is cached for good. The folder's name has a dot, which no id has
// (ValidID), so it is no view's and no alias's, and no page URL pattern
// matches it; there is nothing to reserve.
//
//	_assets.v1/view.<hash>.css   (+ .br .zst .gz)
const (
	AssetsDir      = "_assets.v1"
	StylesheetType = "text/css; charset=utf-8"
	// ImmutableCacheControl is the Cache-Control of a file whose name
	// changes with its bytes: cached for a year, never revalidated.
	ImmutableCacheControl = "public, max-age=31536000, immutable"
)

// stylesheetHashLen is the number of hexadecimal digits of the hash in a
// stylesheet's name (64 bits of its SHA-256).
const stylesheetHashLen = 16

// StylesheetPath returns the public path of the stylesheet whose bytes
// are css: AssetsDir/view.<the first 16 hex digits of their SHA-256>.css.
func StylesheetPath(css []byte) string {
	sum := sha256.Sum256(css)
	return AssetsDir + "/view." + hex.EncodeToString(sum[:])[:stylesheetHashLen] + ".css"
}

// StylesheetPattern is a regular expression (RE2 and PCRE alike) matching
// the URL path of any stylesheet StylesheetPath names, for the printed
// server configurations.
const StylesheetPattern = `^/_assets\.v1/view\.[0-9a-f]{16}\.css$`

// IsStylesheet reports whether the slash-separated public path p is a
// stylesheet's (of any hash): a path StylesheetPath returns.
func IsStylesheet(p string) bool {
	h, ok := strings.CutPrefix(p, AssetsDir+"/view.")
	if !ok {
		return false
	}
	h, ok = strings.CutSuffix(h, ".css")
	if !ok || len(h) != stylesheetHashLen {
		return false
	}
	for _, c := range h {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

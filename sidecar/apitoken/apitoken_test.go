package apitoken

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestNew(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < 50; i++ {
		id, tok, err := New(nil)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(id, AppIDPrefix) || len(id) != len(AppIDPrefix)+appIDChars {
			t.Fatalf("app id %q", id)
		}
		if !WellFormed(tok) {
			t.Fatalf("token %q not well formed", tok)
		}
		if seen[id] || seen[tok] {
			t.Fatalf("repeated value in %q %q", id, tok)
		}
		seen[id], seen[tok] = true, true
		if len(Hash(tok)) != 32 || bytes.Equal(Hash(tok), Hash(tok+"x")) {
			t.Fatal("hash is not a SHA-256 of the value")
		}
	}
}

func TestWellFormedRejects(t *testing.T) {
	_, tok, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	flip := []byte(tok)
	if flip[10] == 'a' {
		flip[10] = 'b'
	} else {
		flip[10] = 'a'
	}
	for name, v := range map[string]string{
		"empty":         "",
		"no prefix":     strings.TrimPrefix(tok, TokenPrefix),
		"other prefix":  "ghp_" + strings.TrimPrefix(tok, TokenPrefix),
		"short":         tok[:len(tok)-1],
		"long":          tok + "0",
		"typo":          string(flip),
		"bad character": tok[:8] + "!" + tok[9:],
	} {
		t.Run(name, func(t *testing.T) {
			if WellFormed(v) {
				t.Fatalf("WellFormed(%q) = true", v)
			}
		})
	}
}

type failReader struct{}

func (failReader) Read([]byte) (int, error) { return 0, errors.New("no entropy") }

func TestNewFails(t *testing.T) {
	if _, _, err := New(failReader{}); err == nil {
		t.Fatal("New with a failing random source succeeded")
	}
}

func TestScopes(t *testing.T) {
	if len(Scopes) != 11 {
		t.Fatalf("%d scopes, the Portal API has 11", len(Scopes))
	}
	for _, s := range Scopes {
		if !ValidScope(s) {
			t.Fatalf("ValidScope(%q) = false", s)
		}
	}
	for _, s := range []string{"", "guide", "guide.events ", "GUIDE.EVENTS", "admin"} {
		if ValidScope(s) {
			t.Fatalf("ValidScope(%q) = true", s)
		}
	}
}

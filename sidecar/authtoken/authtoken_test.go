package authtoken

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/guidepub/guidepub/site/clock/clocktest"
)

type testClock struct{ t time.Time }

func (c *testClock) Now() time.Time { return c.t }

func testKey(b byte) []byte { return bytes.Repeat([]byte{b}, MinKeyLen) }

func TestIssueVerify(t *testing.T) {
	c := &testClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	s, err := New([][]byte{testKey(1)}, clocktest.NowFunc(c.Now))
	if err != nil {
		t.Fatal(err)
	}
	tok, exp := s.Issue("guide-1")
	if want := c.t.Add(Validity); !exp.Equal(want) {
		t.Fatalf("expires %v, want %v", exp, want)
	}
	other, _ := s.Issue("guide-2")
	tampered := []byte(tok)
	tampered[len(tampered)-1] ^= 1
	cases := []struct {
		name    string
		advance time.Duration
		token   string
		guide   string
		want    error
	}{
		{"fresh", 0, tok, "guide-1", nil},
		{"one second before expiry", Validity - time.Second, tok, "guide-1", nil},
		{"at expiry", Validity, tok, "guide-1", ErrExpired},
		{"after expiry", Validity + time.Hour, tok, "guide-1", ErrExpired},
		{"other guide", 0, tok, "guide-2", ErrWrongGuide},
		{"token of other guide", 0, other, "guide-1", ErrWrongGuide},
		{"tampered signature", 0, string(tampered), "guide-1", ErrSignature},
		{"guide swapped in payload", 0, strings.Replace(tok, ".guide-1.", ".guide-2.", 1), "guide-2", ErrSignature},
		{"empty", 0, "", "guide-1", ErrMalformed},
		{"garbage", 0, "a.b.c", "guide-1", ErrMalformed},
		{"wrong version", 0, "v2" + tok[2:], "guide-1", ErrMalformed},
		{"unknown key", 0, "v1.deadbeef.guide-1.1.sig", "guide-1", ErrUnknownKey},
	}
	start := c.t
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c.t = start.Add(tc.advance)
			if err := s.Verify(tc.token, tc.guide); !errors.Is(err, tc.want) {
				t.Fatalf("Verify = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestRotation(t *testing.T) {
	now := clocktest.NewClock(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC))
	old, err := New([][]byte{testKey(1)}, now)
	if err != nil {
		t.Fatal(err)
	}
	oldTok, _ := old.Issue("g")
	rotated, err := New([][]byte{testKey(2), testKey(1)}, now)
	if err != nil {
		t.Fatal(err)
	}
	if err := rotated.Verify(oldTok, "g"); err != nil {
		t.Fatalf("token of the previous key: %v", err)
	}
	newTok, _ := rotated.Issue("g")
	if !strings.Contains(newTok, "."+KeyID(testKey(2))+".") {
		t.Fatalf("new token %q not signed with the current key", newTok)
	}
	if err := old.Verify(newTok, "g"); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("old signer verifying a new-key token: %v, want ErrUnknownKey", err)
	}
	dropped, err := New([][]byte{testKey(2)}, now)
	if err != nil {
		t.Fatal(err)
	}
	if err := dropped.Verify(oldTok, "g"); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("after dropping the old key: %v, want ErrUnknownKey", err)
	}
}

func TestNewRejects(t *testing.T) {
	for name, keys := range map[string][][]byte{
		"no key":    nil,
		"short key": {[]byte("short")},
		"short old": {testKey(1), []byte("short")},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := New(keys, nil); err == nil {
				t.Fatal("New accepted bad keys")
			}
		})
	}
}

func BenchmarkIssue(b *testing.B) {
	s, _ := New([][]byte{testKey(1)}, nil)
	for b.Loop() {
		s.Issue("guide-1")
	}
}

package sidecar

import (
	"context"
	"sync"
	"testing"

	"golang.org/x/oauth2"
)

// together runs fn n times at once and returns the tokens and the errors.
func together(n int, fn func() (*oauth2.Token, error)) (toks []*oauth2.Token, errs []error) {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		start = make(chan struct{})
	)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			tok, err := fn()
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
			} else {
				toks = append(toks, tok)
			}
		}()
	}
	close(start)
	wg.Wait()
	return toks, errs
}

// TestOAuthRedeemOnce sends one authorization code, then one refresh
// token, many times at once: exactly one redemption wins, every other one
// is invalid_grant, and since a second redemption is a reuse the whole
// grant is revoked, the winner's tokens included (RFC 6749 §4.1.2 for
// codes, RFC 9700 §4.14.2 for refresh tokens).
func TestOAuthRedeemOnce(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		e := newOAuthEnv(t, dsn)
		b := newBrowser(t)
		ctx := context.Background()
		wantOneWinner := func(t *testing.T, what string, toks []*oauth2.Token, errs []error) *oauth2.Token {
			t.Helper()
			if len(toks) != 1 {
				t.Fatalf("%s: %d redemptions succeeded (errors %v), want exactly 1", what, len(toks), errs)
			}
			for _, err := range errs {
				wantRFCError(t, err, "invalid_grant")
			}
			return toks[0]
		}
		wantRevoked := func(t *testing.T, what string, tok *oauth2.Token) {
			t.Helper()
			code, body := e.portal("GET", eventPath, tok.AccessToken)
			wantStatus(t, what+": the winner's access token", code, body, 401)
			_, err := e.app.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
			wantRFCError(t, err, "invalid_grant")
		}

		for range 3 {
			verifier := oauth2.GenerateVerifier()
			q := e.authorize(t, b, e.app.AuthCodeURL("state-1234567890", oauth2.S256ChallengeOption(verifier)), "allow", "guide.events")
			toks, errs := together(16, func() (*oauth2.Token, error) {
				return e.app.Exchange(ctx, q.Get("code"), oauth2.VerifierOption(verifier))
			})
			tok := wantOneWinner(t, "one code sent 16 times", toks, errs)
			wantRevoked(t, "code", tok)
		}

		for range 3 {
			tok := e.grant(t, b, "guide.events")
			toks, errs := together(8, func() (*oauth2.Token, error) {
				return e.app.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
			})
			fresh := wantOneWinner(t, "one refresh token sent 8 times", toks, errs)
			wantRevoked(t, "refresh", fresh)
		}
	})
}

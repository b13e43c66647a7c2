package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/google/renameio/v2"

	"github.com/guidepub/guidepub/sidecar/apitoken"
	"github.com/guidepub/guidepub/sidecar/oauth"
	"github.com/guidepub/guidepub/sidecar/store"
)

// devCredsFile is where dev keeps, in its work folder, the secrets of the
// credentials it made, readable by its user only.
const devCredsFile = "dev-credentials.json"

// devAppOwner registers dev's sample OAuth app (app create --owner).
const devAppOwner = "dev-integrator"

// devAppName is the sample app's name, shown on the consent page.
const devAppName = "guidepub dev sample app"

// devCreds are the credentials dev made and uses again on every run: a
// Portal API token per owner, a sample OAuth app and the owners'
// passwords. The store keeps only hashes, so their secrets live in
// <work-dir>/dev-credentials.json (0600). A credential the store no longer
// accepts as dev made it (revoked by hand, another store) is replaced, and
// the one it replaces revoked if it still works.
type devCreds struct {
	Tokens    map[string]devToken `json:"tokens"`              // by owner
	App       *devApp             `json:"oauthApp,omitempty"`  // the sample app
	Passwords map[string]string   `json:"passwords,omitempty"` // by owner

	path string
}

// devToken is a Portal API token dev made for an owner.
type devToken struct {
	AppID string `json:"appId"`
	Token string `json:"token"`
}

// devApp is dev's sample OAuth app.
type devApp struct {
	ClientID     string `json:"clientId"`
	ClientSecret string `json:"clientSecret"`
}

// loadDevCreds reads the credentials file of the work folder work. A
// missing file is no credentials; one that cannot be decoded is an error
// naming it (delete it to start over).
func loadDevCreds(work string) (*devCreds, error) {
	d := &devCreds{path: filepath.Join(work, devCredsFile)}
	data, err := os.ReadFile(d.path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err == nil {
		if err := json.Unmarshal(data, d); err != nil {
			return nil, fmt.Errorf("%s: %w (delete it and dev makes new credentials)", d.path, err)
		}
	}
	if d.Tokens == nil {
		d.Tokens = map[string]devToken{}
	}
	if d.Passwords == nil {
		d.Passwords = map[string]string{}
	}
	return d, nil
}

// save writes the credentials file atomically, readable by its user only.
func (d *devCreds) save() error {
	data, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return err
	}
	return writeFileMode(d.path, append(data, '\n'), 0o600)
}

// tokens returns a Portal API token with devScopes for each owner: the one
// dev made before when the store still accepts it, else a new one.
func (d *devCreds) tokens(ctx context.Context, st *store.Store, owners []string, now time.Time) (map[string]devToken, error) {
	out := map[string]devToken{}
	for _, o := range owners {
		old, had := d.Tokens[o]
		if had {
			ok, err := tokenStillWorks(ctx, st, old, o, now)
			if err != nil {
				return nil, err
			}
			if ok {
				out[o] = old
				continue
			}
			if err := st.RevokeToken(ctx, old.AppID, now.UTC()); err != nil && !errors.Is(err, store.ErrNotFound) {
				return nil, err
			}
		}
		appID, token, err := apitoken.New(nil)
		if err != nil {
			return nil, err
		}
		if err := st.CreateToken(ctx, store.Token{AppID: appID, OwnerID: o, Scopes: devScopes,
			Hash: apitoken.Hash(token), CreatedAt: now.UTC()}); err != nil {
			return nil, err
		}
		d.Tokens[o] = devToken{AppID: appID, Token: token}
		out[o] = d.Tokens[o]
	}
	return out, d.save()
}

// tokenStillWorks reports whether the store holds t as dev made it for
// owner: not revoked or expired, with its hash and devScopes.
func tokenStillWorks(ctx context.Context, st *store.Store, t devToken, owner string, now time.Time) (bool, error) {
	rec, err := st.Token(ctx, t.AppID)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return rec.RevokedAt == nil && (rec.ExpiresAt == nil || now.Before(*rec.ExpiresAt)) && rec.OwnerID == owner &&
		subtle.ConstantTimeCompare(rec.Hash, apitoken.Hash(t.Token)) == 1 && slices.Equal(rec.Scopes, devScopes), nil
}

// app returns the sample OAuth app, which may ask for devScopes and sends
// the browser back to redirect: the one dev made before when the store
// still has it so, else a new one.
func (d *devCreds) app(ctx context.Context, st *store.Store, redirect string, now time.Time) (devApp, error) {
	if d.App != nil {
		rec, err := st.App(ctx, d.App.ClientID)
		switch {
		case err == nil && appStillWorks(rec, *d.App, redirect):
			return *d.App, nil
		case err == nil && rec.RevokedAt == nil:
			if err := st.RevokeApp(ctx, rec.ClientID, now.UTC()); err != nil {
				return devApp{}, err
			}
		case err != nil && !errors.Is(err, store.ErrNotFound):
			return devApp{}, err
		}
	}
	app, secret, err := registerApp(ctx, st, store.App{OwnerID: devAppOwner, Name: devAppName,
		RedirectURIs: []string{redirect}, Scopes: devScopes}, false)
	if err != nil {
		return devApp{}, err
	}
	d.App = &devApp{ClientID: app.ClientID, ClientSecret: secret}
	return *d.App, d.save()
}

// appStillWorks reports whether rec is the sample app a as dev made it:
// not revoked, with a's secret, devScopes and a redirect URI the
// authorization server matches with redirect (loopback: any port).
func appStillWorks(rec store.App, a devApp, redirect string) bool {
	sum := sha256.Sum256([]byte(a.ClientSecret))
	return rec.RevokedAt == nil && subtle.ConstantTimeCompare(rec.SecretHash, sum[:]) == 1 &&
		slices.Equal(rec.Scopes, devScopes) && slices.ContainsFunc(rec.RedirectURIs, func(u string) bool { return sameLoopbackURI(u, redirect) })
}

// sameLoopbackURI reports whether a and b differ at most by their port.
func sameLoopbackURI(a, b string) bool {
	ua, erra := url.Parse(a)
	ub, errb := url.Parse(b)
	return erra == nil && errb == nil && ua.Scheme == ub.Scheme && ua.Hostname() == ub.Hostname() && ua.Path == ub.Path
}

// ownerPassword returns the password owner signs in with, and true, when
// dev set it: the one it set before while the store still has it, or a
// new one when the owner has none. An owner whose password was set with
// "guidepub owner password" keeps it: "" and false.
func (d *devCreds) ownerPassword(ctx context.Context, st *store.Store, owner string, now time.Time) (string, bool, error) {
	hash, err := st.OwnerPassword(ctx, owner)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return "", false, err
	}
	if err == nil {
		pw := d.Passwords[owner]
		if pw == "" {
			return "", false, nil
		}
		if ok, err := oauth.CheckPassword(hash, pw); !ok || err != nil {
			return "", false, nil
		}
		return pw, true, nil
	}
	pw := rand.Text()[:16]
	if hash, err = oauth.HashPassword(pw); err != nil {
		return "", false, err
	}
	if err := st.SetOwnerPassword(ctx, owner, hash, now.UTC()); err != nil {
		return "", false, err
	}
	d.Passwords[owner] = pw
	return pw, true, d.save()
}

// writeFileMode replaces p with data, with permissions perm, through a
// temporary file flushed to disk and renamed (renameio, as the outbox of
// live publishing): a killed dev never leaves half a file.
func writeFileMode(p string, data []byte, perm os.FileMode) error {
	return renameio.WriteFile(p, data, perm)
}
